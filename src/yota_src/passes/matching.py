"""Which iterations of a loop did the same work: what rolling them into
one loop op (roll.py) stands on.

Two iterations match where they apply the same primitives, op for op, to
operands in the same roles: an op of the same iteration at the same
position, the value the previous iteration left at the same place (a
carried variable), the same value from before the loop, or an index that
moves with the iteration (`x[t]`). An `if` decided by the data is one
branch op per iteration (passes/branches.py): the arms two iterations both
took must match; an arm only one took must match the arm of the first
iteration of the run that took it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np

from yota_src.core import nested, primitives
from yota_src.ir.branches import is_branch
from yota_src.ir.dims import Count, Dim
from yota_src.ir.iterations import CounterValue, inner_loops
from yota_src.ir.tape import Call, Guard, Op


@dataclass
class Run:
    first: int
    template: int
    last: int
    # (position of a branch, arm) -> (iteration, branch call): the arms of
    # branches the template did not take, from the first iteration that did
    arms: dict = field(default_factory=dict)


@dataclass
class Match:
    """What matching one iteration against the template found."""

    inits: dict = field(default_factory=dict)  # carried slot -> the value it starts from
    moving: dict = field(default_factory=dict)  # an index place -> whether it moves
    # (position of a branch, arm) -> (iteration, branch call): arms it took first
    arms: dict = field(default_factory=dict)
    # (position of a branch, arm): an arm with ops that two iterations took, so
    # that the numbers it reads are known to stay or move with the iteration
    confirmed: set = field(default_factory=set)


def next_run(entry, by_iteration: dict, lowest: int, shortest: int):
    """The first run of at least `shortest` matching iterations from `lowest` on."""
    for template in sorted(n for n in by_iteration if n >= lowest):
        if template - 1 not in by_iteration:
            continue
        matches, last, moving, arms = [], template, {}, {}
        while last + 1 in by_iteration:
            match = match_iteration(entry, by_iteration, last + 1, template, relaxed=False,
                                    arms=arms)
            if match is None or not agrees(match, moving, arms):
                break
            matches.append(match)
            last += 1
        first = template
        before = match_iteration(entry, by_iteration, template - 1, template, relaxed=True,
                                 arms=arms) if template - 1 >= lowest else None
        if before is not None and agrees(before, moving, arms):
            matches.append(before)
            first = template - 1
        confirmed = set().union(*(match.confirmed for match in matches))
        if not _all_confirmed(by_iteration[template], arms, confirmed):
            continue
        if last - first + 1 >= shortest:
            return Run(first, template, last, arms), matches
    return None


def _all_confirmed(ops: list, arms: dict, confirmed: set) -> bool:
    """Whether every arm with ops the run's loop would hold was taken by two
    of its iterations: one iteration alone does not tell a number that moves
    with the iteration from one that stays."""
    def arms_of(ops: list, prefix: tuple):
        for position, op in enumerate(ops):
            if not is_branch(op):
                continue
            place = prefix + (position,) if prefix else position
            for arm, ops_of_arm in op.fn.arms.items():
                if ops_of_arm is not None:
                    yield place, arm, ops_of_arm
                    yield from arms_of(ops_of_arm.ops, (place if prefix else (place,)) + (arm,))

    used = list(arms_of(ops, ()))
    for (place, arm), (_, call) in arms.items():
        inner = call.fn.arms[arm]
        used.append((place, arm, inner))
        used += arms_of(inner.ops, (place if isinstance(place, tuple) else (place,)) + (arm,))
    return all(not ops_of_arm.ops or (place, arm) in confirmed
               for place, arm, ops_of_arm in used)


def agrees(match: Match, moving: dict, arms: dict | None = None) -> bool:
    """Whether the indices that stay or move in `match` do so in the run so
    far (`moving`, which learns those it did not know): `x[t % n]` moves with
    the iteration until it wraps around to where it started. `arms` learns
    the arms of branches the match took first."""
    if any(moving.get(key, moves) != moves for key, moves in match.moving.items()):
        return False
    moving.update(match.moving)
    if arms is not None:
        for place, known in match.arms.items():
            arms.setdefault(place, known)
    return True


def match_iteration(entry, by_iteration: dict, number: int, template: int, relaxed: bool,
           test: bool = False, arms: dict | None = None) -> Match | None:
    """How iteration `number` does what `template` does, or None where it does
    not. `relaxed`: it is the first of the run, so where the template reads a
    value carried from the previous iteration, it may read any value from
    before the run (the value the loop starts from). `test`: it is a `while`
    loop's last test, which does what the template does up to its guard,
    where the data went the other way. `arms`: the arm of each branch the
    run took where the template did not, by (position, arm) -> (iteration,
    branch call) (passes/branches.py): an iteration that takes it too does
    what that one did there."""
    ops, model = by_iteration[number], by_iteration[template]
    if test:
        model = model[: len(ops)]
    if len(ops) != len(model):
        return None
    match = Match()
    pair = _Pair(entry, by_iteration, number, template, relaxed, match, arms or {})
    return match if pair.ops(ops, model, (), test) else None


class _Pair:
    """Two iterations compared op for op: what each value of one stands for
    in the other."""

    def __init__(self, entry, by_iteration: dict, number: int, model_number: int,
                 relaxed: bool, match: Match, arms: dict):
        self.entry, self.by_iteration = entry, by_iteration
        self.number, self.model_number = number, model_number
        self.relaxed, self.match, self.arms = relaxed, match, arms
        self.here = _positions(by_iteration[number])
        self.model_here = _positions(by_iteration[model_number])
        self.before = from_end(by_iteration.get(number - 1, []))
        self.model_before = from_end(by_iteration.get(model_number - 1, []))
        self.step = number - model_number

    def same(self, value, model_value, key) -> bool:
        here, model_here, match = self.here, self.model_here, self.match
        if isinstance(model_value, Op):
            if model_value in model_here:
                return here.get(value) == model_here[model_value]
            if model_value in self.model_before:
                slot = self.model_before[model_value]
                if self.before.get(value) == slot and not self.relaxed:
                    return True
                if self.relaxed and isinstance(value, Op) and value not in here \
                        and _typed(value) == _typed(model_value):
                    return match.inits.setdefault(slot, value) is value
                if self.relaxed and _static_number(value) and model_value.shape == ():
                    return _equal(match.inits.setdefault(slot, value), value)  # `total = 0.0`
                return False
            if value is model_value:
                return True
            return _moving_read(value, model_value, self.step, key, match)
        if isinstance(value, Op):
            return False
        if key is not None and type(value) in _INTS and type(model_value) in _INTS:
            offset = value - model_value
            if offset not in (0, self.step):
                return False
            return match.moving.setdefault(key, offset == self.step) == (offset == self.step)
        if isinstance(model_value, np.ndarray):
            return value is model_value
        return type(value) is type(model_value) and _equal(value, model_value)

    def ops(self, ops: list, model: list, prefix: tuple, test: bool = False,
            look=None, model_look=None) -> bool:
        """Whether `ops` do what `model` does (the ops of an arm, at `prefix`,
        read the branch's captures through `look` and `model_look`)."""
        here, model_here = self.here, self.model_here
        for position, (op, model_op) in enumerate(zip(ops, model)):
            place = prefix + (position,) if prefix else position
            if type(op) is not type(model_op) or not _same_type(op, model_op, here, model_here) \
                    or _line(op) != _line(model_op) \
                    or inner_loops(op, self.entry) != inner_loops(model_op, self.entry):
                return False
            if isinstance(op, Guard):
                other_way = test and position == len(ops) - 1
                if op.convert is not model_op.convert \
                        or not self.same(_through(look, op.value),
                                         _through(model_look, model_op.value), None) \
                        or _same_decision(op, model_op, here, model_here) == other_way:
                    return False
            elif is_branch(op) or is_branch(model_op):
                if not self.branch(op, model_op, place, look, model_look):
                    return False
            elif not isinstance(op, Call) or op.fn is not model_op.fn \
                    or not _same_shape((op.args, op.kwargs), (model_op.args, model_op.kwargs)):
                return False
            else:
                places = index_leaves(model_op)
                pairs = zip(leaves((op.args, op.kwargs)),
                            leaves((model_op.args, model_op.kwargs)))
                for leaf, (value, model_value) in enumerate(pairs):
                    key = (place, leaf) if leaf in places \
                        or type(model_value) is CounterValue else None
                    if not self.same(_through(look, value), _through(model_look, model_value),
                                     key):
                        return False
        return True

    def branch(self, op: Op, model_op: Op, place, look, model_look) -> bool:
        """Two runs of one `if`: the arms both took do the same work; an arm
        only one took does what the run's first iteration to take it did."""
        if not (is_branch(op) and is_branch(model_op)) or op.fn.node is not model_op.fn.node \
                or op.fn.names != model_op.fn.names \
                or not self.same(_through(look, op.args[0]),
                                 _through(model_look, model_op.args[0]), None) \
                or op.fn.n_befores != model_op.fn.n_befores \
                or not all(self.same(_through(look, a), _through(model_look, b), None)
                           for a, b in zip(op.fn.befores(op), model_op.fn.befores(model_op))):
            return False
        for arm in (True, False):
            ops, model_ops = op.fn.arms[arm], model_op.fn.arms[arm]
            if ops is None:
                continue
            if model_ops is not None:
                if not self.arm(op, model_op, arm, place, look, model_look):
                    return False
                continue
            known = self.arms.get((place, arm)) or self.match.arms.get((place, arm))
            if known is None:
                if self.relaxed and ops.ops:  # the run's first iteration: an arm that only
                    return False  # passes its values on, or one another iteration took
                self.match.arms[(place, arm)] = (self.number, op)
                continue
            number, other = known
            pair = _Pair(self.entry, self.by_iteration, self.number, number, self.relaxed,
                         self.match, self.arms)
            pair.enter(place)
            if not pair.arm(op, other, arm, place, None, None):
                return False
        return True

    def enter(self, place) -> None:
        """Know the ops of the arms around the branch at `place` in both
        iterations, by position (an arm's branch reads them)."""
        if not isinstance(place, tuple):
            return
        for depth in range(2, len(place), 2):
            prefix = place[:depth]
            for ops, here in ((self.by_iteration[self.number], self.here),
                              (self.by_iteration[self.model_number], self.model_here)):
                call = ops[prefix[0]]
                for step in range(1, len(prefix) - 1, 2):
                    call = call.fn.arms[prefix[step]].ops[prefix[step + 1]]
                arm = call.fn.arms[prefix[-1]] if is_branch(call) else None
                if arm is not None:
                    here.update(_positions(arm.ops, prefix))

    def arm(self, op: Op, model_op: Op, arm: bool, place, look, model_look) -> bool:
        ops, model_ops = op.fn.arms[arm], model_op.fn.arms[arm]
        if len(ops.ops) != len(model_ops.ops):
            return False
        inner = _captured(op, look)
        model_inner = _captured(model_op, model_look)
        prefix = (place if isinstance(place, tuple) else (place,)) + (arm,)
        if ops.ops:
            self.match.confirmed.add((place, arm))
        self.here.update(_positions(ops.ops, prefix))
        self.model_here.update(_positions(model_ops.ops, prefix))
        if not self.ops(ops.ops, model_ops.ops, prefix, look=inner, model_look=model_inner):
            return False
        return all(self.same(_through(inner, a), _through(model_inner, b), None)
                   for a, b in zip(ops.results, model_ops.results))


def _captured(call: Call, look) -> dict:
    """What an arm's captures stand for now: the call's arguments."""
    values = dict(zip(call.fn.captures, call.args[1:]))
    if look:
        values = {k: look.get(v, v) if isinstance(v, Op) else v for k, v in values.items()}
    return values


def _through(look, value):
    return look.get(value, value) if look and isinstance(value, Op) else value


def _positions(ops: list, prefix: tuple = ()) -> dict:
    return {op: prefix + (position,) if prefix else position
            for position, op in enumerate(ops)}


_INTS = (int, CounterValue)


def _static_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool)


def _moving_read(value, model_value, step: int, key, match: Match) -> bool:
    """`xs[t]` read before the loop (the items of `for x in xs`): the same
    array, at static positions that stay or move with the iteration."""
    if not (is_index_read(value) and is_index_read(model_value)
            and value.args[0] is model_value.args[0]
            and _same_shape(value.args, model_value.args)):
        return False
    for item, (a, b) in enumerate(zip(leaves(value.args[1]), leaves(model_value.args[1]))):
        if type(a) is int and type(b) is int:
            moves = a - b == step
            if a != b and not moves:
                return False
            if match.moving.setdefault(("read", id(model_value), item), moves) != moves:
                return False
        elif not _equal(a, b):
            return False
    return True


def is_index_read(op) -> bool:
    return isinstance(op, Call) and op.fn is operator.getitem and len(op.args) == 2 \
        and not op.kwargs and isinstance(op.args[0], Op) \
        and not any(isinstance(leaf, Op) for leaf in leaves(op.args[1]))


def index_leaves(op: Call) -> set[int]:
    """The leaf numbers of an index of `op` (a static int there may move): of
    a read, `x[t]`, or a write, `out[t] = v`."""
    if not (op.fn is operator.getitem and len(op.args) == 2
            or op.fn in primitives.INDEX_STORES and len(op.args) == 3):
        return set()
    before = len(list(leaves(op.args[0])))
    return set(range(before, before + len(list(leaves(op.args[1])))))


def leaves(structure) -> list:
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


def from_end(ops: list) -> dict:
    return {op: len(ops) - position for position, op in enumerate(ops)}


