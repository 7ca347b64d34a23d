"""Reshaping, transposing and indexing."""

import itertools
import operator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from yota_src.rules import adjoint, primitives

from .helpers import (
    along,
    cast,
    diagonal_back,
    full_index,
    index_order,
    pieces_of,
    reshape_back,
    selects_everything,
    split_back,
    sum_to_shape,
    unbroadcast,
    untile,
    zeros_like_input,
)


@adjoint(np.reshape)
def reshape(dy, y, a, shape=None, order="C", **kw):
    """The elements read in `order` are written back in it ('A' reads a's layout)."""
    da = reshape_back(dy, a, index_order(a, order))


@adjoint(np.ravel)
def ravel(dy, y, a, order="C"):
    """The elements read in `order` are written back in it ('A' and 'K' read a's layout)."""
    da = reshape_back(dy, a, index_order(a, order))


@adjoint(np.squeeze, np.expand_dims)
def reshaped(dy, y, a, axis=None):
    da = np.reshape(dy, np.shape(a))


@adjoint(primitives.T)
def T(dy, y, a):
    da = dy.T


@adjoint(np.transpose)
def transpose(dy, y, a, axes=None):
    if axes is None:
        da = np.transpose(dy)
    else:
        order = [axis % np.ndim(a) for axis in axes]
        da = np.transpose(dy, tuple(order.index(i) for i in range(len(order))))


@adjoint(np.swapaxes)
def swapaxes(dy, y, a, axis1, axis2):
    da = np.swapaxes(dy, axis1, axis2)


@adjoint(primitives.astype)
def astype(dy, y, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    da = cast(dy, a)


@adjoint(operator.getitem)
def getitem(dy, y, a, index):
    """Indexing scatters the gradient back; repeated indices accumulate. An
    index that only adds axes (`b[:, None]`) is a reshape."""
    if isinstance(a, (tuple, list)):
        da = [dy if i == index else None for i in range(len(a))]
    elif selects_everything(index):
        da = np.reshape(dy, np.shape(a))
    else:
        da = primitives.index_add(zeros_like_input(a), index, dy)


@adjoint(primitives.index_add)
def index_add(dy, y, buffer, index, values):
    dbuffer = dy
    dvalues = unbroadcast(dy[index], values)


@adjoint(primitives.index_update)
def index_update(dy, y, buffer, index, values):
    """`buffer[index] = values`: the overwritten elements pass no gradient back."""
    dbuffer = primitives.index_update(dy, index, 0.0)
    dvalues = unbroadcast(dy[index], values)


@adjoint(np.moveaxis)
def moveaxis(dy, y, a, source, destination):
    da = np.moveaxis(dy, destination, source)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast(dy, y, *arys):
    """Each array reshaped; several arrays give a tuple, each its gradient back."""
    if len(arys) == 1:
        darys = [np.reshape(dy, np.shape(arys[0]))]
    else:
        darys = [None if g is None else np.reshape(g, np.shape(a)) for g, a in zip(dy, arys)]


@adjoint(np.broadcast_to)
def broadcast_to(dy, y, array, shape):
    darray = unbroadcast(dy, array)


@adjoint(np.copy, np.asarray, np.array, np.ascontiguousarray, np.asfortranarray)
def copy(dy, y, a, dtype=None):
    """Also `np.array([a, b])` of traced values: each gets its slice back."""
    da = pieces_of(dy, a)


@adjoint(np.concatenate)
def concatenate(dy, y, arrays, axis=0):
    darrays = split_back(dy, arrays, axis)


@adjoint(np.stack)
def stack(dy, y, arrays, axis=0):
    darrays = [np.take(dy, i, axis=axis) for i in range(len(arrays))]


@adjoint(np.hstack)
def hstack(dy, y, tup):
    dtup = split_back(dy, [np.atleast_1d(t) for t in tup], 0 if np.ndim(y) == 1 else 1, tup)


@adjoint(np.vstack)
def vstack(dy, y, tup):
    dtup = split_back(dy, [np.atleast_2d(t) for t in tup], 0, tup)


@adjoint(np.dstack)
def dstack(dy, y, tup):
    dtup = split_back(dy, [np.atleast_3d(t) for t in tup], 2, tup)


@adjoint(np.column_stack)
def column_stack(dy, y, tup):
    columns = [np.reshape(t, (-1, 1)) if np.ndim(t) < 2 else t for t in tup]
    dtup = split_back(dy, columns, 1, tup)


@adjoint(np.split, np.array_split)
def split(dy, y, ary, indices_or_sections, axis=0):
    """The pieces' gradients joined back; an unused piece contributes zeros."""
    dary = join_pieces(dy, y, axis)


@adjoint(np.hsplit)
def hsplit(dy, y, ary, indices_or_sections):
    """np.split along the columns (the only axis of a vector)."""
    dary = join_pieces(dy, y, 1 if np.ndim(ary) > 1 else 0)


@adjoint(np.vsplit)
def vsplit(dy, y, ary, indices_or_sections):
    dary = join_pieces(dy, y, 0)


@adjoint(np.dsplit)
def dsplit(dy, y, ary, indices_or_sections):
    dary = join_pieces(dy, y, 2)


def join_pieces(dy, pieces, axis):
    """The gradients of split pieces joined along `axis`; zeros for unused ones."""
    return np.concatenate([g if g is not None else zeros_like_input(piece)
                           for g, piece in zip(dy, pieces)], axis=axis)


@adjoint(np.tile)
def tile(dy, y, A, reps):
    dA = untile(dy, A, reps)


@adjoint(np.repeat)
def repeat(dy, y, a, repeats, axis=None):
    flat = axis is None
    positions = np.repeat(np.arange(np.size(a) if flat else np.shape(a)[axis]), repeats)
    if flat:
        da = np.reshape(primitives.index_add(np.zeros(np.size(a), np.result_type(a)),
                                             positions, dy), np.shape(a))
    else:
        da = primitives.index_add(zeros_like_input(a), along(axis % np.ndim(a), positions), dy)


@adjoint(np.flip)
def flip(dy, y, m, axis=None):
    dm = np.flip(dy, axis)


@adjoint(np.fliplr)
def fliplr(dy, y, m):
    dm = np.fliplr(dy)


@adjoint(np.flipud)
def flipud(dy, y, m):
    dm = np.flipud(dy)


@adjoint(np.rot90)
def rot90(dy, y, m, k=1, axes=(0, 1)):
    dm = np.rot90(dy, -k, axes)


@adjoint(np.roll)
def roll(dy, y, a, shift, axis=None):
    da = np.roll(dy, tuple(-s for s in shift) if isinstance(shift, tuple) else -shift, axis)


@adjoint(np.pad)
def pad(dy, y, array, pad_width, mode="constant", constant_values=0, reflect_type="even",
        **kw):
    """Constant padding: the gradient is the middle again, and each constant
    gets the sum over the region it fills. 'edge', 'reflect', 'symmetric' and
    'wrap' fill with copies of the array's samples, axis by axis: the copies'
    gradients are added back onto the samples they copy. pad_width and
    constant_values are read as NumPy reads them (((1,), (2,)) pads axis 0 by
    1 and axis 1 by 2 on both sides), and pad_width may be a dict {axis: width
    or (before, after)}."""
    widths = pad_pairs(pad_width, np.ndim(array))
    if mode == "constant":
        darray = dy[tuple(slice(before, before + n) for (before, _), n in
                          zip(widths, np.shape(array)))]
    elif mode in ("edge", "reflect", "symmetric", "wrap") and reflect_type == "even":
        darray = dy
        for axis, ((before, after), n) in enumerate(zip(widths, np.shape(array))):
            darray = fold_copies(darray, axis, n, before, after, mode)
    else:
        raise NotImplementedError(
            f"the gradient of np.pad(mode={mode!r}"
            + (f", reflect_type={reflect_type!r}" if reflect_type != "even" else "")
            + ") is not provided; modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap' "
            "(with reflect_type='even') are")
    dconstant_values = constant_values_back(dy, array, widths, constant_values)


def pad_pairs(pad_width, ndim):
    """np.pad's widths as (before, after) for each axis, as NumPy reads them:
    a dict {axis: width or (before, after)} names some axes, the rest unpadded;
    anything else is read as by pair_layout."""
    if isinstance(pad_width, dict):
        pairs = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            pairs[axis] = (width, width) if np.ndim(width) == 0 else tuple(width)
        return [(int(before), int(after)) for before, after in pairs]
    layout = pair_layout(np.shape(pad_width))
    widths = np.ravel(pad_width)
    if layout == "one":
        return [(int(widths[0]), int(widths[0]))] * ndim
    if layout == "pair":
        return [(int(widths[0]), int(widths[1]))] * ndim
    return [(int(before), int(after)) for before, after in
            np.broadcast_to(np.asarray(pad_width), (ndim, 2)).tolist()]


def pair_layout(shape):
    """How np.pad reads an argument of this shape as (before, after) pairs for
    every axis (NumPy's `_as_pairs`): "one" number for both sides of every axis
    (`2`, `(2,)`, `((2,),)`); one "pair" for every axis (`(1, 2)`,
    `((1, 2),)`); else it is "broadcast" to (ndim, 2), so `((1,), (2,))` gives
    axis 0 the pair (1, 1) and axis 1 the pair (2, 2)."""
    size = int(np.prod(shape))
    if len(shape) < 3 and size == 1:
        return "one"
    if len(shape) < 3 and size == 2 and tuple(shape) != (2, 1):
        return "pair"
    return "broadcast"


def padding_sources(n, before, after, mode):
    """For each position along a padded axis, the sample of the n it copies."""
    sources = []
    for position in range(-before, n + after):
        if mode == "edge":
            source = min(max(position, 0), n - 1)
        elif mode == "wrap":
            source = position % n
        elif mode == "reflect":  # mirrored about the end samples: period 2n - 2
            source = 0 if n == 1 else position % (2 * n - 2)
            source = 2 * n - 2 - source if source >= n else source
        else:  # symmetric: mirrored about the ends, which repeat: period 2n
            source = position % (2 * n)
            source = 2 * n - 1 - source if source >= n else source
        sources.append(source)
    return sources


def copy_runs(sources, offset):
    """The positions `sources` covers, from `offset` on, as runs copying
    consecutive samples forwards (step 1), backwards (-1) or one sample over
    and over (0): (first position, end position, first sample, step)."""
    runs, start = [], 0
    while start < len(sources):
        end = start + 1
        step = sources[end] - sources[start] if end < len(sources) else 1
        step = step if step in (-1, 0, 1) else 1
        while end < len(sources) and sources[end] - sources[end - 1] == step:
            end = end + 1
        runs.append((offset + start, offset + end, sources[start], step))
        start = end
    return runs


def fold_copies(g, axis, n, before, after, mode):
    """The gradient of one padded axis, folded back onto its n samples."""
    if not before and not after:
        return g
    sources = padding_sources(n, before, after, mode)
    folded = g[along(axis, slice(before, before + n))]
    for start, end, first, step in (copy_runs(sources[:before], 0)
                                    + copy_runs(sources[before + n:], before + n)):
        part = g[along(axis, slice(start, end))]
        if step == 0:
            target, part = slice(first, first + 1), np.sum(part, axis=axis, keepdims=True)
        elif step == 1:
            target = slice(first, first + end - start)
        else:
            last = first - (end - start)
            target = slice(first, last if last >= 0 else None, -1)
        folded = primitives.index_add(folded, along(axis, target), part)
    return folded


def constant_values_back(dy, array, widths, constant_values):
    """The gradient of np.pad's constant values: each fills its side of its
    axis, over the axes before it padded and the axes after it not yet (so a
    corner belongs to the last axis), and gets that region's sum."""
    middle = [slice(before, before + n) for (before, _), n in zip(widths, np.shape(array))]
    sums = []
    for axis, (before, after) in enumerate(widths):
        end = np.shape(dy)[axis]
        sums.append([np.sum(dy[tuple([slice(None)] * axis + [side] + middle[axis + 1:])])
                     for side in (slice(0, before), slice(end - after, end))])
    layout = pair_layout(np.shape(constant_values))
    if layout == "one":
        g = sum(side for pair in sums for side in pair)
        g = g if np.ndim(constant_values) == 0 else np.reshape(g, np.shape(constant_values))
    elif layout == "pair":
        g = np.reshape(np.array([sum(pair[0] for pair in sums), sum(pair[1] for pair in sums)]),
                       np.shape(constant_values))
    else:
        g = sum_to_shape(np.array(sums), np.shape(constant_values))
    return pieces_of(g, constant_values)


@adjoint(sliding_window_view)
def sliding_window(dy, y, x, window_shape, axis=None, *, subok=False, writeable=False):
    """Element k of window i is sample i + k: each offset's slice of the
    gradient is added back onto the samples it shows."""
    windows = (window_shape,) if np.ndim(window_shape) == 0 else tuple(window_shape)
    if axis is None:
        axes = tuple(range(np.ndim(x)))
    else:
        axes = tuple(a % np.ndim(x) for a in (axis if isinstance(axis, (tuple, list))
                                               else (axis,)))
    counts = np.shape(y)[:np.ndim(x)]
    dx = zeros_like_input(x)
    for offsets in itertools.product(*(range(w) for w in windows)):
        shift = [0] * np.ndim(x)
        for a, offset in zip(axes, offsets):
            shift[a] = shift[a] + offset
        target = tuple(slice(None) if count == n else slice(s, s + count)
                       for s, count, n in zip(shift, counts, np.shape(x)))
        dx = primitives.index_add(dx, target, dy[(Ellipsis,) + offsets])


@adjoint(np.compress)
def compress(dy, y, condition, a, axis=None, out=None):
    """The entries where `condition` holds (piecewise constant), scattered back."""
    positions = np.flatnonzero(condition)
    if axis is None:
        da = np.reshape(primitives.index_add(np.zeros(np.size(a), np.result_type(a)),
                                             positions, dy), np.shape(a))
    else:
        da = primitives.index_add(zeros_like_input(a), along(axis % np.ndim(a), positions), dy)


@adjoint(np.triu)
def triu(dy, y, m, k=0):
    dm = np.triu(dy, k)


@adjoint(np.tril)
def tril(dy, y, m, k=0):
    dm = np.tril(dy, k)


@adjoint(np.diag)
def diag(dy, y, v, k=0):
    """A vector becomes a matrix's diagonal and back."""
    if np.ndim(v) == 1:
        dv = np.diag(dy, k)
    else:
        dv = diagonal_back(dy, v, k, 0, 1)


@adjoint(np.diagonal)
def diagonal(dy, y, a, offset=0, axis1=0, axis2=1):
    da = diagonal_back(dy, a, offset, axis1, axis2)


@adjoint(np.trace)
def trace(dy, y, a, offset=0, axis1=0, axis2=1):
    da = diagonal_back(np.expand_dims(dy, -1) * np.ones(np.shape(np.diagonal(
        a, offset, axis1, axis2))), a, offset, axis1, axis2)


@adjoint(np.take)
def take(dy, y, a, indices, axis=None):
    if axis is None:
        da = np.reshape(primitives.index_add(np.zeros(np.size(a), np.result_type(a)),
                                             indices, dy), np.shape(a))
    else:
        da = primitives.index_add(zeros_like_input(a), along(axis % np.ndim(a), indices), dy)


@adjoint(np.take_along_axis)
def take_along_axis(dy, y, arr, indices, axis):
    """Each read element gets its gradient back, summed where read twice or
    where the indices stretched an axis of 1; `axis=None` reads the flat array."""
    if axis is None:
        flat = primitives.index_add(np.zeros(np.size(arr), np.result_type(arr)), indices, dy)
        darr = np.reshape(flat, np.shape(arr))
    else:
        darr = primitives.index_add(zeros_like_input(arr),
                                    full_index(indices, axis, np.shape(arr)), dy)


@adjoint(np.sort)
def sort(dy, y, a, axis=-1, kind=None, order=None):
    """Sorting permutes: the gradient goes back through the inverse permutation."""
    if axis is None:
        da = np.reshape(np.take_along_axis(dy, np.argsort(np.argsort(np.ravel(a))), 0),
                        np.shape(a))
    else:
        da = np.take_along_axis(dy, np.argsort(np.argsort(a, axis=axis), axis=axis), axis)


@adjoint(np.extract)
def extract(dy, y, condition, arr):
    """The entries of arr where condition holds, in order (the condition is
    piecewise constant)."""
    darr = np.reshape(primitives.index_add(np.zeros(np.size(arr), np.result_type(arr)),
                                           np.flatnonzero(condition), dy), np.shape(arr))


@adjoint(np.unique)
def unique(dy, y, ar, return_index=False, return_inverse=False, return_counts=False,
           axis=None, **kw):
    """Distinct values are the sorted entries; where two entries are equal, a
    perturbation would split them, so there is no gradient."""
    tuple_valued = return_index or return_inverse or return_counts
    dar = unique_values_gradient(dy, y, ar, axis, kw.get("sorted", True), tuple_valued)


def unique_values_gradient(dy, y, ar, axis, ordered, tuple_valued):
    values = y[0] if tuple_valued else y
    dvalues = dy[0] if tuple_valued else dy
    if axis is not None or not ordered:
        raise NotImplementedError("the rule for np.unique covers axis=None, sorted=True")
    if np.size(values) != np.size(ar):
        raise NotImplementedError("np.unique of an array with repeated values has no gradient: "
                                  "a perturbation would split the repeats")
    if dvalues is None:
        return zeros_like_input(ar)
    order = np.argsort(np.ravel(ar))
    return np.reshape(primitives.index_add(np.zeros(np.size(ar), np.result_type(ar)), order,
                                           dvalues), np.shape(ar))


@adjoint(np.float64, np.float32, np.float16, np.longdouble)
def scalar_type(dy, y, x):
    """np.float64(x): a cast; x gets the gradient in its own dtype."""
    dx = cast(dy, x)
