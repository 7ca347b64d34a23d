"""Seed algebra: constant-filled arrays fold into the computations they feed.

The reverse sweep starts from `np.ones(shape)` (the gradient of a sum), and
templates broadcast scalars (`np.full(shape, 1 / n)` for a mean). Multiplied
through, they give `np.ones((3, 8)) * 2 * y` and matmuls with a ones matrix
where a person writes `2 * y` and a row sum. A constant-filled array
propagates as a constant through elementwise ops, shape changes and
reductions; where it meets a computed value it becomes a scalar operand
(`np.where(mask, 0, 1.0)`), and `ones @ B` becomes a broadcast column sum.
Gradient ops only: the primal is the user's code as written.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.dims import Dim, plain
from yota_src.ir.tape import Call, Const, Op, Tape, iter_refs, same_shape, sizes
from yota_src.passes.rewrite import rewrite

# elementwise primitives, by the positions of their value operands
_ELEMENTWISE = {fn: (0, 1) for fn in (operator.add, operator.sub, operator.mul,
                                      operator.truediv, operator.pow, np.add, np.subtract,
                                      np.multiply, np.divide, np.maximum, np.minimum)}
_ELEMENTWISE.update({operator.neg: (0,), np.negative: (0,), np.where: (1, 2)})
_SHAPE_CHANGES = (np.broadcast_to, np.expand_dims, np.reshape, np.squeeze, np.ravel,
                  primitives.T, np.transpose, primitives.astype)
_MATMUL = (operator.matmul, np.matmul, np.dot)


def fold_seeds(tape: Tape) -> Tape:
    fills: dict[Op, float] = {}  # constant-filled gradient ops -> their value
    outputs = set(iter_refs(tape.output))

    def visit(op: Op, forward: bool, original: Op):
        if not isinstance(op, Call) or not _floating(op):
            return op
        value = _source_fill(op)
        if value is not None:  # the primal's own np.ones is a constant for the gradient too
            fills[op] = value
            return op
        if forward:
            return op
        folded = _folded(op, fills)
        if isinstance(folded, Const) and original in outputs:
            return op  # a returned gradient keeps its type: a 0-d array is no float
        if isinstance(folded, Call) and _source_fill(folded) is not None:
            fills[folded] = _source_fill(folded)
        return op if folded is None else folded

    return rewrite(tape, visit)


def _folded(op: Call, fills: dict):
    """What replaces `op` given its constant-filled operands, or None."""
    constant = lambda a: fills.get(a) if isinstance(a, Op) else _scalar(a)  # noqa: E731
    if op.fn in _SHAPE_CHANGES and op.args and _in(op.args[0], fills):
        return _fill(fills[op.args[0]], op)
    if op.fn in _SHAPE_CHANGES and op.args and isinstance(op.args[0], Call) \
            and op.args[0].fn is np.full and isinstance(op.args[0].args[1], Op) \
            and op.dtype == op.args[0].dtype:  # a fill counted at run time, reshaped
        return Call(np.full, (sizes(op), op.args[0].args[1]), {}, op.shape, op.dtype, op.loc,
                    op.depends)
    if op.fn in (np.sum, np.mean) and len(op.args) == 1 and _in(op.args[0], fills) \
            and set(op.kwargs) <= {"axis", "keepdims"}:
        source = op.args[0]
        if source.dims is not None:
            return _summed_fill(op, source, fills[source])
        count = math.prod(source.shape) // max(math.prod(op.shape), 1)
        value = op.dtype.type(fills[source]) * op.dtype.type(count if op.fn is np.sum else 1)
        return _fill(float(value), op)
    if op.fn in _MATMUL + (np.outer,) and len(op.args) == 2 and not op.kwargs:
        if any(_in(a, fills) and fills[a] == 0 for a in op.args):
            return _fill(0.0, op)  # a product with zeros
        return (_outer if op.fn is np.outer else _matmul)(op, fills)
    if op.fn in primitives.INDEX_STORES and len(op.args) == 3 and _in(op.args[2], fills):
        buffer, index, values = op.args  # `dx[i] += 0.5` broadcasts as the filled array did
        if op.fn is primitives.index_add and fills[values] == 0 and isinstance(buffer, Op) \
                and same_shape(buffer, op) and buffer.dtype == op.dtype:
            return buffer  # adding zeros
        return Call(op.fn, (buffer, index, _python(fills[values])), {}, op.shape, op.dtype,
                    op.loc, op.depends)
    if op.fn not in _ELEMENTWISE or op.kwargs:
        return None
    positions = _ELEMENTWISE[op.fn]
    if not any(_in(op.args[i], fills) for i in positions if i < len(op.args)):
        return None
    if all(constant(a) is not None for a in op.args):  # everything known: a new fill
        with np.errstate(all="ignore"):
            value = float(op.fn(*(op.dtype.type(constant(a)) for a in op.args)))
        return _fill(value, op) if np.isfinite(value) else None
    args = tuple(_python(fills[a]) if _in(a, fills) else a
                 for a in op.args)
    return _elementwise(op, args)


def _summed_fill(op: Call, source: Op, value: float):
    """A sum (or mean) of a constant array whose size is read at run time:
    `np.full((N,), float(K))` for the sum of `np.ones((N, K))` over its rows,
    the count spelled from the sizes; None where it does not divide exactly."""
    if op.fn is np.mean:
        return _fill(value, op)
    facts = next(d.facts for d in source.dims if isinstance(d, Dim))
    count = facts.divide(math.prod(source.dims), math.prod(sizes(op)))
    if count is None or op.shape == ():
        return None
    if op.dtype != np.float64:
        return None
    made = [Call(float, (count,), {}, (), np.dtype(np.float64), op.loc, op.depends)]
    if value != 1:
        made.append(Call(operator.mul, (made[-1], _python(value)), {}, (),
                         np.dtype(np.float64), op.loc, op.depends))
    return (*made, Call(np.full, (sizes(op), made[-1]), {}, op.shape, op.dtype, op.loc,
                        op.depends))


def _elementwise(op: Call, args: tuple):
    """`op` with scalars for its filled operands: broadcast back to its shape
    where the other operands alone give a smaller one; None where NumPy would
    give another dtype."""
    shapes = [a.shape for a in args if isinstance(a, Op)]
    values = [a.dtype if isinstance(a, Op) else plain(a) for i, a in enumerate(args)
              if i in _ELEMENTWISE[op.fn]]
    if np.result_type(*values) != op.dtype:
        return None
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    inner = Call(op.fn, args, {}, shape, op.dtype, op.loc, op.depends)
    if shape == op.shape:
        return inner
    return inner, Call(np.broadcast_to, (inner, sizes(op)), {}, op.shape, op.dtype, op.loc,
                       op.depends)


def _matmul(op: Call, fills: dict):
    """`ones @ B` is a broadcast column sum of B, `A @ ones` a row sum of A."""
    left, right = op.args
    if not (isinstance(left, Op) and isinstance(right, Op)) \
            or not 1 <= len(left.shape) <= 2 or not 1 <= len(right.shape) <= 2:
        return None
    if left in fills and right not in fills:
        value, other, axis = fills[left], right, 0  # contracted over B's first axis
        keep = False
    elif right in fills and left not in fills:
        value, other, axis = fills[right], left, len(left.shape) - 1
        keep = len(left.shape) == 2 and len(right.shape) == 2  # (m, 1), broadcast along rows
    else:
        return None
    if other.dtype != op.dtype or op.dtype.itemsize < 4:
        return None  # (float16: the matmul sums in float32, a sum would overflow)
    return _scaled_to(op, [_sum(other, axis, keep, op)], value)


def _outer(op: Call, fills: dict):
    """`np.outer(v, ones)` repeats `v` down the columns, `np.outer(ones, v)` along rows."""
    left, right = op.args
    if not (isinstance(left, Op) and isinstance(right, Op)) or len(left.shape) != 1 \
            or len(right.shape) != 1 or _in(left, fills) == _in(right, fills):
        return None
    value, other = (fills[left], right) if _in(left, fills) else (fills[right], left)
    if other.dtype != op.dtype:
        return None
    if other is not left:  # a row
        return _scaled_to(op, [], value, other)
    column = Call(np.expand_dims, (other, 1), {}, other.shape + (1,), op.dtype, op.loc,
                  op.depends)
    return _scaled_to(op, [column], value)


def _scaled_to(op: Call, ops: list, value: float, last: Op | None = None):
    """`ops` (new ops, the last the result so far, or `last` if given), times
    `value` unless it is 1, broadcast to `op`'s shape unless it has it: what
    replaces `op`, new ops first."""
    last = ops[-1] if last is None else last
    if value != 1:
        last = Call(operator.mul, (last, _python(value)), {}, last.shape, op.dtype, op.loc,
                    op.depends)
        ops.append(last)
    if not same_shape(last, op):
        ops.append(Call(np.broadcast_to, (last, sizes(op)), {}, op.shape, op.dtype, op.loc,
                        op.depends))
    return tuple(ops) if len(ops) > 1 else ops[0]


def _sum(other: Op, axis: int, keepdims: bool, op: Call) -> Call:
    """np.sum(other, axis=axis), over `a`'s other axis where `other` is `a.T`."""
    if len(other.shape) == 1:
        return Call(np.sum, (other,), {}, (), op.dtype, op.loc, op.depends)
    if not keepdims and isinstance(other, Call) and other.fn is primitives.T \
            and isinstance(other.args[0], Op):
        other, axis = other.args[0], 1 - axis
    kwargs = {"axis": axis, "keepdims": True} if keepdims else {"axis": axis}
    shape = tuple(1 if i == axis else n for i, n in enumerate(other.shape)) if keepdims \
        else tuple(n for i, n in enumerate(other.shape) if i != axis)
    return Call(np.sum, (other,), kwargs, shape, op.dtype, op.loc, op.depends)


def _in(value, fills: dict) -> bool:
    return isinstance(value, Op) and value in fills


def _fill(value: float, op: Call):
    """A constant-filled op of `op`'s shape and dtype; a scalar is a literal."""
    if op.shape == ():
        return Const(float(value) if op.dtype == np.float64 else op.dtype.type(value), op.loc)
    fn, args = primitives.filled(sizes(op), value, op.dtype)
    return Call(fn, args, {}, op.shape, op.dtype, op.loc, op.depends)


def _source_fill(op: Call) -> float | None:
    """The value of a constant-filled array that `op` builds, if it builds one."""
    args = op.args
    if op.kwargs or not args:
        return None
    if op.fn is np.ones and len(args) <= 2:
        return 1.0
    if op.fn is np.zeros and len(args) <= 2:
        return 0.0
    fill = args[1] if op.fn is np.full and len(args) in (2, 3) else \
        args[0] if op.fn is np.broadcast_to and len(args) == 2 else None
    if _scalar(fill) is None:
        return None
    return float(op.dtype.type(fill))  # as the array holds it: np.full(3, 0.1, np.float16)


def _floating(op: Op) -> bool:
    return op.dtype is not None and op.shape is not None and np.issubdtype(op.dtype,
                                                                          np.floating)


def _scalar(value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return None
    return value


def _python(value):
    """A NumPy scalar as the Python number that prints as a literal."""
    return value.item() if isinstance(value, np.generic) else value
