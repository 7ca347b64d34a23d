"""The store behind `ys.grad`: compiled gradients by specialisation, and a
quick way back to them for the call a training loop makes every step.

The full key (`structs.signature_key`) walks every argument through the
struct machinery and hashes nested tuples: about 1 µs per array and 8 µs for
a small struct, several times the cost of the generated code on small
inputs. `quick_key` reads the same facts (types, shapes, dtypes, the values
of static leaves, the attribute names of plain objects) straight off the
arguments, so that a hit costs a few hundred nanoseconds. It is sound by
construction: two calls with equal quick keys have equal full keys. Where it
cannot promise that (a class with slots or descriptors, a NumPy scalar, an
enum), it gives up and the full key is computed.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .structs import kind_of


class _NoQuickKey(Exception):
    """An argument the quick key does not describe: use the full key."""


_STATIC = (int, bool, str, type(None))
_plain_classes: dict[type, bool] = {}


def _is_plain(cls: type) -> bool:
    """Objects of `cls` are described by their `__dict__` alone: a Python
    class without slots, properties or attribute hooks, which the struct
    machinery walks field by field exactly as its `__dict__` lists them."""
    known = _plain_classes.get(cls)
    if known is None:
        klasses = cls.__mro__[:-1]
        known = all(
            "__slots__" not in vars(klass) and "__getattr__" not in vars(klass)
            and "__getattribute__" not in vars(klass)
            and not any(hasattr(attribute, "__set__") or hasattr(attribute, "__delete__")
                        for name, attribute in vars(klass).items()
                        if name not in ("__dict__", "__weakref__"))
            for klass in klasses)
        try:
            known = known and kind_of(object.__new__(cls)) == "struct"
        except TypeError:  # a class that cannot be made without its constructor
            known = False
        _plain_classes[cls] = known
    return known


def _describe(value, out: list) -> None:
    """Append what the full key holds of `value` to the flat list `out`:
    flat, because building one tuple costs less than nesting many."""
    cls = type(value)
    if cls is np.ndarray:  # a shape is a tuple, which no other kind appends
        out.append(value.shape)
        out.append(value.dtype)
    elif cls is float:
        out.append(cls)
    elif cls in _STATIC:
        out += (cls, value)
    elif cls is list or cls is tuple:
        out += (cls, len(value))
        for item in value:
            _describe(item, out)
    elif cls is dict or _is_plain(cls):
        fields = value if cls is dict else value.__dict__
        out += (cls, len(fields))
        out += fields  # the keys, in order
        for item in fields.values():
            _describe(item, out)
    else:
        raise _NoQuickKey


def quick_key(target: tuple, args: tuple):
    """A hashable key for `args` (with `target`: the function, wrt and loop
    options) or None where the full key must be computed."""
    out = list(target)
    try:
        for arg in args:
            _describe(arg, out)
    except (_NoQuickKey, RecursionError):
        return None
    return tuple(out)


class GradientCache:
    """Compiled variants by full key; a variant list is shared by every quick
    key that leads to it, so dropping a stale variant drops it for all."""

    def __init__(self):
        self.variants: dict[Any, list] = {}
        self.quick: dict[Any, list] = {}
        self.lock = threading.Lock()

    def clear(self) -> None:
        with self.lock:
            self.variants.clear()
            self.quick.clear()

    def values(self):
        return self.variants.values()

    def items(self):
        return self.variants.items()
