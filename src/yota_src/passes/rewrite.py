"""The one walk every rewriting pass shares."""

from __future__ import annotations

from collections.abc import Callable

from yota_src.ir.dims import facts_of
from yota_src.ir.shapes import infer_dims
from yota_src.ir.tape import Call, Guard, Op, Tape, map_refs, operands


def rewrite(tape: Tape, visit: Callable[[Op, bool, Op], Op]) -> Tape:
    """Walk the ops in order; `visit(op, is_forward, original)` returns the op
    to keep, an earlier op that replaces it everywhere, or a new op that takes
    its place (or a tuple of new ops, the last taking its place, the others
    placed before it). `original` is the op as it stood in `tape`, before its operands
    were updated, for passes that analysed the tape beforehand.

    Ops whose operands were replaced are copied, never changed, so a tape
    handed out earlier (the forward tape of a GradientResult) stays intact.
    A replaced op's label (its user's name, or what it is the gradient of)
    passes to the op that takes its place where that has none of its own: a
    gradient label never to a forward op, which must not read as a gradient.
    """
    replaced: dict[Op, Op] = {}
    look = lambda op: replaced.get(op, op)  # noqa: E731
    ops, placed, forward_ops = [], set(), set()
    labels, origins, recorded = dict(tape.labels), dict(tape.origins), set(tape.ops)
    for index, op in enumerate(tape.ops):
        original = tape.ops[index]
        op = with_operands(op, look)
        forward = index < tape.n_forward
        kept = visit(op, forward, original)
        if isinstance(kept, tuple):
            *before, kept = kept
            for made in before:
                _sized(made, recorded, tape)
            ops.extend(before)
            placed.update(before)
            if forward:
                forward_ops.update(before)
        if kept is not original:
            _sized(kept, recorded, tape)
            replaced[original] = kept
            if kept not in recorded:  # a new op computing what `original` did
                origins[kept] = tape.origins.get(original, original)
            _pass_label(labels, tape.label(original), kept, kept in forward_ops or (
                forward and kept not in placed))
        if kept in placed:
            continue
        ops.append(kept)
        placed.add(kept)
        if forward:
            forward_ops.add(kept)
    labels = {op: look(label) if isinstance(label, Op) else label
              for op, label in labels.items() if op in placed}
    origins = {op: origin for op, origin in origins.items() if op in placed}
    return tape.replace(ops=ops, output=map_refs(tape.output, look),
                        n_forward=len(forward_ops), labels=labels, origins=origins)


def _pass_label(labels: dict, label, to: Op, forward: bool) -> None:
    if label is None or labels.get(to, to.hint) is not None:
        return
    if isinstance(label, Op) and forward:
        return
    labels[to] = label


def with_operands(op: Op, look) -> Op:
    if isinstance(op, Call):
        if all(look(operand) is operand for operand in operands(op)):
            return op  # (most ops: nothing to rebuild)
        args, kwargs = map_refs(op.args, look), map_refs(op.kwargs, look)
        if _same(args, op.args) and _same(kwargs, op.kwargs):
            return op
        clone = Call(op.fn, args, kwargs, op.shape, op.dtype, op.loc, op.depends)
        clone.selects = op.selects
    elif isinstance(op, Guard):
        value = look(op.value)
        if value is op.value:
            return op
        clone = op.on(value)
    else:
        return op
    clone.hint = op.hint
    clone.dims = op.dims
    return clone


def _same(new, old) -> bool:
    """The same structure holding the very same values (every pass asks this
    of every operand: it stops at the first difference)."""
    if new is old:
        return True
    if type(new) is not type(old) or not isinstance(new, (tuple, list, dict, slice)):
        return False
    if isinstance(new, dict):
        return list(new) == list(old) and all(_same(new[key], old[key]) for key in new)
    if isinstance(new, slice):
        new, old = (new.start, new.stop, new.step), (old.start, old.stop, old.step)
    return len(new) == len(old) and all(_same(a, b) for a, b in zip(new, old))


def _sized(op: Op, recorded: set, tape: Tape) -> None:
    """A new op's run-time sizes, from its operands' (ir/shapes.py): a pass
    need not say them."""
    if op not in recorded and op.dims is None:
        op.dims = infer_dims(op, getattr(tape.signature, "dims", None)
                             or facts_of(*operands(op)))  # a loop body's tape has none
