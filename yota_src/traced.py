"""Values while unrolling: `Traced` pairs a tape op with its example value.

Everything else the unroller handles is a plain Python object (static).
"""

from __future__ import annotations

import numpy as np

from .errors import UnsupportedSyntaxError
from .tape import Op, leaves_of


class Traced:
    """A value the result depends on: its op on the tape and its example value."""

    __slots__ = ("op", "value")

    def __init__(self, op: Op, value):
        self.op = op
        self.value = value

    def __repr__(self) -> str:
        return f"Traced({self.op.describe_type()})"

    def __format__(self, spec: str) -> str:
        # Only code yota-src runs natively gets here: its text would be frozen
        # (or read "Traced(...)"), so it is refused.
        raise UnsupportedSyntaxError(
            "a value computed from the arguments was turned into text by code that runs "
            "only while tracing", hint="Format it in the differentiated function itself "
            "(an f-string, str(), format() or print()), where it is recorded.")

    def __str__(self) -> str:
        return self.__format__("")


def traced_in(structure):
    """The traced values inside a nested structure, in order."""
    return leaves_of(structure, Traced)


def has_traced(structure) -> bool:
    return next(traced_in(structure), None) is not None


def values_of(structure):
    """The example values inside a nested structure of traced values."""
    if isinstance(structure, Traced):
        return structure.value
    if isinstance(structure, tuple):
        items = (values_of(item) for item in structure)
        return type(structure)._make(items) if hasattr(structure, "_fields") else tuple(items)
    if isinstance(structure, list):
        return [values_of(item) for item in structure]
    if isinstance(structure, dict) and type(structure) is dict:
        return {key: values_of(item) for key, item in structure.items()}
    if isinstance(structure, slice):
        return slice(values_of(structure.start), values_of(structure.stop),
                     values_of(structure.step))
    return structure


def describe_value(value) -> tuple:
    """(shape, dtype) of a primitive's result; a tuple of arrays (np.split,
    np.linalg.qr) has no shape, and the dtype its elements share."""
    if isinstance(value, (str, bytes)):  # np.result_type would read "f8" as a dtype
        return (), np.dtype(type(value))
    if isinstance(value, (tuple, list)):
        try:
            return None, np.result_type(*value) if value else None
        except (TypeError, ValueError):
            return None, None
    try:
        return np.shape(value), np.result_type(value)
    except (TypeError, ValueError):
        return None, None
