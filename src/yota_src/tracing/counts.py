"""Trip counts the generated code reads at run time.

An int argument `n` is part of the specialisation, since the trace folds
whatever the code does with it. Where the code does nothing with it but
`for ... in range(n):`, and the body does nothing with the counter but
index with it (`xs[t]`, `xs[t + 1]`), the loop's work does not depend on `n`
beyond how often it is done: a rolled loop can then take its trip count
from the argument, and one gradient serves every `n`.

The interpreter hands such an argument to the code as a `TripCount` (an
int that knows where it came from) and the counter of such a loop as a
`Counter`; any other use of either, found where the interpreter evaluates
an expression, marks it `used`, and the count stays specialised.

The same holds for an array argument `xs` whose rows a loop goes over
(`for x in xs`, `range(len(xs))`, `range(xs.shape[0])`): where nothing else
reads its length (`len`, `.shape`, `.size`, `np.shape`, iterating it) and
nothing but the loop reads it (passes/roll.py checks its readers), its
leading dimension is free too: the code takes the count from `len(xs)`.
"""

from __future__ import annotations

import copy

import gast

from yota_src.tracing.traced import Traced


class Use:
    """Whether a value was used other than as a trip count (or an index)."""

    def __init__(self):
        self.used = False


class TripCount(int):
    """Positional argument `index`, an int, as the interpreter holds it."""

    def __new__(cls, value: int, index: int):
        made = super().__new__(cls, value)
        made.index = index
        made.use = Use()
        return made


class Counter(int):
    """The counter of a loop over `range(TripCount)`; `last`: the last value it
    takes, a Dim where the count is a size (None: an int argument's)."""

    def __new__(cls, value: int, use: Use, last=None):
        made = super().__new__(cls, value)
        made.use, made.last = use, last
        return made


class Position(int):
    """An index that moves with a loop's counter (`t`, `t + 1`), as the
    index of an array reads it: the last position it reaches (`last`, a Dim,
    an int, or None where the count is an argument's and NumPy checks it)."""

    def __new__(cls, value: int, last):
        made = super().__new__(cls, value)
        made.last = last
        return made

    def _moved(self, step):
        if type(step) is not int:
            return int(self) + step
        return Position(int(self) + step, None if self.last is None else self.last + step)

    def __add__(self, other):
        return self._moved(other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._moved(-other) if type(other) is int else int(self) - other


class LoopCount:
    """What a loop statement's trip count came from: positional argument
    `index` (an int, or an array whose rows the loop goes over: `rows`), used
    for nothing else (`argument`), its counter used for indexing alone
    (`counter`)."""

    def __init__(self, value: int, index: int | None, argument: Use, rows: bool = False,
                 less: int = 0, size=None):
        self.index, self.argument, self.rows = index, argument, rows
        self.less = less  # `range(len(xs) - 1)`: the count is the length less this
        # the loop's stop as a size the code computes (ir/dims.py), its count `size -
        # less`: `range(T)`, `range(1, H - k + 1)`, `for x in xs` (then `index` is None)
        self.size = size
        self.counter = Use()
        self.value = value

        self.state: LoopState | None = None  # set by the loop's entry

    @classmethod
    def of(cls, count: TripCount) -> LoopCount:
        return cls(int(count), count.index, count.use)

    @classmethod
    def sized(cls, start: int, stop) -> LoopCount:
        """`range(start, stop)` for a Dim `stop`."""
        return cls(max(stop.value - start, 0), None, Use(), less=start, size=stop)

    @property
    def free(self) -> bool:
        return not (self.argument.used or self.counter.used or self.state is None
                    or self.state.changes)


class SizedTogether:
    """`enumerate(xs)` or `zip(xs, ys)` over arrays of one length, a size the
    code reads at run time (`count`): each item is the parts' rows at the
    loop's position (and the counter, for enumerate), as a `for` loop over
    one of them reads it."""

    def __init__(self, parts: list, count: LoopCount, enumerates: bool):
        self.parts, self.count, self.enumerates = parts, count, enumerates

    def counter_name(self, target) -> str | None:
        """The name `for t, x in enumerate(xs)` binds the counter to."""
        if self.enumerates and isinstance(target, gast.Tuple) and target.elts \
                and isinstance(target.elts[0], gast.Name):
            return target.elts[0].id
        return None

    def items(self, access, node, frame, use):
        rows = [access.items(part, node, frame, header=True) for part in self.parts]
        last = self.count.size - 1 if self.count.size is not None else None
        for i in range(self.count.value):
            item = tuple(next(each) for each in rows)
            yield (Counter(i, use, last), *item) if self.enumerates else item

    def last_item(self, access, node, frame, use):
        """The item of the last iteration: what the loop's names hold after it."""
        last = self.count.size - 1
        rows = tuple(access.subscript(part, last, node, frame) for part in self.parts)
        return (Counter(self.count.value - 1, use, last), *rows) if self.enumerates else rows


class SizedRange:
    """`range(start, stop)` where `stop` is a size the code reads at run time
    (ir/dims.py): a `for` loop over it may take its count from that size
    (`count`); any other use (`len`, `list`, indexing) needs the number, and
    pins the size."""

    def __init__(self, start: int, stop):
        self.start, self.stop = start, stop

    def count(self, facts) -> LoopCount:
        made = LoopCount.sized(self.start, self.stop)
        facts.provisional.append(made)  # pinned unless the code reads it (roll.settle_counts)
        return made

    @property
    def example(self) -> range:
        return range(self.start, self.stop.value)

    def _range(self) -> range:
        return range(self.start, self.stop.facts.pin(self.stop))

    def __iter__(self):
        return iter(self._range())

    def __reversed__(self):
        return reversed(self._range())

    def __len__(self) -> int:
        return len(self._range())

    def __getitem__(self, index):
        return self._range()[index]

    def __contains__(self, value) -> bool:
        return value in self._range()

    def __repr__(self) -> str:
        return repr(self._range())


class LoopState:
    """Whether a loop's iterations change more than the traced values they
    carry. The trace sees every iteration it ran; code made for another
    number of iterations (a count read at run time, a `while` loop's test)
    must not depend on work the trace folded, so it is made only for loops
    whose body assigns plain local names alone (no stores into objects, no
    helper calls, which may change state the trace cannot see) and whose
    names hold traced values or the same value after every iteration
    (`steps += 1` is state that would be wrong for another count)."""

    def __init__(self, body: list):
        self.stored: set[str] = set()  # `out[i, j] = v`: names that must hold traced arrays
        self.names = assigned_names(body, self.stored)
        self.changes = self.names is None
        self.last: dict = {}

    def after_iteration(self, frame_locals: dict, called: bool) -> None:
        """`called`: the iteration called code whose effects its ops do not show."""
        if called:
            self.changes = True
        if self.changes:
            return
        if not all(isinstance(frame_locals.get(name), Traced) for name in self.stored):
            self.changes = True  # an item stored into a Python object: no op shows it
            return
        for name in self.names:
            value = frame_locals.get(name)
            if isinstance(value, Traced):
                continue
            if name in self.last and not _same_static(self.last[name], value):
                self.changes = True
            self.last[name] = _snapshot(value)


def _snapshot(value):
    """`value` as it is now: a container changed in place (`acc += [x]`,
    `d |= {...}`) is another value after the next iteration, not itself."""
    if isinstance(value, (list, dict, set, bytearray)):
        try:
            return copy.copy(value)
        except Exception:  # noqa: BLE001 - a container that cannot be copied: a change
            return object()
    return value


def _same_static(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):  # item by item, traced items by identity (an `==`
        return len(a) == len(b) and all(  # of traced values would be recorded)
            x is y or not isinstance(x, Traced) and not isinstance(y, Traced)
            and _same_static(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and _same_static(list(a.values()), list(b.values()))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - any failure to compare is a difference
        return False


def plain_helper(body: list, stored: set) -> bool:
    """Whether a helper function's body changes nothing its ops do not show:
    it assigns its own names, stores into arrays (`out[pos] = v`: `stored`
    learns the names, which must hold traced arrays when it returns), and
    returns; what it calls is seen where it is called. A loop whose body
    calls such a helper (a stable sigmoid) may still take its count at run
    time."""
    return assigned_names(body, stored, function=True) is not None


def assigned_names(body: list, stored: set | None = None,
                    function: bool = False) -> set[str] | None:
    """The names a loop body assigns, or None where it does more than assign
    plain names (stores into objects, statements other than assignments,
    `if`, loops and `continue`; `break`); a function's body (`function`)
    may also return and call."""
    names: set[str] = set()

    def targets(node) -> bool:
        if isinstance(node, gast.Name):
            names.add(node.id)
            return True
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and stored is not None:  # `out[i, j] = v`, into an array the ops show
            stored.add(node.value.id)
            return True
        return isinstance(node, gast.Tuple) and all(targets(element) for element in node.elts)

    def simple(statements) -> bool:
        for statement in statements:
            if isinstance(statement, gast.Assign):
                if not all(targets(target) for target in statement.targets):
                    return False
            elif isinstance(statement, gast.AugAssign):
                if not targets(statement.target):
                    return False
            elif isinstance(statement, gast.If):
                if not (simple(statement.body) and simple(statement.orelse)):
                    return False
            elif isinstance(statement, gast.For):  # a loop inside: its names, its body's
                if statement.orelse or not (targets(statement.target)
                                            and simple(statement.body)):
                    return False
            elif function and isinstance(statement, (gast.Return, gast.Expr)):
                continue
            elif not isinstance(statement, (gast.Pass, gast.Continue)):
                return False  # (`continue` ends an iteration early: the count stays)
        return True

    if not simple(body):
        return None
    for statement in body:  # `(k := k + 1)` in a test assigns too
        for node in gast.walk(statement):
            if isinstance(node, gast.NamedExpr) and not targets(node.target):
                return None
    return names


def range_of_count(node) -> gast.Name | None:
    """The `n` of a `for ... in range(n):` header, as written."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == "range" and len(node.args) == 1 and not node.keywords \
            and isinstance(node.args[0], gast.Name):
        return node.args[0]
    return None


def rows_of_count(node) -> tuple[gast.Name, str, int] | None:
    """The array `xs` a `for` header goes over the rows of, as written, how,
    and how many rows fewer: `range(len(xs))` and `range(xs.shape[0] - 1)`
    ("range"; the names `len` and `range` are checked to be the builtins),
    `for x in xs` ("rows")."""
    if isinstance(node, gast.Name):
        return node, "rows", 0
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and len(node.args) == 1 and not node.keywords):
        return None
    (stop,) = node.args
    less = 0
    if isinstance(stop, gast.BinOp) and isinstance(stop.op, gast.Sub) \
            and isinstance(stop.right, gast.Constant) and type(stop.right.value) is int \
            and stop.right.value > 0:
        stop, less = stop.left, stop.right.value
    if isinstance(stop, gast.Call) and isinstance(stop.func, gast.Name) and len(stop.args) == 1 \
            and not stop.keywords and isinstance(stop.args[0], gast.Name):
        return stop.args[0], "range", less  # range(len(xs))
    if isinstance(stop, gast.Subscript) and isinstance(stop.slice, gast.Constant) \
            and stop.slice.value == 0 and type(stop.slice.value) is int \
            and isinstance(stop.value, gast.Attribute) and stop.value.attr == "shape" \
            and isinstance(stop.value.value, gast.Name):
        return stop.value.value, "range", less  # range(xs.shape[0])
    return None


def index_positions(body: list, name: str) -> set[int]:
    """The `name` nodes of a loop body that only index: inside a subscript's
    index, alone or plus or minus an int literal (`xs[t]`, `xs[t + 1, 0]`)."""
    allowed = set()

    def index_part(node):
        if isinstance(node, gast.Name) and node.id == name:
            allowed.add(id(node))
        elif isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)) \
                and isinstance(node.right, gast.Constant) and type(node.right.value) is int:
            index_part(node.left)
        elif isinstance(node, gast.Tuple):
            for element in node.elts:
                index_part(element)

    for statement in body:
        for node in gast.walk(statement):
            if isinstance(node, gast.Subscript):
                index_part(node.slice)
            if isinstance(node, (gast.FunctionDef, gast.Lambda)):
                return set()  # a function made in the body may read the counter later
    return allowed
