"""Products of a loop-invariant matrix with the counter's row of an array are
done for every row at once, before the loop.

`h = np.tanh(Wx @ xs[t] + Wh @ h)` multiplies the same `Wx` by one row of
`xs` per step: a small matrix-vector product, mostly call overhead. One
product before the loop, `xs @ Wx.T`, does them all in one call into BLAS,
and the step reads its row, as a hand-written RNN does. The loop body reads
nothing but its parameters (loops.py), so the product is a new outside value
of the loop.
"""

from __future__ import annotations

import operator

from .. import primitives
from ..loops import OUTSIDE, Param, is_loop
from ..tape import Call, Op, Tape, map_refs
from .rewrite import rewrite, with_operands


def hoist_row_products(tape: Tape) -> Tape:
    def visit(op: Op, forward: bool, original: Op):
        if not is_loop(op) or op.fn.test is not None:
            return op
        return _hoisted(op) or op

    return rewrite(tape, visit)


def _hoisted(call: Call):
    """(the products, the loop reading their rows), or None."""
    loop = call.fn
    first = len(loop.carried)
    outer = dict(zip(loop.outside, call.args[first:first + len(loop.outside)]))
    made, params, products, replaced = [], [], [], {}
    look = lambda value: replaced.get(value, value)  # noqa: E731
    ops = []
    for op in loop.ops:
        op = with_operands(op, look)
        product = _row_product(op, loop, outer)
        if product is not None:
            before, param = _all_rows(op, product, outer)
            made += before
            params.append(param)
            products.append(before[-1])
            row = Call(operator.getitem, (param, loop.counter), {}, op.shape, op.dtype, op.loc,
                       op.depends)
            replaced[loop.ops[len(ops)]] = row
            op = row
        elif op is not loop.ops[len(ops)]:
            replaced[loop.ops[len(ops)]] = op
        ops.append(op)
    if not params:
        return None
    rolled = loop.replace(
        ops=ops, outside=loop.outside + tuple(params),
        results=map_refs(loop.results, look), saved=map_refs(loop.saved, look),
        labels={look(op): label for op, label in loop.labels.items()},
        origins={look(op): origin for op, origin in loop.origins.items()})
    end = first + len(loop.outside)
    args = (*call.args[:end], *products, *call.args[end:])
    rewritten = Call(rolled, args, call.kwargs, call.shape, call.dtype, call.loc, call.depends)
    rewritten.hint = call.hint
    return (*made, rewritten)


def _row_product(op: Op, loop, outer: dict):
    """(matrix param, rows param, matrix first) where `op` is `W @ S[t]` or
    `S[t] @ W` of outside values, at the counter itself, over most rows."""
    if not (isinstance(op, Call) and op.fn is operator.matmul and not op.kwargs
            and len(op.args) == 2):
        return None
    for matrix_first in (True, False):
        matrix, row = op.args if matrix_first else op.args[::-1]
        if not (isinstance(matrix, Param) and matrix.role == OUTSIDE and len(matrix.shape) == 2
                and isinstance(row, Call) and row.fn is operator.getitem and not row.kwargs
                and len(row.args) == 2 and row.args[1] is loop.counter):
            continue
        rows = row.args[0]
        if not (isinstance(rows, Param) and rows.role == OUTSIDE and rows is not matrix
                and len(rows.shape) in (2, 3) and 2 * loop.count >= rows.shape[0]
                and isinstance(outer.get(rows), Op) and isinstance(outer.get(matrix), Op)):
            continue
        return matrix, rows, matrix_first
    return None


def _all_rows(op: Call, product, outer: dict) -> tuple[list, Param]:
    """The ops computing every row's product before the loop, and the
    parameter the body reads them as."""
    matrix, rows, matrix_first = product
    W, S = outer[matrix], outer[rows]
    depends = W.depends or S.depends
    made = []
    if matrix_first and len(rows.shape) == 2:  # W @ S[t] for every t: S @ W.T
        W = Call(primitives.T, (W,), {}, W.shape[::-1], W.dtype, op.loc, W.depends)
        made.append(W)
        left, right = S, W
    else:  # S[t] @ W: S @ W; W @ S[t] of matrices: W @ S, broadcast over the rows
        left, right = (W, S) if matrix_first else (S, W)
    shape = (S.shape[0], *op.shape)
    made.append(Call(operator.matmul, (left, right), {}, shape, op.dtype, op.loc, depends))
    return made, Param(OUTSIDE, shape, op.dtype)
