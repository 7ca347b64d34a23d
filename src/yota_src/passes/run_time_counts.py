"""Trip counts the rolled code reads at run time (tracing/counts.py says
which loops may): an int argument `n`, `len(xs)` for a loop over the rows of
an array argument, or a size (ir/dims.py) for a loop over `range(T)`; and
the sizes pinned where the code runs a loop the example's number of times.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.loops import is_loop
from yota_src.ir.tape import Call, Const, Guard, Input, Op, Tape, operands, readers
from yota_src.passes.dce import live_ops
from yota_src.passes.rewrite import rewrite


def counted_at_run_time(tape: Tape, counts: Counts) -> Tape:
    """Loops rolled while traced whose trip count is free (counts.py): the
    count read from the argument at run time, as `emit` does for the others."""
    live = live_ops(tape)  # a dead read of the loop's last value reads no stack
    users = readers([op for op in tape.ops if op in live], tape.output)
    origins = dict(tape.origins)

    def visit(op: Op, forward: bool, original: Op) -> Op:
        loop = op.fn if is_loop(op) else None
        entry = getattr(loop, "entry", None)
        count = getattr(entry, "count", None)
        shift = None if count is None else loop.stop - count.value  # counter less iteration
        if count is None or tape.signature is None and count.size is None or not count.free \
                or loop.bound is not None or loop.test is not None or loop.start != shift \
                or any(user is None or user.args[1] >= len(loop.carried)
                       for user in users.get(original, [])):
            return op  # not free, iterations before the loop, or a stack read after it
        argument = counts.read(count, origins, op.loc)
        made = Call(loop.replace(bound=shift - count.less, size=count.size),
                    (*op.args, argument), op.kwargs, op.shape, op.dtype, op.loc, op.depends)
        read = [argument] if count.size is not None else []  # a size: computed here
        return (*read, *counts.guard(count, argument, count.less, op.loc), made)

    rewritten = rewrite(tape, visit)
    if not counts.ops and not counts.sized:
        return tape
    return rewritten.replace(ops=counts.placed(rewritten.ops),
                             origins={**rewritten.origins, **{c: origins[c] for c in counts
                                                              .ops.values()}},
                             free_counts=tape.free_counts | counts.indices)


class Counts:
    """What trip counts are read from at run time, one op per argument: the
    int argument's input, or `len(xs)` for a loop over the rows of the array
    argument `xs`; and the count (counts.LoopCount) each was made for."""

    def __init__(self, tape: Tape):
        self.tape = tape
        self.ops: dict[int, Op] = {}
        self.counts: dict[int, object] = {}
        self.sized = False  # a count read from sizes (counts.SizedRange)

    @property
    def indices(self) -> frozenset:
        return frozenset(self.ops)

    def read(self, count, origins: dict, loc) -> Op:
        """The op `count` is read from, its example value recorded in `origins`
        (`loc`: the loop's header, where `len(xs)` is read); for a size
        (counts.SizedRange), the size as the code computes it."""
        if count.size is not None:
            self.sized = True
            made = Call(primitives.dimension, (count.size,), {}, (), np.dtype(int), loc, True)
            origins[made] = Const(count.size.value)
            return made
        if count.index not in self.ops:
            if count.rows:
                rows = next(op for op in self.tape.ops if isinstance(op, Input)
                            and op.index == count.index and not op.path)
                made = Call(len, (rows,), {}, (), np.dtype(int), loc, True)
            else:
                made = Input(count.index, (), (), np.dtype(int), scalar=True)
            self.ops[count.index], self.counts[count.index] = made, count
            origins[made] = Const(count.value)
        return self.ops[count.index]

    def text(self, count) -> str:
        name = self.tape.signature.params[count.index]
        return f"len({name})" if count.rows else name

    def placed(self, ops: list) -> list:
        """`ops` with the ops counts are read from that they lack: an int's
        input first, an array's length just before the first op that reads it."""
        there = set(ops)
        new = [op for op in self.ops.values() if op not in there]
        placed = [op for op in new if isinstance(op, Input)]
        waiting = [op for op in new if not isinstance(op, Input)]
        for op in ops:
            for length in [each for each in waiting if each in operands(op)]:
                placed.append(length)
                waiting.remove(length)
            placed.append(op)
        return placed

    def rows_read_elsewhere(self, tape: Tape) -> list:
        """The counts taken from `len(xs)` where `xs` is read other than at a
        loop's counter: such a read depends on its length too (`np.sum(xs)`,
        `xs[-1]`, a row read before the loop), which the trace folded."""
        lengths = {self.ops[index].args[0]: index for index, count in self.counts.items()
                   if count.rows}
        if not lengths:  # counts from ints alone: no array to check, no walk of the tape
            return []
        live = live_ops(tape)
        users = readers([op for op in tape.ops if op in live], tape.output)
        return [self.counts[index] for rows, index in lengths.items()
                if not all(user is self.ops[index] or user is not None and is_loop(user)
                           and _reads_at_counter(user, rows) for user in users.get(rows, []))]


    def guard(self, count, argument: Op, least: int, loc) -> list[Op]:
        """The check that the count is at least `least` (see `_count_guard`); a
        size's is a fact about sizes, checked with the others (ir/dims.py)."""
        if count.size is not None:
            count.size.facts.require(count.size, operator.ge, least, loc)
            return []
        return _count_guard(argument, least, self.text(count), loc)


def _count_guard(count: Op, least: int, text: str, loc) -> list[Op]:
    """`n >= least`, checked at run time: the code before the loop ran that
    many iterations (with `len(xs) - k`, k more), and a negative count would
    give stacks no size can have. None for `len(xs) >= 0`."""
    if least == 0 and isinstance(count, Call):
        return []
    enough = Call(operator.ge, (count, least), {}, (), np.dtype(bool), loc, True)
    return [enough, Guard(enough, True, bool, f"{text} >= {least}", loc)]


def _reads_at_counter(call: Call, rows: Op) -> bool:
    """Whether the loop `call` reads `rows` only a row at a time, at its
    counter (`xs[t]`, `xs[t + 1, 0]`)."""
    loop = call.fn
    params = {param for param, arg in zip(loop.params[1:], call.args) if arg is rows}
    moving = {loop.counter} | {op for op in loop.ops if isinstance(op, Call)
                               and op.fn in (operator.add, operator.sub)
                               and op.args[0] is loop.counter and type(op.args[1]) is int}

    def at_counter(op: Op) -> bool:
        if not (op.fn is operator.getitem and op.args[0] in params):
            return False
        index = op.args[1]
        first = index[0] if isinstance(index, tuple) and index else index
        return isinstance(first, Op) and first in moving  # not a slice: `xs[:, 0][t]`

    return all(at_counter(op) for op in loop.ops if isinstance(op, Call)
               and any(arg in params for arg in operands(op)))


def settle_counts(tape: Tape) -> None:
    """Pin the size a loop's count was taken from (counts.SizedRange) where
    the code runs that loop the example's number of times: some of its
    iterations written out, or rolled with a fixed count. A loop rolled with
    its count read at run time, or whose iterations are gone (those of an
    outer loop's other iterations, which its rolled body stands for), pins
    nothing."""
    facts = tape.signature.dims
    if facts is None or not facts.provisional:
        return
    fixed: set[int] = set()
    live = live_ops(tape)  # a dead read of a loop's last row needs no count
    pending = [([op for op in tape.ops if op in live], {})]
    while pending:
        ops, rolled = pending.pop()
        for op in ops:
            for entry, _ in op.loc.loops if op.loc is not None else ():
                count = getattr(entry, "count", None)
                loop = rolled.get(entry)
                if count is not None and (loop is None or loop.bound is None):
                    fixed.add(id(count))
            if is_loop(op):
                entry = getattr(op.fn, "entry", None)
                pending.append((op.fn.ops, {**rolled, entry: op.fn} if entry else rolled))
    for count in facts.provisional:
        if id(count) in fixed:
            facts.pin(count.size)
