"""Gradients that are exactly zero stay exactly zero.

A template that routes a gradient to one side only writes it as
`np.where(mask, g, 0)`. When a later gradient step multiplies or divides that
by something infinite or NaN where the mask is off, `0 * inf` gives NaN, for
a value the primal never used: the "safe sqrt" `np.where(x > 1,
np.sqrt(x - 1), x)` got a NaN gradient at x = 0.5, where finite differences
give 1. Such a step is linear in the masked operand and elementwise, so it
commutes with the mask: `np.where(mask, g, 0) / z` is rewritten
`np.where(mask, g / z, 0)`, which is exactly zero off the mask. Applied to
gradient ops only (the primal's own arithmetic keeps its NaNs), and again on
each result, so the mask travels down a chain of such steps.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.ir.tape import Call, Op, Tape
from yota_src.passes.rewrite import rewrite

# elementwise steps linear in the operands at these positions
_LINEAR_IN = {operator.mul: (0, 1), np.multiply: (0, 1), operator.truediv: (0,),
              np.divide: (0,), operator.neg: (0,), np.negative: (0,)}


def keep_masked_zeros(tape: Tape) -> Tape:
    def visit(op: Op, forward: bool, original: Op):
        if forward or not isinstance(op, Call) or op.kwargs or op.fn not in _LINEAR_IN:
            return op
        for position in _LINEAR_IN[op.fn]:
            if position < len(op.args) and _is_masked(op.args[position]):
                return _moved_inside(op, position)
        return op

    return rewrite(tape, visit)


def _is_masked(value) -> bool:
    """`np.where(mask, g, 0)`."""
    return isinstance(value, Call) and value.fn is np.where and not value.kwargs \
        and len(value.args) == 3 and not isinstance(value.args[2], Op) \
        and isinstance(value.args[2], (int, float)) and value.args[2] == 0


def _moved_inside(op: Call, position: int) -> tuple:
    mask, inner_value, _ = op.args[position].args
    args = list(op.args)
    args[position] = inner_value
    shapes = [np.shape(a) if not isinstance(a, Op) else a.shape for a in args]
    inner = Call(op.fn, tuple(args), {}, np.broadcast_shapes(*shapes), op.dtype, op.loc,
                 op.depends)
    outer = Call(np.where, (mask, inner, 0), {}, op.shape, op.dtype, op.loc, op.depends)
    return inner, outer
