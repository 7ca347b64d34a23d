"""Rolling: a run of iterations that did the same work becomes one loop op.

The trace unrolls every loop; here a run of consecutive iterations of one
loop that apply the same primitives to operands in the same roles (see
iterations.py) becomes a `Loop` (loops.py) whose body is one of them. An
iteration that differs (often the first, or the last test of a `while`)
stays unrolled beside the loop; a loop with no long enough run stays
unrolled. Correctness never rests on this pass: a run is rolled only when
each of its iterations matches the body op for op, operand for operand.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import nested
from yota_src.core.primitives import has_effect
from yota_src.ir.branches import Arm, Branch, is_branch
from yota_src.ir.dims import Dim, has_dims
from yota_src.ir.iterations import CounterValue, iterations
from yota_src.ir.loops import CARRIED, COUNTER, OUTSIDE, Loop, Param, is_loop
from yota_src.ir.tape import Call, Const, Guard, Op, Tape, map_refs, operands, readers
from yota_src.ir.tape import sizes as sizes_of
from yota_src.passes.bodies import in_loop_bodies
from yota_src.passes.branches import close_branches, open_branches
from yota_src.passes.matching import (
    Run,
    agrees,
    from_end,
    index_leaves,
    is_index_read,
    leaves,
    match_iteration,
    next_run,
)
from yota_src.passes.rewrite import with_operands
from yota_src.passes.run_time_counts import Counts, counted_at_run_time

SHORTEST = 3  # iterations: a shorter run reads as well unrolled


def roll_loops(tape: Tape, shortest: int = SHORTEST) -> Tape:
    """Each run of at least `shortest` matching iterations, as a loop op.
    The runs are found on the tape as given (an outer loop's before the
    loops inside it), then the tape is rebuilt once: the pass takes time
    in proportion to the tape's length however many loops it rolls."""
    while True:
        counts = Counts(tape)
        rolled = _rolled(tape, shortest, counts)
        folded = counts.rows_read_elsewhere(rolled)
        if not folded:
            break
        for count in folded:  # its length is not free after all: rolled again, folded
            count.argument.used = True
    if any(is_loop(op) for op in rolled.ops):
        # a loop inside a rolled loop: its iterations are in the body, rolled there
        rolled = in_loop_bodies(_roll_inner)(rolled)
    # a branch of one arm in a body stayed whole for the loops inside to roll
    return open_branches(rolled)


def _shortest(entry, shortest: int) -> int:
    """A loop over a size the code may read at run time rolls from two
    iterations: written out, it would serve the example's size alone."""
    count = getattr(entry, "count", None)
    return min(shortest, 2) if count is not None and count.size is not None and count.free \
        else shortest


def _roll_inner(body: Tape) -> Tape:
    return roll_loops(body)


def _rolled(tape: Tape, shortest: int, counts: Counts) -> Tape:
    tape = close_branches(counted_at_run_time(tape, counts))
    position = {op: i for i, op in enumerate(tape.ops)}
    users = readers(tape.ops, tape.output)
    bodies: dict[int, _Body] = {}  # by the position of the run's first op
    taken: set[Op] = set()
    for entry, by_iteration in sorted(iterations(tape).items()):
        for run, matches in _runs(entry, by_iteration, _shortest(entry, shortest)):
            body = planned(tape, position, entry, by_iteration, run, matches, taken, users)
            if body is not None:
                bodies[position[body.members_in_order[0]]] = body
                taken.update(body.members)
    return open_branches(_rebuilt(tape, bodies, users, counts) if bodies else tape,
                         bodies=False)


def matching_runs(tape: Tape, shortest: int = SHORTEST) -> list[tuple[int, int, int]]:
    """(loop entry, first, last iteration) of each run the pass would roll if
    it can plan a loop for it, in entry order: what it takes for the same work."""
    return [(entry, run.first, run.last)
            for entry, by_iteration in sorted(iterations(tape).items())
            for run, _ in _runs(entry, by_iteration, shortest)]


def _runs(entry, by_iteration: dict, shortest: int):
    """The runs of at least `shortest` matching iterations of loop `entry`, in order."""
    lowest = min(by_iteration)
    while True:
        found = next_run(entry, by_iteration, lowest, shortest)
        if found is None:
            return
        yield found
        lowest = found[0].last + 1


# --- making the loop -------------------------------------------------------

def planned(tape: Tape, position: dict, entry, by_iteration: dict, run: Run,
             matches: list, taken: set, users: dict):
    """The body of the loop for `run`, or None where it stays unrolled."""
    members = [op for n in range(run.first, run.last + 1) for op in by_iteration[n]]
    start = position[members[0]]
    if tape.ops[start: start + len(members)] != members or any(map(_unrollable, members)) \
            or any(op in taken for op in members):
        return None  # interleaved with other work, or work a loop op does not hold
    moving: dict = {}
    if not all(agrees(match, moving) for match in matches):
        return None
    body = _Body(tape, entry, by_iteration, run, moving, members)
    if not body.build(next((m.inits for m in matches if m.inits), {})):
        return None
    if entry.is_while:
        body.end_with_test(by_iteration, users, position, moving)
    return body


def _rebuilt(tape: Tape, bodies: dict, users: dict, counts: Counts) -> Tape:
    """The tape with each planned run replaced by its loop, in one walk."""
    replaced: dict[Op, Op] = {}
    look = lambda op: replaced.get(op, op)  # noqa: E731
    labels, origins = dict(tape.labels), dict(tape.origins)
    ops, index, outside = [], 0, set()
    while index < len(tape.ops):
        body = bodies.get(index)
        if body is not None:
            ops += body.emit(look, users, replaced, labels, origins, counts)
            outside.update(body.outside)
            index += len(body.members)
            continue
        old = tape.ops[index]
        new = with_operands(old, look)
        if new is not old:
            replaced[old] = new
            if old in labels:
                labels[new] = labels.pop(old)
            origins[new] = tape.origins.get(old, old)
        ops.append(new)
        index += 1
    output = map_refs(tape.output, look)
    ops, labels, origins = _without_dead_reads(counts.placed(ops), output, labels,
                                               origins, outside)
    return tape.replace(ops=ops, output=output, labels=labels,
                        origins=origins, free_counts=tape.free_counts | counts.indices)


class _Body:
    """The loop's body, made from the template iteration's ops."""

    def __init__(self, tape: Tape, entry, by_iteration: dict, run: Run, moving: dict,
                 members: list):
        self.tape, self.entry, self.run, self.moving = tape, entry, run, moving
        self.members_in_order, self.members = members, set(members)
        self.model = by_iteration[run.template]
        self.previous = by_iteration[run.template - 1]
        self.model_before = from_end(self.previous)
        self.ops: list[Op] = []
        self.made: dict[Op, Op] = {}  # template op -> body op
        self.outside: dict[Op, Param] = {}
        self.carried: dict[int, Param] = {}  # slot (position from the end) -> param
        self.inits: dict[int, Op] = {}
        self.origins: dict[Op, Op] = {}
        self.counter = Param(COUNTER, (), np.dtype(int), "t")
        self.shift = 0  # the counter's value less the iteration's number
        self.test: Guard | None = None  # a `while` loop's test, where it ends the loop
        self.counted: dict[int, Op] = {}
        self.by_iteration = by_iteration
        self._places: dict[int, dict] = {}  # iteration -> its ops' positions
        self._arm_ops: dict[int, dict] = {}  # iteration -> its arms' ops' places
        self._placed: dict[tuple, Op] = {}  # a place in an arm -> the body's op there

    def build(self, inits: dict) -> bool:
        self.run_inits = inits  # what the carried values start from (the first iteration's)
        self.shift = self._first_offset()
        for position, op in enumerate(self.model):
            made = self._copy(position, op)
            if made is None:
                return False
            self.made[op] = made
            self.ops.append(made)
            self.origins[made] = self.recorded(op)
            label = self.tape.label(op)
            if isinstance(label, str):
                made.hint = label
        self.origins[self.counter] = Const(self.run.template + self.shift)
        for slot in self.carried:
            init = inits.get(slot) if self.run.first < self.run.template else \
                self.previous[len(self.previous) - slot]
            if init is None or isinstance(init, Op) and init in self.members:
                return False
            self.inits[slot] = init
        return not any(op in self.members for op in self.outside)

    def recorded(self, op: Op) -> Op:
        """The recorded op whose example value `op` has (a pass may have made it)."""
        return self.tape.origins.get(op, op)

    def _first_offset(self) -> int:
        """The counter's value less the iteration's: the user's counter for a
        loop over a range (`x[t + 1] - x[t]` reads as written), else the
        offset of the first index that moves with it (`xs[t]`), else what
        makes the counter start at 0."""
        if self.entry.start is not None:
            return self.entry.start
        for position, op in enumerate(self.model):
            if not isinstance(op, Call):
                continue
            for leaf, value in enumerate(leaves((op.args, op.kwargs))):
                if self.moving.get((position, leaf)):
                    return value - self.run.template
                if isinstance(value, Call) and is_index_read(value):
                    for item, index in enumerate(leaves(value.args[1])):
                        if self.moving.get(("read", id(value), item)):
                            return index - self.run.template
        return -self.run.first

    def _copy(self, position: int, op: Op) -> Op | None:
        if isinstance(op, Guard):
            return op.on(self._operand(op.value, None))
        if is_branch(op):
            return self._branch(position, op)
        return self._copied(op, position, lambda value, key: self._operand(value, key))

    def _copied(self, op: Call, place, operand) -> Call:
        """`op` with each operand as `operand(value, key)` gives it (`key`: an
        index's place, whose number may move with the iteration)."""
        leaf_number = iter(range(1 << 30))
        places = index_leaves(op)

        def each(value):
            leaf = next(leaf_number)
            moves = leaf in places or type(value) is CounterValue
            return operand(value, (place, leaf) if moves else None)

        everything = lambda v: not isinstance(v, (tuple, list, dict, slice))  # noqa: E731
        args = nested.map_leaves(op.args, each, everything)
        kwargs = nested.map_leaves(op.kwargs, each, everything)
        made = Call(op.fn, args, kwargs, op.shape, op.dtype, op.loc, op.depends)
        made.hint, made.last_name, made.dims = op.hint, op.last_name, op.dims
        made.selects = op.selects
        return made

    def _branch(self, position: int, op: Call) -> Call:
        """The branch of the body: the template's arms, and the arms it did not
        take from the first iteration of the run that took them."""
        arms = {}
        for arm in (True, False):
            source = (self.run.template, op) if op.fn.arms[arm] is not None \
                else self.run.arms.get((position, arm))
            if source is not None:
                number, call = source
                arms[arm] = self._arm(call, arm, (position, arm), number)
        befores = [self._operand(before, None) for before in op.fn.befores(op)]
        return self._branch_call(op, self._operand(op.args[0], None), arms, befores)

    @staticmethod
    def _branch_call(op: Call, test, arms: dict, befores: list) -> Call:
        captures = list(dict.fromkeys(c for arm in arms.values() for c in arm.captures))
        branch = Branch(op.fn.node, op.fn.names, arms, op.fn.guard, tuple(captures), op.loc)
        branch.n_befores = len(befores)
        made = Call(branch, (test, *captures, *befores), {}, None, op.dtype, op.loc,
                    op.depends)
        made.hint = op.hint
        return made

    def _arm(self, call: Call, arm: bool, prefix: tuple, number: int) -> Arm:
        """An arm of `call` (of iteration `number`, at `prefix`) reading the
        body's values and the copies of the arms around it (by place: an
        arm inside may come from another iteration than the arm around it)."""
        source = call.fn.arms[arm]
        values = dict(zip(call.fn.captures, call.fn.captured(call)))
        own: set[Op] = set()
        captures: list[Op] = []

        def operand(value, key):
            if isinstance(value, Op):
                value = values.get(value, value)
                place = self._arm_places(number).get(value)
                if place is not None and place in self._placed:
                    mapped = self._placed[place]
                    if mapped not in own and mapped not in captures:
                        captures.append(mapped)
                    return mapped
            mapped = self._operand(value, key, number)
            if isinstance(mapped, Op) and mapped not in own and mapped not in captures:
                captures.append(mapped)
            return mapped

        ops, origins = [], {}
        for position, each in enumerate(source.ops):
            place = prefix + (position,)
            if isinstance(each, Guard):
                copy = each.on(operand(each.value, None))
            elif is_branch(each):
                test = operand(each.args[0], None)
                arms = {}
                for a in (True, False):
                    inner = (number, each) if each.fn.arms[a] is not None \
                        else self.run.arms.get((place, a))
                    if inner is not None:
                        arms[a] = self._arm(inner[1], a, place + (a,), inner[0])
                befores = [operand(before, None) for before in each.fn.befores(each)]
                copy = self._branch_call(each, test, arms, befores)
                for inner in copy.fn.captured(copy):
                    if inner not in own and inner not in captures:
                        captures.append(inner)
            else:
                copy = self._copied(each, place, operand)
                if self._read_at_counter(copy):  # `X[t]`: read at every iteration, outside
                    self.ops.append(copy)
                    self.origins[copy] = source.origins.get(each, each)
                    self._placed[place] = copy
                    continue
            self._placed[place] = copy
            own.add(copy)
            ops.append(copy)
            origins[copy] = source.origins.get(each, each)
        results = tuple(operand(result, None) for result in source.results)
        made = {each: self._placed[prefix + (at,)] for at, each in enumerate(source.ops)}
        labels = {made[op]: label for op, label in source.labels.items() if op in made}
        read = [value for op in ops for value in operands(op)] + list(results)
        captures = [c for c in dict.fromkeys(read) if isinstance(c, Op) and c not in own]
        return Arm(tuple(captures), ops, results, labels, origins)

    def _read_at_counter(self, op: Op) -> bool:
        """A row read at the counter (`X[t]`, `X[t, 0]`) from an array with a
        row for every iteration: the body reads it whichever arm runs, so
        that its gradient is written at the counter (`dX[t] += ...`), not
        into an array of zeros the size of `X` in each iteration."""
        if not (isinstance(op, Call) and op.fn is operator.getitem and len(op.args) == 2
                and isinstance(op.args[0], Param) and op.args[0].role == OUTSIDE):
            return False
        index = op.args[1] if isinstance(op.args[1], tuple) else (op.args[1],)
        if not index or index[0] is not self.counter or any(
                isinstance(item, Op) or isinstance(item, (list, np.ndarray))
                for item in index[1:]):
            return False
        rows = sizes_of(op.args[0])[0] if op.args[0].shape else None
        count = self.entry.count
        if isinstance(rows, Dim):  # rows the code reads at run time: the count's own
            return count is not None and isinstance(count.size, Dim) \
                and rows.terms == count.size.terms and self.shift >= 0
        return isinstance(rows, int) and self.run.first + self.shift >= 0 \
            and self.run.last + self.shift < rows

    def _arm_places(self, number: int) -> dict:
        """Each op of an arm of iteration `number`'s branches -> its place
        (position, arm, position in the arm, ...)."""
        if number not in self._arm_ops:
            found: dict = {}

            def visit(ops: list, prefix: tuple) -> None:
                for at, op in enumerate(ops):
                    place = prefix + (at,) if prefix else at
                    if prefix:
                        found[op] = place
                    if is_branch(op):
                        for a, inner in op.fn.arms.items():
                            if inner is not None:
                                visit(inner.ops, (place if prefix else (place,)) + (a,))

            visit(self.by_iteration[number], ())
            self._arm_ops[number] = found
        return self._arm_ops[number]

    def _operand(self, value, key, number: int | None = None):
        """What the body reads for `value`, an operand of iteration `number`
        (the template's where None)."""
        template = number is None or number == self.run.template
        number = self.run.template if number is None else number
        if isinstance(value, Op):
            if template and value in self.made:
                return self.made[value]
            if not template:
                at = self._positions(number).get(value)
                if at is not None:
                    return self.made[self.model[at]]
            slot = (self.model_before if template else self._slots(number)).get(value)
            if slot is None and number < self.run.template:  # the run's first iteration
                slot = self._initial_slot(value)
            if slot is not None:
                if slot not in self.carried:
                    like = self.previous[len(self.previous) - slot]
                    self.carried[slot] = Param(CARRIED, like.shape, like.dtype,
                                               self._name(like), like.dims)
                    self.origins[self.carried[slot]] = self.recorded(like)
                return self.carried[slot]
            if is_index_read(value) and any(
                    self.moving.get(("read", id(value), item))
                    for item in range(len(leaves(value.args[1])))):
                return self._read(value, number)
            return self._outer(value)
        if key is not None and self.moving.get(key):
            return self._count(value - number - self.shift)
        if number < self.run.template and key is None:
            slot = self._initial_slot(value)
            if slot is not None:  # `loss = 0.0`, passed on by an arm of the first iteration
                return self._operand(self.previous[len(self.previous) - slot], None)
        return value

    def _initial_slot(self, value):
        """The carried slot the loop starts with `value` in, if only one does."""
        slots = [slot for slot, init in self.run_inits.items()
                 if init is value or not isinstance(value, Op) and not isinstance(init, Op)
                 and type(init) is type(value) and init == value]
        return slots[0] if len(slots) == 1 else None

    def _positions(self, number: int) -> dict:
        if number not in self._places:
            self._places[number] = {op: at for at, op in enumerate(self.by_iteration[number])}
        return self._places[number]

    def _slots(self, number: int) -> dict:
        return from_end(self.by_iteration.get(number - 1, []))

    def _read(self, value: Call, number: int) -> Op:
        """`xs[t]` in the body for a read made before the loop."""
        items = iter(range(1 << 30))

        def item(index):
            if self.moving.get(("read", id(value), next(items))):
                return self._count(index - number - self.shift)
            return index

        everything = lambda v: not isinstance(v, (tuple, list, dict, slice))  # noqa: E731
        index = nested.map_leaves(value.args[1], item, everything)
        made = Call(operator.getitem, (self._outer(value.args[0]), index), {}, value.shape,
                    value.dtype, value.loc, value.depends)
        made.hint, made.dims = self._name(value), value.dims
        self.ops.append(made)
        self.origins[made] = self.recorded(value)
        return made

    def _count(self, delta: int) -> Op:
        """The counter plus `delta`: an index that moves with the iteration."""
        if delta == 0:
            return self.counter
        if delta not in self.counted:
            made = Call(operator.add if delta > 0 else operator.sub, (self.counter, abs(delta)),
                        {}, (), np.dtype(int), None, False)
            self.ops.append(made)
            self.counted[delta] = made
        return self.counted[delta]

    def _outer(self, value: Op) -> Param:
        if value not in self.outside:
            param = self.outside[value] = Param(OUTSIDE, value.shape, value.dtype,
                                                self._name(value), value.dims)
            self.origins[param] = self.recorded(value)
        return self.outside[value]

    def _name(self, op: Op) -> str | None:
        label = self.tape.label(op)
        return label if isinstance(label, str) else None

    # -- the tape with the loop in place of the run ----------------------------

    def end_with_test(self, by_iteration: dict, users: dict, position: dict,
                      moving: dict) -> None:
        """A `while` loop's run that goes on to the loop's last test: the loop
        op runs until the test fails, however many iterations that takes, and
        the last test (the iteration after the run) goes into it."""
        number = self.run.last + 1
        if number != max(by_iteration) or self._outputs(users)[1] \
                or self.entry.state is None or self.entry.state.changes:
            return  # iterations after the run, values of one iteration read after it, or
            # state changed that the trace folded (counts.LoopState)
        ops = by_iteration[number]
        end = position[self.members_in_order[-1]] + 1
        if not ops or self.tape.ops[end: end + len(ops)] != ops \
                or any(user not in ops for op in ops for user in users.get(op, [])):
            return
        guard = self.model[len(ops) - 1] if len(ops) <= len(self.model) else None
        match = match_iteration(self.entry, by_iteration, number, self.run.template, relaxed=False,
                       test=True)
        if not isinstance(guard, Guard) or guard.convert is not bool or guard.expected is not \
                True or match is None or not agrees(match, dict(moving)):
            return
        self.test = self.made[guard]
        self.members_in_order = self.members_in_order + ops
        self.members |= set(ops)

    def _outputs(self, users: dict) -> tuple[dict, list]:
        """The ops of the run read after it: the carried values it ends with
        (by output number), and the body values read at some iteration."""
        run, model, length = self.run, self.model, len(self.model)
        slots = sorted(self.carried, reverse=True)
        finals, saved = {}, []
        for number, op in enumerate(self.members_in_order[: (run.last - run.first + 1) * length]):
            if not any(user is None or user not in self.members for user in users.get(op, [])):
                continue
            iteration, at = divmod(number, length)
            slot = length - at
            if iteration == run.last - run.first and slot in self.carried:
                finals[op] = slots.index(slot)
            elif self.made[model[at]] not in saved:
                saved.append(self.made[model[at]])
        for op in list(finals):  # a value read at each iteration: the last one too, alike
            if self.made[model[self.members_in_order.index(op) % length]] in saved:
                del finals[op]
        return finals, saved

    def _free_count(self, saved: list, counts: Counts, origins: dict) -> Op | None:
        """The int argument the loop's trip count is read from at run time, if
        its count is free (counts.py), the run goes on to the loop's last
        iteration and nothing after the loop reads a value of one iteration."""
        count = self.entry.count
        if count is None or not count.free or saved or self.run.last != count.value - 1 \
                or self.tape.signature is None and count.size is None:
            return None  # (in a loop's body, only a count made from sizes is read)
        return counts.read(count, origins, self.entry.header)

    def loop(self, slots: list, saved: list, start: int, stop: int,
             bound: int | None = None) -> Loop:
        """The loop op of the body, carrying `slots`, stacking `saved`."""
        model = self.model
        results = tuple(self.made[model[len(model) - slot]] for slot in slots)
        made = Loop(self.counter, tuple(self.carried[s] for s in slots),
                    tuple(self.outside.values()), self.ops, results, tuple(saved), start, stop,
                    loc=self.entry.header, labels={}, origins=self.origins, bound=bound,
                    test=self.test)
        made.entry = self.entry
        return made

    def arguments(self, slots: list, look) -> list:
        """The loop call's arguments: where each carried value starts, then
        what the body reads from outside."""
        return [look(a) if isinstance(a, Op) else a
                for a in (*(self.inits[s] for s in slots), *self.outside)]

    def emit(self, look, users: dict, replaced: dict, labels: dict, origins: dict,
             counts: Counts) -> list:
        """The loop call and its outputs read after it, in place of the run's
        ops; `replaced`, `labels` and `origins` learn what stands for what,
        `counts` the inputs trip counts are read from."""
        run, model, tape = self.run, self.model, self.tape
        members = self.members_in_order
        slots = sorted(self.carried, reverse=True)  # in the order the body makes them
        length = len(model)
        finals, saved = self._outputs(users)
        place = {op: number for number, op in enumerate(members)}
        count = self._free_count(saved, counts, origins) if self.test is None else None
        loop = self.loop(slots, saved, run.first + self.shift, run.last + 1 + self.shift,
                         None if count is None else self.shift - self.entry.count.less)
        if count is not None:
            loop.size = self.entry.count.size
        types, sizes = loop.output_types(), loop.output_dims()
        dtypes = [dtype for _, dtype in types]
        args = tuple(self.arguments(slots, look)) + (() if count is None else (count,))
        call = Call(loop, args, {}, None, np.result_type(*dtypes) if dtypes else None,
                    self.entry.header, True)
        new_ops, parts = [call], {}
        if count is not None:  # the iterations before the loop run; no negative count
            new_ops[:0] = ([count] if self.entry.count.size is not None else []) + counts.guard(
                self.entry.count, count, run.first + self.entry.count.less, call.loc)

        def part(k: int) -> Op:
            if k not in parts:
                shape, dtype = types[k]
                parts[k] = Call(operator.getitem, (call, k), {}, shape, dtype, call.loc, True)
                parts[k].dims = sizes[k] if has_dims(sizes[k]) else None
                new_ops.append(parts[k])
            return parts[k]

        for op in members:
            labels.pop(op, None)
            origins.pop(op, None)
        for op in members:
            if op in finals:
                made = part(finals[op])
            elif any(user is None or user not in self.members for user in users.get(op, [])):
                iteration, at = divmod(place[op], length)
                stack = part(len(slots) + saved.index(self.made[model[at]]))
                made = Call(operator.getitem, (stack, iteration), {}, op.shape, op.dtype,
                            op.loc, op.depends)
                made.dims = op.dims
                new_ops.append(made)
            else:
                continue
            made.hint = op.hint
            label = tape.label(op)
            if label is not None:
                labels[made] = label
            origins[made] = tape.origins.get(op, op)
            replaced[op] = made
        return new_ops


def _unrollable(op: Op) -> bool:
    """Work that stays unrolled: a value no array can stack (a tuple), one
    computed under a `with` or `try` block, a random draw or output (the
    reverse pass runs the loop again on the example, which must not draw
    other numbers or print twice)."""
    if op.loc is not None and op.loc.context:
        return True
    if isinstance(op, Guard):
        return False
    if is_branch(op):  # a branch holds what its arms hold
        return any(_unrollable(each) for arm in op.fn.arms.values() if arm is not None
                   for each in arm.ops)
    return op.shape is None or op.dtype is None or has_effect(op.fn)


def _without_dead_reads(ops, output, labels, origins, outside):
    """Drop the reads of `for x in xs` made before the loop, which the body now makes."""
    users = readers(ops, output)
    dead = {op for op in ops if is_index_read(op) and not users.get(op) and op not in outside}
    ops = [op for op in ops if op not in dead]
    kept = set(ops)
    return ops, {op: v for op, v in labels.items() if op in kept}, \
        {op: v for op, v in origins.items() if op in kept}
