"""Dead code: ops nothing returned or guarded depends on.

Random draws stay even when unused: each advances its generator, and the
generated code must consume random numbers as the function does. Output
(print, warnings, logging) stays: the user sees it at every call."""

from __future__ import annotations

from yota_src.core.primitives import has_effect
from yota_src.ir.tape import Call, Guard, Op, Tape, iter_refs, operands


def live_ops(tape: Tape) -> set:
    """The ops what the tape returns or guards depends on, and its effects."""
    live = set(iter_refs(tape.output))
    for op in reversed(tape.ops):
        if isinstance(op, Guard) or op in live or (
                isinstance(op, Call) and has_effect(op.fn)):
            live.add(op)
            live.update(operands(op))
    return live


def eliminate_dead_code(tape: Tape) -> Tape:
    live = live_ops(tape)
    ops = [op for op in tape.ops if op in live]
    n_forward = sum(1 for op in tape.ops[: tape.n_forward] if op in live)
    dead = set(tape.ops) - live
    labels = {op: label for op, label in tape.labels.items()  # "the gradient of" a dead op: none
              if op in live and not (isinstance(label, Op) and label in dead)}
    origins = {op: origin for op, origin in tape.origins.items() if op in live}
    return tape.replace(ops=ops, n_forward=n_forward, labels=labels, origins=origins)
