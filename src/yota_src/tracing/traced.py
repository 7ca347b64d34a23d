"""Values while unrolling: `Traced` pairs a tape op with its example value.

Everything else the unroller handles is a plain Python object (static).

The unroller evaluates the user's operators itself, but it hands traced values
to code that runs natively too: `sorted`, `set`, `dict`, container methods
(`list.index`, `dict.get`), `functools.reduce`, classes such as `Counter`. So
that such code computes on values and never on the identity of a `Traced`
object, every Python protocol that would read a value goes back to the
unroller that made it: arithmetic and comparisons are recorded, and whatever
turns a value into a decision (`bool`, `hash`, `int`, `index`, `len` of text)
is concretized with a guard, like a branch in the user's own code.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import nested, operators
from yota_src.errors import UnsupportedSyntaxError
from yota_src.ir.tape import Call, Op, leaves_of


class Traced:
    """A value the result depends on: its op on the tape and its example value."""

    __slots__ = ("op", "value", "unroller", "__weakref__")
    __array_ufunc__ = None  # `array + traced` gives way to Traced.__radd__

    def __init__(self, op: Op, value, unroller=None):
        self.op = op
        self.value = value
        self.unroller = unroller

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

    # -- decisions: concretized on the value, with a guard --------------------

    def _unroller(self):
        if self.unroller is None:
            raise UnsupportedSyntaxError(
                "a value traced while differentiating was used after the trace ended",
                hint="Keep values computed from the arguments inside the differentiated "
                     "function; return what you need.")
        return self.unroller

    def __bool__(self) -> bool:
        return self._unroller().decisions.decide(self, bool)

    def __hash__(self) -> int:
        if isinstance(self.value, (float, np.floating)) and self.value != self.value:
            self._refuse("a NaN computed from the arguments was hashed (a set element or dict "
                         "key)", "NaN is unequal to itself, so no later call could be checked "
                         "against it; filter NaNs out first (np.isnan).")
        return hash(self._unroller().decisions.decide(self, exact_type(self.value)))

    def __index__(self) -> int:
        return self._unroller().decisions.decide(self, operator.index)

    def __int__(self) -> int:
        return self._unroller().decisions.decide(self, int)

    def __float__(self) -> float:
        self._refuse("a value computed from the arguments was converted to a Python number "
                     "by code that runs natively, which would drop its gradient",
                     "Call float() in the differentiated function itself, where it is "
                     "recorded.")

    __complex__ = __float__

    def __array__(self, *args, **kwargs):
        self._refuse("a value computed from the arguments reached NumPy inside code that "
                     "runs natively, which would freeze it", "Pass it to NumPy in the "
                     "differentiated function itself, where the call is recorded.")

    def _refuse(self, message: str, hint: str):
        where = self.unroller.where() if self.unroller is not None else None
        raise UnsupportedSyntaxError(message, where, hint=hint)

    def __getattr__(self, name: str):
        """`x.shape`, `x.T`, `x.sum` asked for by code running natively (an
        operator.attrgetter, a library helper): answered as in the user's code."""
        if name.startswith("__") or name in Traced.__slots__ \
                or not hasattr(self.value, name):  # protocol probes, getattr(x, "pyfunc", None)
            raise AttributeError(name)
        try:
            return self._unroller().access.traced_attribute(self, name, None, None)
        except UnsupportedSyntaxError:  # not an attribute of the value: hasattr() says no
            raise AttributeError(name) from None

    def __reduce_ex__(self, protocol):
        self._refuse("a value computed from the arguments was pickled by code that runs "
                     "natively, which would freeze it", "Keep it a NumPy value in the "
                     "differentiated function (np.copy makes a copy).")

    def __copy__(self):
        """copy.copy / copy.deepcopy of an array is a new array: a copy op, so
        changing one in place leaves the other as it was."""
        return self._unroller().primitive(np.copy, (self,), {})

    def __deepcopy__(self, memo):
        return self.__copy__()

    # -- containers ------------------------------------------------------------

    def __len__(self) -> int:
        return self._unroller().access.length(self)

    def __iter__(self):
        return iter(self._unroller().access.iterate(self, None, None))

    def __getitem__(self, index):
        return self._unroller().access.subscript(self, index, None, None)

    def __contains__(self, item) -> bool:
        return self._unroller().decisions.contains(self, item, None, None)


def _binary(fn, reflected: bool = False):
    if reflected:
        return lambda self, other: self._unroller().operators.binary(fn, other, self)
    return lambda self, other: self._unroller().operators.binary(fn, self, other)


def _unary(fn):
    return lambda self: self._unroller().primitive(fn, (self,), {})


def _in_place(fn):
    """`a += b` run by native code (operator.iadd): an array changes in place,
    for every alias, as in the user's own code; numbers rebind."""
    return lambda self, other: self._unroller().operators.augmented(fn, self, other)


# Comparisons reflect into each other (`2.0 < t` is `t > 2.0`); the others
# have reflected forms.
for _each in operators.of_kind("compare"):
    setattr(Traced, f"__{operators.dunder(_each.fn)}__", _binary(_each.fn))
for _each in operators.of_kind("binary"):
    _name = operators.dunder(_each.fn)
    setattr(Traced, f"__{_name}__", _binary(_each.fn))
    setattr(Traced, f"__r{_name}__", _binary(_each.fn, reflected=True))
    setattr(Traced, f"__i{_name}__", _in_place(_each.fn))
for _fn in (*(each.fn for each in operators.of_kind("unary")), abs):
    setattr(Traced, f"__{_fn.__name__.strip('_')}__", _unary(_fn))
del _each, _fn, _name


def exact_type(value):
    """The Python type that spells a scalar exactly (np.float64 -> float), for
    guarding a value that was hashed: its hash is its value."""
    if isinstance(value, (bool, np.bool_)):
        return bool
    if isinstance(value, (int, np.integer)):
        return int
    if isinstance(value, (float, np.floating)):
        return float
    if isinstance(value, (str, bytes)):
        return type(value)
    raise TypeError(f"unhashable type: '{type(value).__name__}'")


def traced_in(structure):
    """The traced values inside a nested structure, in order."""
    return leaves_of(structure, Traced)


def has_traced(structure) -> bool:
    return next(traced_in(structure), None) is not None


def is_static(structure) -> bool:
    """For templates: True when a value is known while the gradient is
    generated (a Python number, a shape, a keyword), so a branch on it folds
    away; False when it is computed from the arguments. The unroller runs it
    natively, on the traced values themselves (builtin_calls.py)."""
    return not has_traced(structure)


def give_name(value, name: str) -> None:
    """Give a traced value the user's name, unless it has one already."""
    if isinstance(value, Traced) and isinstance(value.op, Call):
        value.op.last_name = name
        if value.op.hint is None:
            value.op.hint = name


def values_of(structure):
    """The example values inside a nested structure of traced values."""
    return nested.map_leaves(structure, lambda traced: traced.value,
                             lambda value: isinstance(value, Traced))


class ExampleValues:
    """The example value of each op while unrolling, for the reverse sweep's
    templates to compute on.

    An array changed element by element (`a[i] += ...` in a loop, an
    index-add) is a new op per change, each with a whole new array: kept
    whole, a loop of n such writes into an n-element array would hold n * n
    elements. So only one version of such an array is kept whole; each other
    version is kept as the elements in which it differs from a neighbouring
    version (`_Elements`). Reading a version rebuilds it from the whole one
    and makes it the whole one (Baker's rerooting), so the reverse sweep,
    which reads the versions newest first, rebuilds each from the next at the
    cost of one copy. Arrays handed out are never written to afterwards.
    """

    def __init__(self):
        self._values: dict[Op, object] = {}

    def __setitem__(self, op: Op, value) -> None:
        self._values[op] = value

    def __getitem__(self, op: Op):
        value = self._values[op]
        return self._rebuild(op) if isinstance(value, _Elements) else value

    def __contains__(self, op: Op) -> bool:
        return op in self._values

    def supersede(self, older: Op, newer: Op, index) -> None:
        """`newer`'s value is `older`'s with the elements at `index` changed:
        `older` keeps only its own elements there."""
        old, new = self._values.get(older), self._values.get(newer)
        if not (isinstance(old, np.ndarray) and isinstance(new, np.ndarray)
                and old.ndim and old.shape == new.shape and old.dtype == new.dtype):
            return
        self._values[older] = _Elements(newer, index, np.array(old[index], copy=True))

    def _rebuild(self, op: Op) -> np.ndarray:
        path = [op]  # from `op` along the recorded differences to a whole array
        while isinstance(self._values[path[-1]], _Elements):
            path.append(self._values[path[-1]].neighbour)
        value = np.array(self._values[path[-1]], copy=True)
        for here, there in zip(reversed(path[:-1]), reversed(path[1:])):
            elements = self._values[here]  # `here` differs from `there` at these
            self._values[there] = _Elements(here, elements.index,
                                            np.array(value[elements.index], copy=True))
            value[elements.index] = elements.values
        self._values[op] = value
        return value


class _Elements:
    """A version of an array as its neighbour's with `values` at `index`."""

    __slots__ = ("neighbour", "index", "values")

    def __init__(self, neighbour: Op, index, values: np.ndarray):
        self.neighbour, self.index, self.values = neighbour, index, values
