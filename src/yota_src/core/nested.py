"""The one walk over nested values: tuples (a namedtuple keeps its type),
lists, dicts and slices, down to leaves.

Op arguments (`np.concatenate((a, b))`, an index `(i, slice(0, n))`), the
output of a tape, and traced values handed to primitives are all such
structures; every module that looks inside one (the recorder turning traced
values into ops, the tape playing itself, passes comparing operands, the
values a template computes on) walks it here, so they agree on what is a
container and what comes back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def map_leaves(structure, fn: Callable[[Any], Any], is_leaf: Callable[[Any], bool]):
    """The structure rebuilt, with `fn(leaf)` for each leaf `is_leaf` picks
    and everything else (numbers, strings, arrays) as it is."""
    if is_leaf(structure):
        return fn(structure)
    if isinstance(structure, tuple):
        items = [map_leaves(item, fn, is_leaf) for item in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)
    if isinstance(structure, list):
        return [map_leaves(item, fn, is_leaf) for item in list.__iter__(structure)]
    if isinstance(structure, dict):  # a dict subclass comes back as a dict, in its order
        return {key: map_leaves(item, fn, is_leaf) for key, item in structure.items()}
    if isinstance(structure, slice):
        return slice(*(map_leaves(part, fn, is_leaf)
                       for part in (structure.start, structure.stop, structure.step)))
    return structure


def leaves(structure, is_leaf: Callable[[Any], bool]) -> Iterator:
    """The leaves `is_leaf` picks inside a structure, in order (collected in
    one walk: every pass asks this of every op's operands)."""
    found: list = []
    _collect(structure, is_leaf, found)
    return iter(found)


def _collect(structure, is_leaf: Callable[[Any], bool], found: list) -> None:
    if is_leaf(structure):
        found.append(structure)
    elif isinstance(structure, tuple):
        for item in structure:
            _collect(item, is_leaf, found)
    elif isinstance(structure, list):  # (its own items: a list that counts its reads, too)
        for item in list.__iter__(structure):
            _collect(item, is_leaf, found)
    elif isinstance(structure, dict):
        for item in structure.values():
            _collect(item, is_leaf, found)
    elif isinstance(structure, slice):
        for part in (structure.start, structure.stop, structure.step):
            _collect(part, is_leaf, found)


def shape_of(structure, leaf: Callable[[Any], Any]):
    """A hashable picture of the structure: containers by type, leaves by
    `leaf(value)`; equal pictures mean the same structure and leaves."""
    if isinstance(structure, tuple):
        return (type(structure),) + tuple(shape_of(item, leaf) for item in structure)
    if isinstance(structure, list):
        return (type(structure),) + tuple(shape_of(item, leaf)
                                          for item in list.__iter__(structure))
    if isinstance(structure, dict):
        return (dict,) + tuple((key, shape_of(item, leaf)) for key, item in structure.items())
    if isinstance(structure, slice):
        return (slice,) + tuple(shape_of(part, leaf) for part in
                                (structure.start, structure.stop, structure.step))
    return leaf(structure)
