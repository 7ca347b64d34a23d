"""A list argument read as the rows of one array (core.values.Rows).

The function receives a real list (a `RowList`) of the stack's rows, so
that whatever it does with a list behaves as a list: `isinstance`, `+`,
`*`, unpacking, printing. Where the length would otherwise become a number
in the code, the interpreter reads the list as the stack instead: a `for`
loop, `zip` and `enumerate` go over its rows (and roll with a count read at
run time), `len` is a size, `xs[t]` and `xs[-1]` index the stack and
`xs[a:b]` slices it, and NumPy takes the stack where it would convert the
list to an array anyway (`np.sum(xs, axis=0)`, `W @ xs`, `np.stack(xs)`).
Anything else that reads the list itself (Python's own iteration,
`len(list(xs))`, `xs + ys`, `np.vstack(xs)`) pins its length: the module is
made for the example's length. A change to the list or to one of its arrays
(`append`, `xs[0] = v`, `xs[0] += 1`), an item stored into an argument, or
an item's identity (`x is xs[-1]`) raises NotStacked, and the trace is made
again with each of the list's arrays a leaf of its own, as the caller's
arrays are objects apart (api/pipeline.py).
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import operators
from yota_src.errors import YotaError
from yota_src.ir.dims import Dim, pinned
from yota_src.tracing.traced import Traced


class NotStacked(YotaError):
    """The function needs a list argument's arrays as objects apart (it changes
    them, stores one, asks one's identity): it is traced again with them as
    leaves of their own."""


class RowList(list):
    """The list a function receives for a Rows leaf: the rows of `rows`.

    What the interpreter reads as the stack never asks the list itself; what
    does (Python's own iteration, `len`, indexing, `+`, `*`, comparisons,
    copies: `list(xs)`, `len(list(xs))`, `xs + ys`) learns how many items it
    holds, so the length is pinned first: the module is made for the
    example's length, and a decision taken from it holds."""

    __slots__ = ("rows",)

    def __init__(self, rows: Traced, items: list):
        super().__init__(items)
        self.rows = rows

    @property
    def __class__(self):  # `xs.__class__ is list`, as the caller's list
        return list

    def _changed(self, *args, **kwargs):
        raise NotStacked("a list argument read as one array is changed")

    append = extend = insert = pop = remove = clear = sort = reverse = _changed
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _changed

    def pin(self) -> None:
        """The number of items is read: the code is for the example's length."""
        length = self.rows.op.dims[0] if self.rows.op.dims else None
        if isinstance(length, Dim):
            pinned(length)


def _pinning(name: str):
    method = getattr(list, name)

    def read(self, *args, **kwargs):
        self.pin()
        return method(self, *args, **kwargs)
    read.__name__ = name
    return read


for _name in ("__iter__", "__len__", "__getitem__", "__reversed__", "__contains__", "index",
              "count", "copy", "__add__", "__mul__", "__rmul__", "__eq__", "__ne__", "__lt__",
              "__le__", "__gt__", "__ge__", "__reduce_ex__", "__reduce__", "__repr__"):
    setattr(RowList, _name, _pinning(_name))


def row_list(unroller, rows: Traced) -> RowList:
    """The list of `rows`' rows, each read from it (unread ones are dead
    code). Reading row i would decide that the length is above i; an item
    is read natively only where the number of items is (RowList.pin), so no
    such decision is taken."""
    unroller.recorder.stacks.add(rows.op)
    return RowList(rows, unroller.recorder.rows(rows))


def pin_all(structure) -> None:
    """Pin each RowList in `structure`: native code reads its items as they are."""
    if isinstance(structure, RowList):
        structure.pin()
    elif isinstance(structure, (tuple, list)):
        for item in (list.__iter__(structure) if isinstance(structure, list) else structure):
            pin_all(item)
    elif isinstance(structure, dict):
        for item in structure.values():
            pin_all(item)


def a_row(value) -> bool:
    """A value read from a list argument read as one array (a row of its stack)."""
    return isinstance(value, Traced) and getattr(value.op, "fn", None) is operator.getitem \
        and value.op.args[0] in value.unroller.recorder.stacks


def refuse_identity(*values) -> None:
    """`x is xs[-1]`, `id(x)`: the caller's arrays are objects apart, a row of
    the stack a new view each time it is read, so identity is asked of them."""
    if any(map(a_row, values)):
        raise NotStacked("the identity of an item of a list argument read as one array")


def as_rows(value):
    """A RowList as the stack it reads; anything else as it is."""
    return value.rows if isinstance(value, RowList) else value


# NumPy functions whose list argument is a sequence of arrays, not one array
# (`np.concatenate(xs)` joins the items): they read the rows one by one.
_SEQUENCES = frozenset(filter(None, (
    np.concatenate, np.vstack, np.hstack, np.dstack, np.column_stack,
    getattr(np, "row_stack", None), np.block, np.einsum, np.broadcast_arrays, np.meshgrid,
    np.ix_, np.linalg.multi_dot, np.select, np.piecewise, np.lexsort, np.choose,
    np.savez, np.savez_compressed)))


def arrays_for(unroller, fn, args: tuple, kwargs: dict):
    """(args, kwargs) of a primitive with each RowList the stack, where the
    function reads a list as the array NumPy makes of it; or, for
    `np.stack(xs)`, the traced result itself (a Traced)."""
    lists = [value for value in (*args, *kwargs.values()) if isinstance(value, RowList)]
    if fn in _SEQUENCES or fn is np.stack and not (
            args and lists[0] is args[0] and set(kwargs) <= {"axis"} and len(args) <= 2) \
            or fn in operators.SYMBOLS and not all(map(_array_operand, args)) \
            or not all(map(_some_rows, lists)):  # NumPy makes an empty list no rows
        for each in lists:  # its items, one by one: `xs + ys` joins lists
            each.pin()
        return args, kwargs
    for each in lists:
        if isinstance(length := each.rows.op.dims[0] if each.rows.op.dims else None, Dim):
            unroller.dims.require(length, operator.gt, 0)  # else NumPy has no rows to stack
    if fn is np.stack:
        axis = args[1] if len(args) > 1 else kwargs.get("axis", 0)
        stacked = unroller.primitive(np.array, (args[0].rows,), {})
        return stacked if axis == 0 else unroller.primitive(np.moveaxis, (stacked, 0, axis), {})
    return tuple(map(as_rows, args)), {key: as_rows(value) for key, value in kwargs.items()}


def _some_rows(value: RowList) -> bool:
    return len(value.rows.value) > 0


def _array_operand(value) -> bool:
    return isinstance(value, (RowList, np.ndarray)) or isinstance(value, Traced) and isinstance(
        value.value, np.ndarray)
