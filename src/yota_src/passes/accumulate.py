"""Scattered index gradients accumulate into one buffer.

`dx = scatter(zeros, i, a) + scatter(zeros, j, b)` becomes one buffer written
twice (`dx[i] += a; dx[j] += b`), as a person would write it, instead of one
zero array per use of `x` and a sum of them.
"""

from __future__ import annotations

import operator

from yota_src.core import primitives
from yota_src.ir.tape import Call, Op, Tape, readers, same_shape
from yota_src.passes.rewrite import rewrite


def accumulate_scatters(tape: Tape) -> Tape:
    uses = {op: len(users) for op, users in readers(tape.ops, tape.output).items()}

    def scatter_into_zeros(op) -> bool:
        return (isinstance(op, Call) and op.fn is primitives.index_add and uses.get(op) == 1
                and isinstance(op.args[0], Call) and op.args[0].fn in primitives.FRESH_BUFFERS
                and uses.get(op.args[0]) == 1)

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if not (isinstance(op, Call) and op.fn is operator.add and not op.kwargs):
            return op
        pairs = zip(zip(op.args, original.args), zip(op.args[::-1], original.args[::-1]))
        for (into, _), (scatter, scatter_original) in pairs:
            if isinstance(into, Op) and same_shape(into, op) and into.dtype == op.dtype \
                    and scatter_into_zeros(scatter_original):
                _, index, values = scatter.args
                merged = Call(primitives.index_add, (into, index, values), {}, op.shape,
                              op.dtype, op.loc, op.depends)
                return merged
        return op

    return rewrite(tape, visit)
