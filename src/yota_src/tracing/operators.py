"""Python's operators applied to values while unrolling: recorded where a
traced value takes part; for objects of the user's classes, their special
methods (`__matmul__`, `__radd__`, `__iadd__`, `__lt__`, ...) unrolled, in
the order Python tries them."""

from __future__ import annotations

import operator
import types

import numpy as np

from yota_src.errors import SourceUnavailableError
from yota_src.ir.dims import decide_equal, has_dims, pinned
from yota_src.tracing.ownership import holds_traced, inlinable, module_of, user_instance
from yota_src.tracing.source import function_source
from yota_src.tracing.traced import Traced, has_traced

_ORDERINGS = (operator.lt, operator.le, operator.gt, operator.ge)
_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_OPERATOR_NAMES = {"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow",
                   "lshift", "rshift", "and", "or", "xor"}


class Operators:
    """Binary operators, in-place ones asked for by native code, and the
    special methods of the user's classes."""

    def __init__(self, unroller):
        self.unroller = unroller

    def binary(self, fn, left, right):
        if (user_instance(left) or user_instance(right)) and holds_traced((left, right)):
            result = self.user_operator(fn, left, right)
            if result is not NotImplemented:
                return result
        if isinstance(left, Traced) or isinstance(right, Traced):
            return self.unroller.primitive(fn, (left, right), {})
        if fn in (operator.eq, operator.ne) and self.unroller.user_code:
            # sizes compared in the user's code: a decision (ir/dims.py); a
            # template compares them structurally, writing code for any size
            equal = decide_equal(left, right)
            if equal is not NotImplemented:
                return equal if fn is operator.eq else not equal
        if fn in _ORDERINGS and isinstance(left, (tuple, list)) and has_dims((left, right)):
            left, right = pinned((left, right))  # `(n, m) < (6, 4)`: Python compares items
        if fn is operator.mod and isinstance(left, str) and has_traced(right):
            # "%.3f %d" % (v, n): recorded text
            return self.unroller.primitive(fn, (left, right), {})
        return fn(left, right)

    def augmented(self, fn, current: Traced, other):
        """`current op= other` asked for by native code (see exec_AugAssign)."""
        new = self.binary(fn, current, other)
        if isinstance(current.value, np.ndarray):
            self.unroller.writes.mutate(current, new, None, None)
            return current
        return new

    def user_operator(self, fn, left, right):
        """`layer @ x` where the user's class defines `__matmul__` (`x @ layer`
        and `__rmatmul__`, `v += x` and `__iadd__`, `a < b` and `b.__gt__`):
        its method, unrolled like any of its methods, tried in the order
        Python tries them; NotImplemented where none applies (the operator is
        then NumPy's, or Python's own, which raises as it would)."""
        name = getattr(fn, "__name__", "").strip("_")
        if name.startswith("i") and name[1:] in _OPERATOR_NAMES:  # `v += x`: __iadd__ first
            name = name[1:]
            result = self.operator_method(left, f"__i{name}__", right)
            if result is not NotImplemented:
                return result
        compare = name in _MIRRORED
        forward = f"__{name}__"
        reflected = f"__{_MIRRORED[name]}__" if compare else f"__r{name}__"
        left_type, right_type = type(left), type(right)
        # a subclass on the right that brings its own reflected method goes first
        right_first = left_type is not right_type and issubclass(right_type, left_type) and (
            compare or _special(right_type, reflected) is not _special(left_type, reflected))
        if right_first:
            result = self.operator_method(right, reflected, left)
            if result is not NotImplemented:
                return result
        result = self.operator_method(left, forward, right)
        if result is NotImplemented and not right_first \
                and (compare or left_type is not right_type) \
                and (user_instance(left) or _defers(left, right)):
            result = self.operator_method(right, reflected, left)
        return result

    @staticmethod
    def compares_itself(value) -> bool:
        """An object of a user's class holding traced values: its comparison
        methods must be unrolled (builtin_calls.py, sorted/max/min)."""
        return user_instance(value) and holds_traced(value)

    def operator_method(self, obj, dunder: str, *others):
        """`obj.<dunder>(*others)` for an object of a user's class, looked up
        on its type as Python does and unrolled where its source can be read
        (a dataclass's generated `__eq__` cannot: it runs natively);
        NotImplemented where `obj` is no such object or has no such method."""
        if not user_instance(obj):
            return NotImplemented
        method = _special(type(obj), dunder)
        if method is None:
            return NotImplemented
        if method is object.__ne__ and others:  # the default `!=`: the class's `__eq__`, negated
            equal = self.operator_method(obj, "__eq__", *others)
            if equal is NotImplemented:
                return NotImplemented
            return self.unroller.primitive(operator.not_, (equal,), {}) \
                if isinstance(equal, Traced) else not equal
        bound = method.__get__(obj, type(obj)) if hasattr(method, "__get__") else method
        function = getattr(bound, "__func__", None)
        if isinstance(bound, types.MethodType) and bound.__self__ is obj \
                and (inlinable(function) or module_of(function) == "functools") \
                and holds_traced((obj, *others)):  # a static object's runs as Python runs it
            # (functools: the comparisons @total_ordering derives call the class's own)
            try:
                function_source(function)
            except SourceUnavailableError:
                return bound(*others)
            return self.unroller.calls.inline_function(function, (obj, *others), {}, None, None)
        return bound(*others)


def _special(cls: type, name: str):
    """A special method as Python finds it: in the class's own MRO, never
    through a metaclass's `__getattr__`."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _defers(left, right) -> bool:
    """Does `left`'s own operator give way to `right`'s reflected one? A
    Python number's does; NumPy's only to a class that opts out of NumPy's
    operators (`__array_ufunc__ = None`) or outranks it (`__array_priority__`)."""
    value = left.value if isinstance(left, Traced) else left
    if isinstance(value, (bool, int, float, complex)):
        return True
    if getattr(type(right), "__array_ufunc__", False) is None:
        return True
    return getattr(right, "__array_priority__", -np.inf) > getattr(value, "__array_priority__",
                                                                   0.0)
