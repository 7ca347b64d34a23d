"""A small host sample of arguments holding Dask arrays, to trace on.

A Dask array may hold more than the client's memory, and the trace needs
only values of the right dtype and rank, with sizes that relate as the
real ones do. So each size of a Dask array's axes above SMALLEST is taken
down: as a multiple of the sizes' common divisor where that gives a small
sample (sizes of `N` and `2 * N` rows stay twice one another), else, in
order, to the least size above the ones below it (equal sizes alike,
distinct ones apart, none passing another); a NumPy array's size that is a
multiple of one of them is cut with them. Every array is cut to those sizes
along its axes of them (a NumPy array beside the data too), and what is cut
from Dask is computed: its first rows, a few kilobytes.

The arrays cut from Dask arrays are `DaskSample`s, NumPy arrays that say
where they came from, so that the module traced on them takes Dask arrays
there; it reads its sizes at run time (build refuses one that cannot), and
serves the whole arrays.
"""

from __future__ import annotations

import math

import numpy as np

from yota_src.core.values import DaskSample, flatten, is_array, is_dask, rebuild

SMALLEST = 64  # a size at most this is traced as it is
SCALED = 1024  # the largest size a sample keeping the data's sizes' ratios may have

__all__ = ["DaskSample", "SCALED", "SMALLEST", "is_dask", "marked", "marking", "sampled"]


def sampled(args: tuple) -> tuple:
    """`args` with every array cut to the sample's sizes, the Dask ones
    computed as DaskSamples; anything else as it is."""
    cut = _sample_sizes(args)

    def leaf(_path, value):
        if not is_array(value):
            return value
        part = value[tuple(slice(0, cut.get(size, size)) for size in value.shape)]
        if is_dask(value):
            return np.asarray(part.compute()).view(DaskSample)
        return part.copy() if part is not value else value

    return tuple(rebuild(arg, leaf) for arg in args)


def _sample_sizes(args: tuple) -> dict[int, int]:
    """Each size a Dask array's axis has above SMALLEST -> its sample's."""
    arrays = [leaf for arg in args for _, leaf in flatten(arg) if is_array(leaf)]
    large = {int(size) for leaf in arrays if is_dask(leaf) for size in leaf.shape
             if size > SMALLEST}
    if not large:
        return {}
    sizes = {int(size) for leaf in arrays for size in leaf.shape}
    large |= {size for size in sizes if any(size % each == 0 for each in large)}  # (`N * T`)
    kept = sizes - large
    return _scaled(large, kept) or _ranked(large, kept)


def _scaled(large: set, kept: set) -> dict[int, int] | None:
    """The sizes cut as multiples of their greatest common divisor, the
    least above every size kept below it: products relate in the sample as
    in the data (`z` of `2 * N` rows, a reshape to `(N * T, D)`). None where
    that leaves a size larger than SCALED, or makes it equal to one kept."""
    unit = math.gcd(*large)
    least = min(large) // unit
    floor = max([SMALLEST, *(size for size in kept if size < min(large))])
    factor = floor // least + 1
    cut = {size: size // unit * factor for size in large}
    if max(cut.values()) > SCALED or set(cut.values()) & kept \
            or any(new > size for size, new in cut.items()):
        return None
    return cut


def _ranked(large: set, kept: set) -> dict[int, int]:
    """The sizes cut, in order, each to the least size above every size
    below it: equal ones alike, distinct ones apart, none passing another."""
    cut, below = {}, SMALLEST
    for size in sorted(large | {size for size in kept if size > SMALLEST}):
        cut[size] = below + 1 if size in large else size  # (a size kept is itself)
        below = cut[size]
    return {size: new for size, new in cut.items() if size in large}


def marked(args: tuple) -> frozenset:
    """Where `args` hold Dask arrays or their samples: (index, path) pairs."""
    return frozenset((index, path) for index, arg in enumerate(args)
                     for path, leaf in flatten(arg)
                     if is_dask(leaf) or isinstance(leaf, DaskSample))


def marking(args: tuple, where: frozenset) -> tuple:
    """`args` (NumPy arrays made like a sample: a probe at other sizes) with
    the arrays at `where` marked as samples of Dask arrays."""
    return tuple(rebuild(arg, lambda path, leaf, index=index: leaf.view(DaskSample)
                         if (index, path) in where and isinstance(leaf, np.ndarray) else leaf)
                 for index, arg in enumerate(args))
