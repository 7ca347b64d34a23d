"""Which iterations of a loop did the same work: the analysis a pass that
rolls unrolled iterations back into a loop stands on (issue 10).

Every op records the loops it was made in (`Location.loops`: an entry per
time a loop statement started, and the iteration). Two iterations of one
entry are the same when they apply the same primitives, in the same order,
with the same static arguments, shapes and dtypes, and each operand plays the
same role: made earlier in the same iteration (by position), carried from the
previous iteration (by position there), or the very same op from outside the
loop (an invariant). A static integer index that moves with the iteration
(`xs[t]`, `xs[t + 1]`) counts as the same read. Nothing here changes a tape.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from . import nested
from .tape import Call, Guard, Op, Tape


@dataclass(frozen=True)
class Run:
    """Iterations `first` to `last` (inclusive) of loop `entry`, all the same."""

    entry: int
    first: int
    last: int

    @property
    def length(self) -> int:
        return self.last - self.first + 1


def iterations(tape: Tape) -> dict[int, dict[int, list[Op]]]:
    """For each loop entry, the primal's ops of its iterations in tape order,
    by iteration (ops of loops nested inside belong to the outer iteration too)."""
    loops: dict[int, dict[int, list[Op]]] = {}
    for op in tape.ops[: tape.n_forward]:
        for entry, iteration in (op.loc.loops if op.loc is not None else ()):
            loops.setdefault(entry, {}).setdefault(iteration, []).append(op)
    return loops


def identical_runs(tape: Tape, shortest: int = 2) -> list[Run]:
    """The maximal runs of at least `shortest` consecutive iterations that do
    the same work as the run's first, per loop entry, in entry order."""
    runs = []
    for entry, by_iteration in sorted(iterations(tape).items()):
        numbers = sorted(by_iteration)
        pictures = {number: work(by_iteration[number], by_iteration.get(number - 1, []),
                                 number, entry) for number in numbers}
        start = numbers[0] if numbers else 0
        for before, after in zip(numbers, numbers[1:] + [None]):
            if after is not None and after == before + 1 \
                    and _agree(pictures[start], pictures[after]):
                continue
            if before - start + 1 >= shortest:
                runs.append(Run(entry, start, before))
            start = after
    return runs


def work(ops: list[Op], previous: list[Op], iteration: int, entry: int) -> tuple:
    """A picture of what one iteration does; `_agree` says when two pictures
    show the same work (see the module docstring)."""
    here = {op: position for position, op in enumerate(ops)}
    # counted from the end: a peeled first iteration may hold more ops up front
    before = {op: len(previous) - position for position, op in enumerate(previous)}

    def role(value):
        if isinstance(value, Op):
            if value in here:
                return ("here", here[value])
            if isinstance(value, Call) and _moving_index(value):  # xs[t] read before the loop
                return ("read", role(value.args[0]), _index(value.args[1], iteration))
            if value in before:
                return ("carried", before[value])
            return ("outside", id(value))
        if isinstance(value, np.ndarray):
            return ("array", id(value))
        if isinstance(value, _Index):
            return value
        return ("static", type(value), value)

    pictures = []
    for op in ops:
        if isinstance(op, Call):
            args = op.args
            if _moving_index(op):
                args = (args[0], _index(args[1], iteration))
            picture = (op.fn, nested.shape_of(args, role), nested.shape_of(op.kwargs, role))
        elif isinstance(op, Guard):
            picture = ("guard", role(op.value), op.convert, _hashable(op.expected))
        else:
            picture = (type(op).__name__, id(op))
        pictures.append((picture, op.shape, str(op.dtype), inner_loops(op, entry)))
    return tuple(pictures)


@dataclass(frozen=True)
class _Index:
    """A static integer in an index, and its offset from the iteration."""

    value: int
    offset: int


def _index(index, iteration: int):
    items = index if isinstance(index, tuple) else (index,)
    marked = tuple(_Index(i, i - iteration) if type(i) is int else i for i in items)
    return marked if isinstance(index, tuple) else marked[0]


def _agree(a, b) -> bool:
    """Equal pictures, where an index component is the same number in both or
    the same offset from the iteration (`xs[0]` each time, or `xs[t]`)."""
    if isinstance(a, _Index) and isinstance(b, _Index):
        return a.value == b.value or a.offset == b.offset
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _moving_index(op: Call) -> bool:
    """`xs[3]`, `X[3, 0]`: a read at static integer positions."""
    if op.fn is not operator.getitem or len(op.args) != 2:
        return False
    index = op.args[1]
    items = index if isinstance(index, tuple) else (index,)
    return any(type(i) is int for i in items) and all(
        type(i) is int or isinstance(i, slice)
        and not any(nested.leaves(i, lambda v: isinstance(v, Op)))
        for i in items)


def inner_loops(op: Op, entry: int) -> tuple:
    """The iterations of the loops nested inside loop `entry` that made `op`
    (their entries differ from one iteration to the next; their counts do not)."""
    loops = op.loc.loops if op.loc is not None else ()
    inside = [i for i, (each, _) in enumerate(loops) if each == entry]
    return tuple(iteration for _, iteration in loops[inside[0] + 1:]) if inside else ()


def _hashable(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)
