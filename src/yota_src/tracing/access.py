"""Attribute and item access while unrolling: `obj.name`, `obj[index]`,
`obj[index] = value`, iteration and length, on traced and static values.
What is read from outside the arguments goes through the outside reads;
what is written into a traced array, through the writes."""

from __future__ import annotations

import functools
import operator
import types

import gast
import numpy as np

from yota_src.core import distributions, primitives
from yota_src.core.values import ATTR, ITEM, is_array
from yota_src.errors import MutationError, UnsupportedSyntaxError
from yota_src.ir.dims import Count, Dim, pinned
from yota_src.tracing.array_methods import ArrayMethod
from yota_src.tracing.counts import Position
from yota_src.tracing.ownership import inlinable
from yota_src.tracing.row_lists import RowList, as_rows, row_list
from yota_src.tracing.traced import Traced, give_name, has_traced

SEQUENCES = (list, tuple, str, range)  # indexed by position: a traced index is an int


class Access:
    """Attributes, items, iteration and lengths of values."""

    def __init__(self, unroller):
        self.unroller = unroller

    # -- attributes -----------------------------------------------------------------

    def attribute(self, obj, name: str, node, frame):
        """`obj.name`. What comes from outside the call is a dependency: any
        attribute of an outside object, and an attribute found on the class of
        any object (a method, a class constant), since the class is outside."""
        if isinstance(obj, Traced):
            return self.traced_attribute(obj, name, node, frame)
        if isinstance(obj, RowList) and not hasattr(list, name):  # as the caller's list
            raise AttributeError(f"'list' object has no attribute {name!r}")
        unroller = self.unroller
        frozen = distributions.mirror(obj)  # a global prior = norm(0, 1): prior.logpdf(x)
        if frozen is not None and callable(getattr(obj, name, None)):
            frozen.parameters = {
                key: unroller.recorder.lift(value, key, unroller.loc) if is_array(value)
                else value for key, value in frozen.parameters.items()}
            return getattr(frozen, name)  # its arrays read live, named after their parameter
        outside = unroller.outside_reads
        if isinstance(obj, super):  # super().forward: a class's attribute
            outside.depend_on_super(obj, name)
        owner = None
        if not isinstance(obj, (types.ModuleType, type, super)):
            owner = next((klass for klass in type(obj).__mro__ if name in klass.__dict__), None)
            found = owner.__dict__[name] if owner is not None else None
            if isinstance(found, property) and inlinable(found.fget):
                outside.depend_on_class(owner, name, type(obj))
                return unroller.calls.inline_function(found.fget, (obj,), {}, node, frame)
            if name in (getattr(obj, "__dict__", None) or ()):
                owner = None  # the instance's own attribute
        value = getattr(obj, name)
        unroller.writes.read_back(obj, (ATTR, name), value)
        return outside.read_attribute(obj, name, value, owner)

    def traced_attribute(self, x: Traced, name: str, node, frame):
        value = x.value
        if name in ("shape", "ndim", "size", "dtype"):
            if name in ("shape", "size"):
                self.read_length(x)
            if name == "shape" and x.op.dims is not None:
                return x.op.dims  # sizes read at run time (ir/dims.py)
            if name == "size" and x.op.dims is not None:
                return functools.reduce(operator.mul, x.op.dims, 1)
            return getattr(np.asarray(value), name) if name != "dtype" else np.result_type(value)
        if name == "T":
            return self.unroller.primitive(primitives.T, (x,), {})
        if name in ("real", "imag"):
            return self.unroller.primitive(getattr(np, name), (x,), {})
        if isinstance(value, tuple) and hasattr(value, "_fields") and name in value._fields:
            return self.unroller.primitive(operator.getitem, (x, value._fields.index(name)), {})
        if isinstance(value, str) and callable(getattr(str, name, None)):
            return functools.partial(getattr(str, name), x)  # `s.upper()` is str.upper(s)
        if callable(getattr(value, name, None)):
            return ArrayMethod(x, name)
        raise UnsupportedSyntaxError(f"the attribute .{name} of a traced value is not supported",
                                     self.unroller.location_of(node, frame))

    def python_method(self, obj, name: str):
        """`type(obj).name` where it is a Python function of the user's (a
        `__getitem__`, `__call__` or `__len__` to unroll), else None."""
        if isinstance(obj, (Traced, type, types.ModuleType, types.FunctionType)):
            return None
        owner = next((klass for klass in type(obj).__mro__ if name in klass.__dict__), None)
        method = owner.__dict__[name] if owner is not None else None
        if not isinstance(method, types.FunctionType) or not inlinable(method):
            return None
        self.unroller.outside_reads.depend_on_class(owner, name, type(obj))
        return method

    # -- items ----------------------------------------------------------------------

    def subscript(self, obj, index, node, frame):
        unroller = self.unroller
        if isinstance(obj, RowList):  # a list argument read as one array: its rows
            if isinstance(index, slice):
                return row_list(unroller, self.subscript(obj.rows, index, node, frame))
            if isinstance(index, (int, np.integer, Dim)) and not isinstance(index, bool):
                return self.subscript(obj.rows, index, node, frame)
        if isinstance(obj, Traced):
            if isinstance(obj.value, (tuple, list)):
                index = unroller.decisions.concretize(index, operator.index, node, frame)
            result = unroller.primitive(operator.getitem, (obj, index), {})
            if _is_mask_index(index) and result.op.depends:
                unroller.decisions.concretize(result, np.shape, node, frame)  # the count is data
                counts = mask_counts(result.op)
                if counts:  # a size read at run time: the guard stays only where it is pinned
                    unroller.recorder.ops[-1].sizes = counts
            return result
        method = self.python_method(obj, "__getitem__")
        if method is not None:  # a class of the user's: its __getitem__ is unrolled
            return unroller.calls.inline_function(method, (obj, index), {}, node, frame)
        if has_traced(index):
            if is_array(obj):
                return unroller.primitive(operator.getitem, (obj, index), {})
            if not isinstance(obj, SEQUENCES):  # a dict looks the key's value up
                found = unroller.natively(node, frame, operator.getitem, obj, index)
                return unroller.outside_reads.part_of(obj, found, None)
            index = unroller.decisions.concretize(index, operator.index, node, frame)
        index = pinned(index)  # a size choosing an item: the code needs that size
        found = obj[index]
        if not isinstance(index, slice):
            unroller.writes.read_back(obj, (ITEM, index), found)
        return unroller.outside_reads.part_of(obj, found, index)

    def store_item(self, container, index, value, target, frame) -> None:
        """`container[index] = value`, the container and index evaluated."""
        unroller = self.unroller
        if isinstance(container, Traced):
            unroller.writes.store(container, index, value, target, frame)
            if isinstance(target.value, gast.Name) and unroller.user_code:
                give_name(container, target.value.id)
            return
        if is_array(container):
            raise MutationError("in-place change of an array the function did not create",
                                unroller.location_of(target, frame),
                                hint="Copy it into a local array first.")
        if isinstance(container, SEQUENCES) and isinstance(index, Traced):
            index = unroller.decisions.concretize(index, operator.index, target.slice, frame)
        if isinstance(index, (Traced, slice)):  # a key from the data, or several items
            unroller.outside_reads.refuse_write(container, target, frame)
        else:
            unroller.writes.into_argument(container, (ITEM, index), value, target, frame)
        # a dict stores under the key's value, a traced key kept as it is
        unroller.natively(target, frame, operator.setitem, container, index, value)

    # -- iteration and length ------------------------------------------------------------

    def iterate(self, value, node, frame) -> list:
        return list(self.items(value, node, frame))

    def items(self, value, node, frame, header: bool = False):
        """Iterate as Python does, one item at a time: a generator advances
        only as far as it is consumed (a `for` loop's body runs in between),
        and a traced array's row is read in the iteration that uses it
        (`header`: a loop whose count may be the array's length)."""
        value = as_rows(value)
        if isinstance(value, Traced):
            if isinstance(value.value, (str, bytes)):  # its length is data
                count = self.unroller.decisions.concretize(value, len, node, frame)
            else:
                count = len(value.value) if isinstance(value.value, (tuple, list)) else (
                    np.shape(value.value)[0] if np.ndim(value.value) else None)
            if count is None:
                where = self.unroller.location_of(node, frame)
                raise TypeError("iteration over a 0-d value" + (f" at {where.short}" if where
                                                                  else ""))
            length = value.op.dims[0] if value.op.dims else None
            if not header:
                self.read_length(value)
                if isinstance(length, Dim):  # as many items as the example's
                    pinned(length)
            last = length - 1 if header and isinstance(length, Dim) else None
            for i in range(count):  # a loop's rows, up to its last (counts.Position)
                yield self.subscript(value, i if last is None else Position(i, last), node,
                                     frame)
            return
        outside = self.unroller.outside_reads
        outside.depend_on_contents(value)
        if isinstance(value, dict):
            for key in value:
                yield outside.part_of(value, key, None)
        else:
            for i, item in enumerate(value):
                yield outside.part_of(value, item, i)

    def length(self, value: Traced) -> int:
        """len() of a traced value: static for arrays, data for text."""
        if isinstance(value.value, str):
            return self.unroller.decisions.decide(value, len)
        self.read_length(value)
        return len(value.value)

    def read_length(self, value) -> None:
        """The length of an array argument was read: a count the code takes
        from it is folded (counts.py)."""
        watch = self.unroller.lengths.get(value.op) if isinstance(value, Traced) else None
        if watch is not None:
            watch[1].used = True


def _is_mask_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(item, Traced) and np.result_type(item.value) == np.bool_
               and np.ndim(item.value) > 0 for item in items)


def mask_counts(op) -> tuple:
    """The counts of masks (ir/dims.Count) among an op's sizes."""
    for size in op.dims or ():
        if isinstance(size, Dim):
            return tuple(symbol for monomial in size.facts.terms(size) for symbol in monomial
                         if isinstance(symbol, Count))
    return ()
