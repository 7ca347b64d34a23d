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

import numpy as np

from yota_src.core import primitives
from yota_src.ir.loops import OUTSIDE, Param, is_loop, is_loop_output
from yota_src.ir.tape import Call, Op, Tape, map_refs, readers, sizes
from yota_src.passes.rewrite import rewrite, with_operands


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
    outer = _outside_values(call)
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


def _outside_values(call: Call) -> dict:
    """Each outside parameter of the loop's body -> the value the call passes it."""
    loop = call.fn
    first = len(loop.carried)
    return dict(zip(loop.outside, call.args[first:first + len(loop.outside)]))


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


def batch_row_updates(tape: Tape) -> Tape:
    """`dxs[t] += t1 @ Wx` at every step, for a buffer that starts as zeros
    and is written once per row: after the loop, `dxs = t1s @ Wx`, one
    product of the stacked `t1`s (the adjoint of the hoisted input product)."""
    plans: dict[Op, tuple] = {}  # rewritten loop call -> (slot, stack index, matrix, order)

    def visit(op: Op, forward: bool, original: Op):
        if is_loop(op) and op.fn.test is None:
            batched = _batched(op)
            if batched is not None:
                call, slot, stack_index, matrix, matrix_first = batched
                plans[call] = (slot, stack_index, matrix, matrix_first)
                return call
            return op
        if is_loop_output(op) and op.args[0] in plans:
            return _output_after(op, plans[op.args[0]])
        return op

    return rewrite(tape, visit)


def _batched(call: Call):
    loop = call.fn
    n = len(loop.carried)
    outer = _outside_values(call)
    body_readers = readers(loop.ops, (loop.results, loop.saved))
    for slot, (param, result, init) in enumerate(zip(loop.carried, loop.results, call.args)):
        update = _row_update(loop, param, result, body_readers, outer)
        if update is None or not _zeros_over_the_rows(call, init):
            continue
        value, matrix, matrix_first = update
        saved = loop.saved if value in loop.saved else loop.saved + (value,)
        rolled = loop.replace(
            carried=loop.carried[:slot] + loop.carried[slot + 1:],
            results=loop.results[:slot] + loop.results[slot + 1:], saved=saved,
            ops=[op for op in loop.ops if op is not result],
            labels={op: label for op, label in loop.labels.items() if op not in (param, result)},
            origins={op: origin for op, origin in loop.origins.items()
                     if op not in (param, result)})
        args = call.args[:slot] + call.args[slot + 1:]
        made = Call(rolled, args, call.kwargs, call.shape, call.dtype, call.loc, call.depends)
        made.hint = call.hint
        return made, slot, n - 1 + saved.index(value), outer[matrix], matrix_first
    return None


def _row_update(loop, param: Param, result, body_readers: dict, outer: dict):
    """(value, matrix param, matrix first) where the carried `param` is only
    `param[t] += value @ W` (or `W @ value`), W an outside matrix."""
    if not (isinstance(result, Call) and result.fn is primitives.index_add
            and result.args[0] is param and result.args[1] is loop.counter
            and body_readers.get(param) == [result] and body_readers.get(result) == [None]
            and loop.start == 0):
        return None
    product = result.args[2]
    if not (isinstance(product, Call) and product.fn is operator.matmul and not product.kwargs
            and len(product.args) == 2 and product.shape == param.shape[1:]):
        return None
    for matrix_first in (False, True):
        matrix, value = product.args if matrix_first else product.args[::-1]
        if isinstance(matrix, Param) and matrix.role == OUTSIDE and len(matrix.shape) == 2 \
                and isinstance(outer.get(matrix), Op) and isinstance(value, Op) \
                and not isinstance(value, Param) and len(value.shape) == 1:
            return value, matrix, matrix_first
    return None


def _zeros_over_the_rows(call: Call, init) -> bool:
    """`init` is zeros with a row for each step: `np.zeros_like(xs)` with the
    count `len(xs)`, or zeros of as many rows as the loop's fixed count."""
    loop = call.fn
    if not (isinstance(init, Call) and init.fn in (np.zeros, np.zeros_like)
            and init.kwargs in ({}, {"dtype": init.dtype})):
        return False
    if loop.bound is None:
        return init.shape[0] == loop.count
    if loop.size is not None:  # a count computed from sizes: zeros of as many rows
        rows = sizes(init)[0] if init.shape else None
        return rows is not None and rows == loop.stack_dims(init, more=False)[0]
    count = call.args[-1]
    return loop.bound == 0 and init.fn is np.zeros_like and isinstance(count, Call) \
        and count.fn is len and count.args == (init.args[0],)


def _output_after(op: Call, plan: tuple):
    """A loop output read from the rewritten loop; the batched buffer's, as
    the product of the stacked values with the matrix."""
    slot, stack_index, matrix, matrix_first = plan
    call, index = op.args
    if index < slot:
        return op
    if index > slot:
        return Call(operator.getitem, (call, index - 1), {}, op.shape, op.dtype, op.loc,
                    op.depends)
    value = call.fn.saved[stack_index - len(call.fn.carried)]
    stack = Call(operator.getitem, (call, stack_index), {}, (op.shape[0], *value.shape),
                 value.dtype, op.loc, op.depends)
    made = [stack]
    if matrix_first:  # W @ v for every row: stack @ W.T
        matrix = Call(primitives.T, (matrix,), {}, matrix.shape[::-1], matrix.dtype, op.loc,
                      matrix.depends)
        made.append(matrix)
    product = Call(operator.matmul, (stack, matrix), {}, op.shape, op.dtype, op.loc, op.depends)
    return (*made, product)
