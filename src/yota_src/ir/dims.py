"""Dimensions as run-time values: JAX's shape polymorphism, for NumPy.

A dimension of 2 or more of an array argument is a `Symbol`: generated code
reads it at run time (`x.shape[1]`). What the code computes from such
dimensions is a `Dim`, an integer polynomial over symbols that carries its
example value: `n * d`, `n - 1`, `3 * n`. Arithmetic on Dims makes Dims, so
`np.zeros((3, n))`, a reshape to `(n * d,)`, a slice bound `n - 1` and a
mean's `1 / n` are written as expressions of the arguments' dimensions, and
one module serves every batch size.

What the code decides from a dimension is a fact of the specialisation,
kept in `DimFacts`: two dimensions that must be equal (`x.shape[1] ==
W.shape[0]`: the symbols are unified, so later comparisons are structural),
a dimension the code needs at its example value (pinned: a use yota-src does
not follow, such as an int handed to code that runs natively), and any other
comparison (`x.shape[0] > 4`), checked at the top of the generated code.
Dimensions of 0 or 1 are never symbols: broadcasting treats 1 apart.

A Dim is not an int: code that needs the number (`__index__`, `int()`,
`hash`) gets it, and the dimension is pinned, so nothing yota-src cannot
follow is ever reused at another size.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from yota_src.core import nested


class Symbol(NamedTuple):
    """Dimension `axis` of the leaf of positional argument `index` at `path`."""

    index: int
    path: tuple
    axis: int


class Count(NamedTuple):
    """How many elements a boolean mask selects (`x[x > 0]`): a size the data
    decide, which the code computes where the mask is; `key` names what the
    mask computes (the same for a pass's copy of it). Nothing checks it
    before the body runs: where the code relies on its value, it is pinned,
    and a guard beside the mask checks it."""

    key: tuple


Terms = tuple  # ((monomial, coefficient), ...): a monomial is a sorted tuple of symbols

_COMPARISONS = {operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
                operator.gt: ">", operator.ge: ">="}


class Decision(NamedTuple):
    """`left op right` held when traced (`truth`), checked again at run time."""

    left: object  # Dim or int
    op: Callable
    right: object
    truth: bool
    where: object  # the Location it was decided at, or None


class DimFacts:
    """The symbols of one trace and what the code decided about them."""

    def __init__(self):
        self.values: dict[Symbol, int] = {}  # example value of each symbol, in order of making
        self.orders: dict[Symbol, int] = {}  # each symbol's place in `values`
        self.parent: dict[Symbol, Symbol] = {}  # unified symbols: union-find
        self.pinned: dict[Symbol, int] = {}  # representative -> the value the code needs
        self.decisions: list[Decision] = []
        self.where: Callable[[], object] = lambda: None  # the location of a decision
        self.as_value: Callable[[Dim], object] | None = None  # a Dim as a traced number
        self.counting = True  # a mask's count may be a size (not in a pass: ir/shapes.py)
        # each count's mask op, held, so that no other op takes the ids its key holds
        self.mask_of: dict[Count, object] = {}
        self.selections: dict = {}  # what a mask computes (ir/shapes.py) -> its Count key
        # loops' trip counts taken from sizes (tracing/counts.py), each pinned where
        # the code runs its loop the example's number of times (passes/roll.py)
        self.provisional: list = []
        self.names: dict[Symbol, str] = {}  # the user's name for a size (`T, N, D = xs.shape`)

    @contextlib.contextmanager
    def recording(self, where: Callable[[], object], as_value: Callable):
        """While templates run: their locations, and their recorder for a
        size used as a number."""
        saved = self.where, self.as_value
        self.where, self.as_value = where, as_value
        try:
            yield
        finally:
            self.where, self.as_value = saved

    # -- symbols ------------------------------------------------------------------------

    def symbol(self, index: int, path: tuple, axis: int, value: int) -> Dim | int:
        """The dimension of an argument, as code reads it: a Dim for 2 or more."""
        if value < 2:
            return value
        symbol = Symbol(index, path, axis)
        self.values.setdefault(symbol, value)
        return Dim((((symbol,), 1),), value, self)

    def count(self, key: tuple, value: int) -> Dim:
        """The size a mask selects (its op `key`), `value` in the example."""
        symbol = Count(key)
        self.values.setdefault(symbol, value)
        return Dim((((symbol,), 1),), value, self)

    def find(self, symbol: Symbol) -> Symbol | int:
        """The representative of `symbol`'s class, or the value it is pinned to."""
        root = symbol
        while root in self.parent:
            root = self.parent[root]
        while symbol in self.parent and self.parent[symbol] != root:  # path compression
            self.parent[symbol], symbol = root, self.parent[symbol]
        return self.pinned.get(root, root)

    def name(self, value, name: str) -> None:
        """The user's code bound `value` to `name`: where it is one size, the
        name the code may call it by."""
        terms = self.terms(value)
        if len(terms) == 1:
            (monomial, coefficient), = terms.items()
            if coefficient == 1 and len(monomial) == 1 and isinstance(monomial[0], Symbol):
                self.names.setdefault(monomial[0], name)

    def free(self) -> list[Symbol]:
        """The representatives not pinned: the arguments' sizes the code reads
        at run time (counts of masks apart)."""
        return [s for s in self.values if isinstance(s, Symbol) and s not in self.parent
                and s not in self.pinned]

    def free_count(self, symbol) -> bool:
        return isinstance(symbol, Count) and symbol not in self.pinned

    def members(self, representative: Symbol) -> list[Symbol]:
        return [s for s in self.values if self.find(s) == representative]

    def _order(self, symbol: Symbol) -> int:
        """Symbols in the order they were made (a polynomial's canonical order)."""
        if len(self.orders) != len(self.values):
            self.orders = {s: i for i, s in enumerate(self.values)}
        return self.orders[symbol]

    # -- polynomials -----------------------------------------------------------------------

    def terms(self, value) -> dict:
        """`value` (a Dim or an int) as {monomial: coefficient}, canonical."""
        if not isinstance(value, Dim):
            return {(): int(value)} if value else {}
        result: dict = {}
        for monomial, coefficient in value.terms:
            factor, symbols = coefficient, []
            for symbol in monomial:
                found = self.find(symbol)
                if isinstance(found, int):
                    factor *= found
                else:
                    symbols.append(found)
            key = tuple(sorted(symbols, key=self._order))
            result[key] = result.get(key, 0) + factor
        return {key: c for key, c in result.items() if c}

    def make(self, terms: dict, value: int) -> Dim | int:
        """A Dim of these terms, or the int it is where it has no symbol."""
        terms = {key: c for key, c in terms.items() if c}
        if all(not key for key in terms):
            return terms.get((), 0)
        return Dim(tuple(sorted(terms.items(), key=lambda item: (
            len(item[0]), [self._order(s) for s in item[0]]))), value, self)

    def canonical(self, value) -> Dim | int:
        return self.make(self.terms(value), int(value.value if isinstance(value, Dim)
                                                else value))

    def divide(self, total, divisor) -> Dim | int | None:
        """`total / divisor` where it is exact whatever the sizes: a divisor
        of one term (`3 * n`) that divides every term of `total`; else None."""
        t, d = self.terms(total), self.terms(divisor)
        if len(d) != 1:
            return None
        (monomial, coefficient), = d.items()
        result = {}
        for key, c in t.items():
            rest = list(key)
            for symbol in monomial:
                if symbol not in rest:
                    return None
                rest.remove(symbol)
            if c % coefficient:
                return None
            result[tuple(rest)] = c // coefficient
        value = (total.value if isinstance(total, Dim) else total) // \
            (divisor.value if isinstance(divisor, Dim) else divisor)
        return self.make(result, value)

    # -- facts -----------------------------------------------------------------------------

    def pin(self, value) -> int:
        """The code needs `value` at its example value: every symbol in it is."""
        for monomial in self.terms(value):
            for symbol in monomial:
                self.pinned[symbol] = self.values[symbol]
        return int(value.value if isinstance(value, Dim) else value)

    def require(self, left, op: Callable, right, where=None) -> bool:
        """`decide` for a pass (`where`: the line it stands for), said with the
        numbers on the right (`M >= 2`); one that holds for every size, 0
        included, is no fact and pins no count."""
        constant = self.terms(left).get((), 0)
        left, right = left - constant, right - constant
        difference = _subtract(self.terms(left), self.terms(right))
        if any(key for key in difference) and _always(difference, op):
            return True
        return self.decide(left, op, right, where)

    def decide(self, left, op: Callable, right, where=None) -> bool:
        """`left op right` for Dims and ints: structural where the difference
        is a constant, else the example's answer, kept as a fact (decided at
        `where`, else where the code is)."""
        a = left.value if isinstance(left, Dim) else left
        b = right.value if isinstance(right, Dim) else right
        truth = bool(op(a, b))
        difference = _subtract(self.terms(left), self.terms(right))
        counts = [s for key in difference for s in key if isinstance(s, Count)]
        if counts:  # a decision on a count, which only the body knows: pinned
            for symbol in counts:
                self.pinned[symbol] = self.values[symbol]
            difference = _subtract(self.terms(left), self.terms(right))
        if all(not key for key in difference) or _always(difference, op):
            return truth  # decided by the arithmetic alone
        if op is operator.eq and truth or op is operator.ne and not truth:
            if self._equate(difference):
                return truth
        if not any(self._same_decision(d, left, op, right) for d in self.decisions):
            self.decisions.append(Decision(left, op, right, truth, where or self.where()))
        return truth

    def _same_decision(self, decision: Decision, left, op: Callable, right) -> bool:
        """Whether `left op right` is `decision` (`H == K - 3 * H` is
        `K - 3 * H == H`)."""
        def difference(a, b):
            return _subtract(self.terms(a), self.terms(b))

        if decision.op is not op:
            return False
        made = difference(decision.left, decision.right)
        return made == difference(left, right) or op in (operator.eq, operator.ne) \
            and made == difference(right, left)

    def _equate(self, difference: dict) -> bool:
        """Learn `difference == 0` where it is `s - t` (unified) or `s - c`
        (pinned); other equalities stay decisions."""
        linear = {key: c for key, c in difference.items() if key}
        if any(isinstance(symbol, Count) for key in linear for symbol in key):
            return False  # pinned by `decide`
        constant = difference.get((), 0)
        if len(linear) == 1 and constant:
            (key, c), = linear.items()
            if len(key) == 1 and c in (1, -1):
                self.pinned[key[0]] = -constant * c
                return True
        if len(linear) == 2 and not constant and sorted(linear.values()) == [-1, 1] \
                and all(len(key) == 1 for key in linear):
            first, second = sorted((key[0] for key in linear), key=self._order)
            self.parent[second] = first
            return True
        return False


def _always(difference: dict, op: Callable) -> bool:
    """`difference op 0` whatever the sizes, each 0 or more (an array may come
    empty): where every term but the constant is positive, the difference
    is at least the constant."""
    if any(c < 0 for key, c in difference.items() if key):
        return False
    least = difference.get((), 0)
    return (op is operator.ge and least >= 0) or (op is operator.gt and least > 0) \
        or (op is operator.ne and least > 0)


def _subtract(a: dict, b: dict) -> dict:
    result = dict(a)
    for key, c in b.items():
        result[key] = result.get(key, 0) - c
    return {key: c for key, c in result.items() if c}


def _add(a: dict, b: dict) -> dict:
    return _subtract(a, {key: -c for key, c in b.items()})


def _multiply(a: dict, b: dict) -> dict:
    result: dict = {}
    for ka, ca in a.items():
        for kb, cb in b.items():
            key = tuple(sorted(ka + kb, key=repr))
            result[key] = result.get(key, 0) + ca * cb
    return result


class Dim:
    """An array dimension as generated code computes it; see the module."""

    __slots__ = ("terms", "value", "facts")

    def __init__(self, terms: Terms, value: int, facts: DimFacts):
        self.terms = terms
        self.value = value
        self.facts = facts

    def __repr__(self) -> str:
        return f"Dim({self.value})"

    # -- arithmetic: Dims ----------------------------------------------------------------

    def _combine(self, other, how, value):
        """`how` on the terms, `value(a, b)` on the example values."""
        if isinstance(other, bool) or not isinstance(other, (Dim, int)):
            return NotImplemented
        facts = self.facts
        return facts.make(how(facts.terms(self), facts.terms(other)),
                          value(self.value, _value(other)))

    def __add__(self, other):
        if _number(other):
            return self._as_value() + other
        return self._combine(other, _add, operator.add)

    def __radd__(self, other):
        if _number(other):
            return other + self._as_value()
        return self.__add__(other)

    def __sub__(self, other):
        if _number(other):
            return self._as_value() - other
        return self._combine(other, _subtract, operator.sub)

    def __rsub__(self, other):
        if _number(other):
            return other - self._as_value()
        return self._combine(other, lambda a, b: _subtract(b, a), lambda a, b: b - a)

    def __mul__(self, other):
        if _number(other):
            return self._as_value() * other
        return self._combine(other, _multiply, operator.mul)

    def __rmul__(self, other):
        if _number(other):
            return other * self._as_value()
        return self.__mul__(other)

    def __neg__(self):
        return self * -1

    def __pos__(self):
        return self

    def __floordiv__(self, other):
        """Exact where every coefficient divides (`(2 * n) // 2`); else pinned."""
        if isinstance(other, int) and not isinstance(other, bool) and other > 0:
            terms = self.facts.terms(self)
            if all(c % other == 0 for c in terms.values()):
                return self.facts.make({k: c // other for k, c in terms.items()},
                                       self.value // other)
        if isinstance(other, Dim):
            quotient = self.facts.divide(self, other)
            if quotient is not None:
                return quotient
        if isinstance(other, (Dim, int)):
            return self.facts.pin(self) // (self.facts.pin(other) if isinstance(other, Dim)
                                            else other)
        return NotImplemented

    def __rfloordiv__(self, other):
        if isinstance(other, int):
            return other // self.facts.pin(self)
        return NotImplemented

    def __mod__(self, other):
        if isinstance(other, int) and not isinstance(other, bool) and other > 0 \
                and all(c % other == 0 for c in self.facts.terms(self).values()):
            return 0
        if isinstance(other, (Dim, int)):
            return self.facts.pin(self) % _pinned(other)
        return NotImplemented

    def __rmod__(self, other):
        if isinstance(other, int):
            return other % self.facts.pin(self)
        return NotImplemented

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __abs__(self):
        return self if self.facts.decide(self, operator.ge, 0) else -self  # `abs(m - n)`

    # -- arithmetic that leaves the integers: a traced number ---------------------------------

    def _as_value(self):
        hook = self.facts.as_value
        return hook(self) if hook is not None else self.facts.pin(self)

    def __truediv__(self, other):
        return self._as_value() / (other._as_value() if isinstance(other, Dim) else other)

    def __rtruediv__(self, other):
        return other / self._as_value()

    def __pow__(self, other):
        return self._as_value() ** other

    def __rpow__(self, other):
        return other ** self._as_value()

    # -- decisions -----------------------------------------------------------------------------

    def __eq__(self, other):
        """Structural: the same polynomial (what passes and caches compare).
        The interpreter decides `n == m` in the user's code (`decide`)."""
        if not isinstance(other, (Dim, int)) or isinstance(other, bool):
            return NotImplemented
        return self.facts.terms(self) == self.facts.terms(other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        """The number's: a size in a set or a dict's key is compared as Python
        compares ints, which needs the number (pinned). Passes key a Dim by
        `key()`."""
        return hash(self.facts.pin(self))

    def key(self) -> tuple:
        """A structural key: equal for the same polynomial."""
        return tuple(sorted(self.facts.terms(self).items(), key=repr))

    def _compare(self, op: Callable, other):
        if isinstance(other, np.integer):
            other = int(other)
        if isinstance(other, bool) or not isinstance(other, (Dim, int)):
            if isinstance(other, (float, np.floating)):  # decided on the number, guarded
                return op(self._as_value(), other)
            return NotImplemented
        return self.facts.decide(self, op, other)

    def __lt__(self, other):
        return self._compare(operator.lt, other)

    def __le__(self, other):
        return self._compare(operator.le, other)

    def __gt__(self, other):
        return self._compare(operator.gt, other)

    def __ge__(self, other):
        return self._compare(operator.ge, other)

    def __bool__(self):
        return self.facts.decide(self, operator.ne, 0)

    # -- the number itself: pinned ------------------------------------------------------------

    def __index__(self):
        return self.facts.pin(self)

    __int__ = __index__

    def __float__(self):
        return float(self.facts.pin(self))

    def __format__(self, spec):
        return format(self.facts.pin(self), spec)

    def __str__(self):
        return str(self.facts.pin(self))


def _value(other):
    if isinstance(other, Dim):
        return other.value
    return other if isinstance(other, int) and not isinstance(other, bool) else None


def _number(other) -> bool:
    """A number that is no size: arithmetic with it leaves the integers."""
    return isinstance(other, (float, complex, np.number)) or isinstance(other, bool)


def _pinned(other) -> int:
    return other.facts.pin(other) if isinstance(other, Dim) else other


def plain(structure):
    """Dims as their example values, in a nested structure of arguments: what
    NumPy runs on while the op records the Dims themselves."""
    if not has_dims(structure):
        return structure
    return nested.map_leaves(structure, lambda d: d.value, lambda v: isinstance(v, Dim))


def at_counts(structure, counts: dict):
    """`plain`, but with the counts of masks in `counts` (Count -> int) for
    their example values: each iteration of a rolled loop selects its own."""
    if not counts or not has_dims(structure):
        return plain(structure)

    def value(size: Dim) -> int:
        facts, total = size.facts, 0
        for monomial, coefficient in size.terms:
            for symbol in monomial:
                found = facts.find(symbol)
                coefficient *= found if isinstance(found, int) else counts.get(
                    found, facts.values[found])
            total += coefficient
        return total

    return nested.map_leaves(structure, value, lambda v: isinstance(v, Dim))


def facts_of(*ops) -> DimFacts | None:
    """The facts the sizes of these ops hold (a loop body's tape, or a guard,
    has no signature to say them), or None where no size is a Dim."""
    for op in ops:
        for size in getattr(op, "dims", None) or ():
            if isinstance(size, Dim):
                return size.facts
    return None


def has_dims(structure) -> bool:
    return any(True for _ in nested.leaves(structure, lambda v: isinstance(v, Dim)))


def comparison_text(op: Callable) -> str:
    return _COMPARISONS[op]


def decide_equal(left, right, facts: DimFacts | None = None):
    """`left == right` as the user's code asks it of sizes, shapes included
    (`x.shape == y.shape`): a decision on each pair of sizes compared, as
    Python compares tuples; NotImplemented where no Dim takes part."""
    if isinstance(left, Dim) or isinstance(right, Dim):
        facts = left.facts if isinstance(left, Dim) else right.facts
        left, right = (int(v) if isinstance(v, np.integer) else v for v in (left, right))
        if isinstance(left, (float, np.floating)) or isinstance(right, (float, np.floating)):
            dim, other = (left, right) if isinstance(left, Dim) else (right, left)
            return dim._as_value() == other  # `n == 6.0`: decided on the number, guarded
        if isinstance(left, bool) or isinstance(right, bool) \
                or not isinstance(left, (Dim, int)) or not isinstance(right, (Dim, int)):
            return NotImplemented
        return facts.decide(left, operator.eq, right)
    if isinstance(left, (tuple, list)) and isinstance(right, (tuple, list)) \
            and type(left) is type(right) and has_dims((left, right)):
        if len(left) != len(right):
            return False
        for a, b in zip(left, right):
            equal = decide_equal(a, b)
            if not (a == b if equal is NotImplemented else equal):
                return False
        return True
    return NotImplemented


def pinned(structure):
    """Dims as the ints they are, each pinned: for code yota-src runs
    natively, which could do anything with the number."""
    if not has_dims(structure):
        return structure
    return nested.map_leaves(structure, lambda d: d.facts.pin(d), lambda v: isinstance(v, Dim))
