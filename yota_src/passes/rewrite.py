"""The one walk every rewriting pass shares."""

from __future__ import annotations

from collections.abc import Callable

from ..tape import Call, Guard, Op, Tape, map_refs


def rewrite(tape: Tape, visit: Callable[[Op, bool, Op], Op]) -> Tape:
    """Walk the ops in order; `visit(op, is_forward, original)` returns the op
    to keep, an earlier op that replaces it everywhere, or a new op that takes
    its place (or a tuple of new ops, the last taking its place, the others
    placed before it). `original` is the op as it stood in `tape`, before its operands
    were updated, for passes that analysed the tape beforehand.

    Ops whose operands were replaced are copied, never changed, so a tape
    handed out earlier (the forward tape of a GradientResult) stays intact.
    """
    replaced: dict[Op, Op] = {}
    look = lambda op: replaced.get(op, op)  # noqa: E731
    ops, placed, n_forward = [], set(), 0
    for index, op in enumerate(tape.ops):
        op = _with_operands(op, look)
        forward = index < tape.n_forward
        kept = visit(op, forward, tape.ops[index])
        if isinstance(kept, tuple):
            *before, kept = kept
            ops.extend(before)
            placed.update(before)
            n_forward += forward * len(before)
        if kept is not op and kept in placed:
            replaced[tape.ops[index]] = look(kept)
            continue
        if kept is not tape.ops[index]:
            replaced[tape.ops[index]] = kept
        ops.append(kept)
        placed.add(kept)
        n_forward += forward
    for op in ops:  # gradient names follow the ops they name (backward ops only)
        if op.grad_of is not None:
            op.grad_of = look(op.grad_of)
    return Tape(ops, map_refs(tape.output, look), tape.signature, n_forward)


def _with_operands(op: Op, look) -> Op:
    if isinstance(op, Call):
        args, kwargs = map_refs(op.args, look), map_refs(op.kwargs, look)
        if _same(args, op.args) and _same(kwargs, op.kwargs):
            return op
        clone = Call(op.fn, args, kwargs, op.shape, op.dtype, op.loc, op.depends)
    elif isinstance(op, Guard):
        value = look(op.value)
        if value is op.value:
            return op
        clone = Guard(value, op.expected, op.convert, op.text, op.loc, op.within)
    else:
        return op
    clone.hint, clone.grad_of = op.hint, op.grad_of
    return clone


def _same(new, old) -> bool:
    if isinstance(new, (tuple, list)):
        return len(new) == len(old) and all(_same(a, b) for a, b in zip(new, old))
    if isinstance(new, dict):
        return all(_same(new[k], old[k]) for k in new)
    if isinstance(new, slice):
        return _same((new.start, new.stop, new.step), (old.start, old.stop, old.step))
    return new is old
