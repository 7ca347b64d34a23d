"""Branches: the arms of an `if` decided by the data, where the iterations
of a rolled loop took both, as one op; elsewhere, the marks undone.

The trace marks each arm it ran of an `if` decided by the data inside a
loop, and joins the names it assigns after it (tracing/branches.py). The
roll pass closes each marked run of the statement into a branch op of one
arm (`close_branches`), so that iterations that took other arms line up op
for op and their arms merge into one branch (roll.py); what is left of one
arm opens again (`open_branches`): its guard, its ops, as traced. Joins
that no branch holds are dropped (`drop_joins`): the code is as it was.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.branches import Arm, Branch, is_branch
from yota_src.ir.dims import has_dims
from yota_src.ir.tape import Call, Guard, Op, Tape, map_refs, operands, readers
from yota_src.passes.bodies import in_loop_bodies
from yota_src.passes.rewrite import rewrite, with_operands


def drop_joins(tape: Tape) -> Tape:
    """Each join, the value its arm gave: one op fewer per name joined."""
    tape = _without_joins(tape)
    return in_loop_bodies(_without_joins)(tape)


def _without_joins(tape: Tape, keep: set | None = None) -> Tape:
    """The tape without its joins (but those in `keep`): their readers read
    what each joined, an op or a number."""
    joins = [op for op in tape.ops if is_join(op) and (keep is None or op not in keep)]
    if not joins:
        return tape
    if all(isinstance(op.args[0], Op) for op in joins):
        dropped = set(joins)
        return rewrite(tape, lambda op, forward, original:
                       op.args[0] if original in dropped else op)
    replaced: dict[Op, object] = {}
    look = lambda value: replaced.get(value, value)  # noqa: E731
    labels, origins, ops = dict(tape.labels), dict(tape.origins), []
    for op in tape.ops:
        new = with_operands(op, look)
        if op in joins:
            replaced[op] = look(op.args[0])
            if isinstance(replaced[op], Op):
                _move(labels, origins, op, replaced[op], fresh=False)
            continue
        if isinstance(new, Guard) and not isinstance(new.value, Op):
            continue  # a decision on a number the path fixes: it holds
        if new is not op:
            replaced[op] = new
            _move(labels, origins, op, new)
        ops.append(new)
    kept = set(ops)
    return tape.replace(ops=ops, output=map_refs(tape.output, look),
                        labels={op: look(v) if isinstance(v, Op) else v
                                for op, v in labels.items() if op in kept},
                        origins={op: v for op, v in origins.items() if op in kept})


def is_join(op: Op) -> bool:
    return isinstance(op, Call) and op.fn is primitives.joined


# --- closing: each marked run of an `if`, one branch op ------------------------

def close_branches(tape: Tape) -> Tape:
    """The tape with each marked `if` a branch op of the arm it ran, the
    innermost first (an arm may hold the branch of an `if` inside it)."""
    tape = _without_dead_joins(tape)
    depths = sorted({len(op.loc.branches) for op in tape.ops if _test_of(op) is not None},
                    reverse=True)
    for depth in depths:
        tape = _closed(tape, depth)
    return tape


def _without_dead_joins(tape: Tape) -> Tape:
    """The tape without the joins of names nothing reads again but other
    joins (`margin` after `if j == y[i]: continue`, dead after its use):
    each would be one more variable a rolled loop carries."""
    users = readers(tape.ops, tape.output)
    live: set[Op] = set()
    for op in reversed(tape.ops):
        if is_join(op) and any(user is None or not is_join(user) or user in live
                               for user in users.get(op, [])):
            live.add(op)
    return _without_joins(tape, keep=live)


def _test_of(op: Op):
    """The entry of the `if` whose decision `op` guards, if it is marked."""
    if isinstance(op, Guard) and op.loc is not None and op.loc.branches \
            and op.loc.branches[-1][1] == "test" and op.convert is bool:
        return op.loc.branches[-1][0]
    return None


def _mark(op: Op, depth: int):
    marks = op.loc.branches if op.loc is not None else ()
    return marks[depth - 1] if len(marks) >= depth else None


def _closed(tape: Tape, depth: int) -> Tape:
    ops, users = tape.ops, readers(tape.ops, tape.output)
    labels, origins = dict(tape.labels), dict(tape.origins)
    replaced: dict[Op, Op] = {}
    look = lambda op: replaced.get(op, op)  # noqa: E731
    made, at = [], 0
    while at < len(ops):
        op = ops[at]
        entry = _test_of(op) if op.loc is not None and len(op.loc.branches) == depth else None
        region = _region(ops, at, entry, depth, users) if entry is not None else None
        if region is None:
            new = with_operands(op, look)
            if new is not op:
                replaced[op] = new
                _move(labels, origins, op, new)
            made.append(new)
            at += 1
            continue
        arm_ops, joins = region
        guard = with_operands(op, look)
        call, parts = _branch(guard, entry, arm_ops, joins, look, labels, origins)
        made += [call, *parts]
        for join, part in zip(joins, parts):
            replaced[join] = part
            _move(labels, origins, join, part)
        at += 1 + len(arm_ops) + len(joins)
    return tape.replace(ops=made, output=map_refs(tape.output, look),
                        labels={op: look(v) if isinstance(v, Op) else v
                                for op, v in labels.items()}, origins=origins)


def _region(ops: list, at: int, entry, depth: int, users: dict):
    """The arm's ops and the joins after the guard at `at`, or None where
    they are not all there, side by side, read by nothing else."""
    end, arm_ops = at + 1, []
    while end < len(ops) and _mark(ops[end], depth) in ((entry, True), (entry, False)):
        arm_ops.append(ops[end])
        end += 1
    joins = []
    while end < len(ops) and _mark(ops[end], depth) == (entry, "join") and is_join(ops[end]):
        joins.append(ops[end])
        end += 1
    if any(join.hint not in entry.names for join in joins):
        return None
    inside = set(arm_ops) | set(joins)
    for op in arm_ops:
        if isinstance(op, Call) and primitives.has_effect(op.fn) \
                or any(user is None or user not in inside for user in users.get(op, [])):
            return None  # read after the `if` but through a join, or an effect
    return arm_ops, joins


def _branch(guard: Guard, entry, arm_ops: list, joins: list, look, labels: dict,
            origins: dict) -> tuple[Call, list]:
    """The branch call for one marked run of `if`, and its parts (the joins)."""
    made: dict[Op, Op] = {}
    inner = lambda v: made.get(v) or look(v)  # noqa: E731
    for op in arm_ops:
        made[op] = with_operands(op, inner)
    results = tuple(inner(join.args[0]) for join in joins)
    captures: list[Op] = []
    for op in [*made.values(), *results]:
        for operand in operands(op) if op in made.values() else (op,):
            if isinstance(operand, Op) and operand not in made.values() \
                    and operand not in captures:
                captures.append(operand)
    arm = Arm(captures, list(made.values()), results,
              labels={new: labels[old] for old, new in made.items() if old in labels},
              origins={new: origins.get(old, old) for old, new in made.items()})
    taken = _mark(arm_ops[0], len(guard.loc.branches))[1] if arm_ops else guard.expected
    names = tuple(join.hint for join in joins)
    branch = Branch(entry.node, names, {taken: arm}, guard, tuple(captures), guard.loc)
    befores = tuple(look(join.args[1]) if isinstance(join.args[1], Op) else join.args[1]
                    for join in joins)
    branch.n_befores = len(befores)
    types = branch.output_types()
    call = Call(branch, (guard.value, *captures, *befores), {}, None,
                np.result_type(*[d for _, d in types]) if types else None, guard.loc, True)
    parts = []
    for k, join in enumerate(joins):
        part = Call(operator.getitem, (call, k), {}, join.shape, join.dtype, join.loc, True)
        part.hint, part.dims = join.hint, join.dims if has_dims(join.dims) else None
        parts.append(part)
    return call, parts


def _move(labels: dict, origins: dict, old: Op, new: Op, fresh: bool = True) -> None:
    """`new` stands for `old`: its name (where it has none) and, where it is
    an op made here (`fresh`), its example value (an op already there keeps
    its own: it may be what `old` was computed from)."""
    if old in labels:
        labels.setdefault(new, labels.pop(old))
    origin = origins.pop(old, old)
    if fresh:
        origins.setdefault(new, origin)


# --- opening: a branch of one arm, its guard and ops again --------------------

def open_branches(tape: Tape, bodies: bool = True) -> Tape:
    """Each branch of one arm, as the guard and the ops it was made from
    (reading what its call reads now), in the tape and (`bodies`) in loop
    bodies."""
    tape = _opened(tape)
    return in_loop_bodies(_opened)(tape) if bodies else tape


def _opened(tape: Tape) -> Tape:
    if not any(is_branch(op) for op in tape.ops):
        return tape
    labels, origins = dict(tape.labels), dict(tape.origins)
    ops, look = _open(tape.ops, labels, origins)
    kept = set(ops)
    return tape.replace(ops=ops, output=map_refs(tape.output, look),
                        labels={op: look(v) if isinstance(v, Op) else v
                                for op, v in labels.items() if op in kept},
                        origins={op: v for op, v in origins.items() if op in kept})


def _open(ops: list, labels: dict, origins: dict) -> tuple[list, object]:
    """`ops` with each branch of one arm opened, and those of the arms of
    the others; `labels` and `origins` learn the ops made. Also gives what
    stands for each op now."""
    replaced: dict[Op, object] = {}
    look = lambda op: replaced.get(op, op)  # noqa: E731
    made = []
    for op in ops:
        new = with_operands(op, look)
        if isinstance(new, Guard) and not isinstance(new.value, Op):
            continue  # a decision on a number the path fixes: it holds
        if is_branch(new) and new.fn.both:
            new = _with_arms_opened(new)
        if new is not op:
            replaced[op] = new
            _move(labels, origins, op, new)
        if isinstance(new, Call) and new.fn is operator.getitem and new.args \
                and isinstance(new.args[0], tuple):  # a part of a branch opened
            replaced[op] = new.args[0][new.args[1]]
            if isinstance(replaced[op], Op):
                _move(labels, origins, op, replaced[op], fresh=False)
            continue
        if not is_branch(new) or new.fn.both:
            made.append(new)
            continue
        branch, arm = new.fn, new.fn.arms[new.fn.taken()]
        values = dict(zip(branch.captures, new.args[1:]))
        inner = lambda v: values.get(v, v)  # noqa: E731
        guard = branch.guard if new.args[0] is branch.guard.value else \
            branch.guard.on(new.args[0])
        made.append(guard)
        arm_ops, arm_look = _open(arm.ops, dict(arm.labels), dict(arm.origins))
        for arm_op in arm_ops:
            copy = with_operands(arm_op, inner)
            values[arm_op] = copy
            if arm_op in arm.labels:
                labels[copy] = arm.labels[arm_op]
            origins[copy] = arm.origins.get(arm_op, arm_op)
            made.append(copy)
        replaced[op] = replaced[new] = tuple(inner(arm_look(r)) for r in arm.results)
    return made, look


def _with_arms_opened(call: Call) -> Call:
    """A branch of two arms whose arms hold no branch of one arm."""
    branch, arms, changed = call.fn, {}, False
    for taken, arm in branch.arms.items():
        labels, origins = dict(arm.labels), dict(arm.origins)
        ops, look = _open(arm.ops, labels, origins)
        results = tuple(look(r) for r in arm.results)
        changed = changed or ops != arm.ops
        arms[taken] = Arm(arm.captures, ops, results, labels, origins)
    if not changed and not branch.n_befores:
        return call
    made = Call(Branch(branch.node, branch.names, arms, branch.guard, branch.captures,
                       branch.loc), (call.args[0], *branch.captured(call)), call.kwargs,
                call.shape, call.dtype, call.loc, call.depends)  # (the names before: done)
    made.hint = call.hint
    return made
