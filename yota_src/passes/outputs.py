"""Returned gradients own their memory.

A gradient that is an argument itself (`d/dW sum(W * x)` is `x`), a read-only
broadcast view, or the same array as another returned gradient would surprise
a user who updates it in place; such outputs are copied.
"""

from __future__ import annotations

import numpy as np

from ..tape import Call, Input, Op, Tape, map_refs


def own_outputs(tape: Tape) -> Tape:
    if not isinstance(tape.output, tuple) or len(tape.output) < 2:
        return tape
    value, *gradients = tape.output
    ops = list(tape.ops)
    labels = dict(tape.labels)
    seen = {value} if isinstance(value, Op) else set()

    def owned(op):
        if not isinstance(op, Op):
            return op
        shared = op in seen or isinstance(op, Input) or (
            isinstance(op, Call) and op.fn is np.broadcast_to)
        seen.add(op)
        if not shared or op.shape == ():
            return op
        copy = Call(np.copy, (op,), {}, op.shape, op.dtype, op.loc, op.depends)
        ops.append(copy)  # codegen names it after the argument it is the gradient of
        seen.add(copy)
        if isinstance(labels.get(op), Op):  # `dW = np.copy(t1)`, not `dW_2 = np.copy(dW)`
            labels[copy] = labels.pop(op)
        return copy

    output = (value,) + tuple(map_refs(g, owned) for g in gradients)
    return tape.replace(ops=ops, output=output, n_forward=tape.n_forward, labels=labels)
