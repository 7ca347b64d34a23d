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
from dataclasses import dataclass, field

import numpy as np

from yota_src.core import nested, primitives
from yota_src.core.primitives import has_effect
from yota_src.ir.dims import Count, Dim, has_dims
from yota_src.ir.iterations import inner_loops, iterations
from yota_src.ir.loops import CARRIED, COUNTER, OUTSIDE, Loop, Param, is_loop
from yota_src.ir.tape import Call, Const, Guard, Op, Tape, map_refs, readers
from yota_src.passes.bodies import in_loop_bodies
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
    if not any(is_loop(op) for op in rolled.ops):
        return rolled
    # a loop inside a rolled loop: its iterations are in the body, rolled there
    return in_loop_bodies(_roll_inner)(rolled)


def _shortest(entry, shortest: int) -> int:
    """A loop over a size the code may read at run time rolls from two
    iterations: written out, it would serve the example's size alone."""
    count = getattr(entry, "count", None)
    return min(shortest, 2) if count is not None and count.size is not None and count.free \
        else shortest


def _roll_inner(body: Tape) -> Tape:
    return roll_loops(body)


def _rolled(tape: Tape, shortest: int, counts: Counts) -> Tape:
    tape = counted_at_run_time(tape, counts)
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
    return _rebuilt(tape, bodies, users, counts) if bodies else tape


@dataclass
class _Run:
    first: int
    template: int
    last: int


@dataclass
class _Match:
    """What matching one iteration against the template found."""

    inits: dict = field(default_factory=dict)  # carried slot -> the value it starts from
    moving: dict = field(default_factory=dict)  # an index place -> whether it moves


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


def next_run(entry, by_iteration: dict, lowest: int, shortest: int):
    """The first run of at least `shortest` matching iterations from `lowest` on."""
    for template in sorted(n for n in by_iteration if n >= lowest):
        if template - 1 not in by_iteration:
            continue
        matches, last, moving = [], template, {}
        while last + 1 in by_iteration:
            match = _match(entry, by_iteration, last + 1, template, relaxed=False)
            if match is None or not _agrees(match, moving):
                break
            matches.append(match)
            last += 1
        first = template
        before = _match(entry, by_iteration, template - 1, template, relaxed=True) \
            if template - 1 >= lowest else None
        if before is not None and _agrees(before, moving):
            matches.append(before)
            first = template - 1
        if last - first + 1 >= shortest:
            return _Run(first, template, last), matches
    return None


def _agrees(match: _Match, moving: dict) -> bool:
    """Whether the indices that stay or move in `match` do so in the run so
    far (`moving`, which learns those it did not know): `x[t % n]` moves with
    the iteration until it wraps around to where it started."""
    if any(moving.get(key, moves) != moves for key, moves in match.moving.items()):
        return False
    moving.update(match.moving)
    return True


def _match(entry, by_iteration: dict, number: int, template: int, relaxed: bool,
           test: bool = False) -> _Match | None:
    """How iteration `number` does what `template` does, or None where it does
    not. `relaxed`: it is the first of the run, so where the template reads a
    value carried from the previous iteration, it may read any value from
    before the run (the value the loop starts from). `test`: it is a `while`
    loop's last test, which does what the template does up to its guard,
    where the data went the other way."""
    ops, model = by_iteration[number], by_iteration[template]
    if test:
        model = model[: len(ops)]
    if len(ops) != len(model):
        return None
    here = {op: position for position, op in enumerate(ops)}
    model_here = {op: position for position, op in enumerate(model)}
    before = _from_end(by_iteration.get(number - 1, []))
    model_before = _from_end(by_iteration[template - 1])
    match = _Match()
    step = number - template

    def same(value, model_value, key) -> bool:
        if isinstance(model_value, Op):
            if model_value in model_here:
                return here.get(value) == model_here[model_value]
            if model_value in model_before:
                slot = model_before[model_value]
                if before.get(value) == slot and not relaxed:
                    return True
                if relaxed and isinstance(value, Op) and value not in here \
                        and _typed(value) == _typed(model_value):
                    return match.inits.setdefault(slot, value) is value
                if relaxed and _static_number(value) and model_value.shape == ():
                    return _equal(match.inits.setdefault(slot, value), value)  # `total = 0.0`
                return False
            if value is model_value:
                return True
            return _moving_read(value, model_value, step, key, match)
        if isinstance(value, Op):
            return False
        if key is not None and type(value) is int and type(model_value) is int:
            offset = value - model_value
            if offset not in (0, step):
                return False
            return match.moving.setdefault(key, offset == step) == (offset == step)
        if isinstance(model_value, np.ndarray):
            return value is model_value
        return type(value) is type(model_value) and _equal(value, model_value)

    for position, (op, model_op) in enumerate(zip(ops, model)):
        if type(op) is not type(model_op) or not _same_type(op, model_op, here, model_here) \
                or _line(op) != _line(model_op) \
                or inner_loops(op, entry) != inner_loops(model_op, entry):
            return None
        if isinstance(op, Guard):
            other_way = test and position == len(ops) - 1
            if op.convert is not model_op.convert or not same(op.value, model_op.value, None) \
                    or _same_decision(op, model_op, here, model_here) == other_way:
                return None
        elif not isinstance(op, Call) or op.fn is not model_op.fn \
                or not _same_shape((op.args, op.kwargs), (model_op.args, model_op.kwargs)):
            return None
        else:
            index_leaves = _index_leaves(model_op)
            pairs = zip(_leaves((op.args, op.kwargs)), _leaves((model_op.args, model_op.kwargs)))
            for leaf, (value, model_value) in enumerate(pairs):
                key = (position, leaf) if leaf in index_leaves else None
                if not same(value, model_value, key):
                    return None
    return match


def _static_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool)


def _moving_read(value, model_value, step: int, key, match: _Match) -> bool:
    """`xs[t]` read before the loop (the items of `for x in xs`): the same
    array, at static positions that stay or move with the iteration."""
    if not (_is_index_read(value) and _is_index_read(model_value)
            and value.args[0] is model_value.args[0]
            and _same_shape(value.args, model_value.args)):
        return False
    for item, (a, b) in enumerate(zip(_leaves(value.args[1]), _leaves(model_value.args[1]))):
        if type(a) is int and type(b) is int:
            moves = a - b == step
            if a != b and not moves:
                return False
            if match.moving.setdefault(("read", id(model_value), item), moves) != moves:
                return False
        elif not _equal(a, b):
            return False
    return True


def _is_index_read(op) -> bool:
    return isinstance(op, Call) and op.fn is operator.getitem and len(op.args) == 2 \
        and not op.kwargs and isinstance(op.args[0], Op) \
        and not any(isinstance(leaf, Op) for leaf in _leaves(op.args[1]))


def _index_leaves(op: Call) -> set[int]:
    """The leaf numbers of an index of `op` (a static int there may move): of
    a read, `x[t]`, or a write, `out[t] = v`."""
    if not (op.fn is operator.getitem and len(op.args) == 2
            or op.fn in primitives.INDEX_STORES and len(op.args) == 3):
        return set()
    before = len(list(_leaves(op.args[0])))
    return set(range(before, before + len(list(_leaves(op.args[1])))))


def _leaves(structure) -> list:
    return list(nested.leaves(structure, lambda v: not isinstance(v, (tuple, list, dict,
                                                                       slice))))


def _same_shape(a, b) -> bool:
    return nested.shape_of(a, lambda v: 0) == nested.shape_of(b, lambda v: 0)


def _equal(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is b
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


def _same_type(op: Op, model: Op, here: dict, model_here: dict) -> bool:
    """Whether `op` has `model`'s dtype and shape, but for sizes that are
    the counts of masks the two iterations make at the same place (the
    masks of a stable sigmoid select other numbers at each step)."""
    if _typed(op) == _typed(model):
        return True
    if op.dims is None or model.dims is None or len(op.dims) != len(model.dims) \
            or np.dtype(op.dtype) != np.dtype(model.dtype):
        return False
    return all(a == b if not isinstance(a, Dim) or not isinstance(b, Dim)
               else a.terms == b.terms or _masks_at(a, here) == _masks_at(b, model_here) != ()
               for a, b in zip(op.dims, model.dims))


def _same_decision(guard: Guard, model: Guard, here: dict, model_here: dict) -> bool:
    """Whether `guard` expects what `model` does: a mask's count (a shape
    guard the code drops where the count is read at run time) may differ."""
    if _equal(guard.expected, model.expected):
        return True
    return bool(guard.sizes) and bool(model.sizes) and guard.convert is np.shape \
        and _same_type(guard.value, model.value, here, model_here)


def _masks_at(size: Dim, here: dict) -> tuple:
    """Where in its iteration the mask of each count in `size` is made: () for
    a size with another term, or a mask made elsewhere."""
    facts = size.facts
    places = []
    for monomial, coefficient in facts.terms(size).items():
        if coefficient != 1 or len(monomial) != 1 or not isinstance(monomial[0], Count) \
                or here.get(facts.mask_of.get(monomial[0])) is None:
            return ()
        places.append(here[facts.mask_of[monomial[0]]])
    return tuple(sorted(places))


def _typed(op: Op) -> tuple:
    return op.shape, None if op.dtype is None else np.dtype(op.dtype)


def _line(op: Op):
    loc = op.loc
    return None if loc is None else (loc.filename, loc.lineno, loc.col, loc.context)


def _from_end(ops: list) -> dict:
    return {op: len(ops) - position for position, op in enumerate(ops)}


# --- making the loop -------------------------------------------------------

def planned(tape: Tape, position: dict, entry, by_iteration: dict, run: _Run,
             matches: list, taken: set, users: dict):
    """The body of the loop for `run`, or None where it stays unrolled."""
    members = [op for n in range(run.first, run.last + 1) for op in by_iteration[n]]
    start = position[members[0]]
    if tape.ops[start: start + len(members)] != members or any(map(_unrollable, members)) \
            or any(op in taken for op in members):
        return None  # interleaved with other work, or work a loop op does not hold
    moving: dict = {}
    if not all(_agrees(match, moving) for match in matches):
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

    def __init__(self, tape: Tape, entry, by_iteration: dict, run: _Run, moving: dict,
                 members: list):
        self.tape, self.entry, self.run, self.moving = tape, entry, run, moving
        self.members_in_order, self.members = members, set(members)
        self.model = by_iteration[run.template]
        self.previous = by_iteration[run.template - 1]
        self.model_before = _from_end(self.previous)
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

    def build(self, inits: dict) -> bool:
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
            for leaf, value in enumerate(_leaves((op.args, op.kwargs))):
                if self.moving.get((position, leaf)):
                    return value - self.run.template
                if isinstance(value, Call) and _is_index_read(value):
                    for item, index in enumerate(_leaves(value.args[1])):
                        if self.moving.get(("read", id(value), item)):
                            return index - self.run.template
        return -self.run.first

    def _copy(self, position: int, op: Op) -> Op | None:
        if isinstance(op, Guard):
            return op.on(self._operand(op.value, None))
        leaf_number = iter(range(1 << 30))
        index_leaves = _index_leaves(op)

        def operand(value):
            leaf = next(leaf_number)
            key = (position, leaf) if leaf in index_leaves else None
            return self._operand(value, key)

        everything = lambda v: not isinstance(v, (tuple, list, dict, slice))  # noqa: E731
        args = nested.map_leaves(op.args, operand, everything)
        kwargs = nested.map_leaves(op.kwargs, operand, everything)
        made = Call(op.fn, args, kwargs, op.shape, op.dtype, op.loc, op.depends)
        made.hint, made.last_name, made.dims = op.hint, op.last_name, op.dims
        made.selects = op.selects
        return made

    def _operand(self, value, key):
        if isinstance(value, Op):
            if value in self.made:
                return self.made[value]
            if value in self.model_before:
                slot = self.model_before[value]
                if slot not in self.carried:
                    self.carried[slot] = Param(CARRIED, value.shape, value.dtype,
                                               self._name(value), value.dims)
                    self.origins[self.carried[slot]] = self.recorded(value)
                return self.carried[slot]
            if _is_index_read(value) and any(
                    self.moving.get(("read", id(value), item))
                    for item in range(len(_leaves(value.args[1])))):
                return self._read(value)
            return self._outer(value)
        if key is not None and self.moving.get(key):
            return self._count(value - self.run.template - self.shift)
        return value

    def _read(self, value: Call) -> Op:
        """`xs[t]` in the body for a read made before the loop."""
        items = iter(range(1 << 30))

        def item(index):
            number = next(items)
            if self.moving.get(("read", id(value), number)):
                return self._count(index - self.run.template - self.shift)
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
        match = _match(self.entry, by_iteration, number, self.run.template, relaxed=False,
                       test=True)
        if not isinstance(guard, Guard) or guard.convert is not bool or guard.expected is not \
                True or match is None or not _agrees(match, dict(moving)):
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
    return op.shape is None or op.dtype is None or has_effect(op.fn)


def _without_dead_reads(ops, output, labels, origins, outside):
    """Drop the reads of `for x in xs` made before the loop, which the body now makes."""
    users = readers(ops, output)
    dead = {op for op in ops if _is_index_read(op) and not users.get(op) and op not in outside}
    ops = [op for op in ops if op not in dead]
    kept = set(ops)
    return ops, {op: v for op, v in labels.items() if op in kept}, \
        {op: v for op, v in origins.items() if op in kept}
