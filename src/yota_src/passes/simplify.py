"""Algebraic identities that templates produce and readers should not see:
`g * 1`, `g + 0`, `x ** 1`, `-(-g)`, `x.T.T`, reshapes and casts to what a
value already is; and the spellings a person would choose instead:
`np.ones(shape)` for a broadcast constant, `np.sum(g, axis)` for a keepdims
sum reshaped back, `-x` for `-1.0 * x`, `a - b` for `a + -b`."""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.tape import Call, Const, Op, Tape, readers, same_shape, sizes
from yota_src.passes.rewrite import rewrite

_RIGHT_IDENTITY = {operator.add: 0, operator.sub: 0, operator.mul: 1, operator.truediv: 1,
                   operator.pow: 1}
_LEFT_IDENTITY = {operator.add: 0, operator.mul: 1}
_SHAPE_NO_OPS = {np.reshape, np.broadcast_to, np.squeeze, np.expand_dims, np.ravel,
                 primitives.astype}


def simplify(tape: Tape) -> Tape:
    users = readers(tape.ops, tape.output)
    uses = {op: len(each) for op, each in users.items()}
    absorbed = _negations_absorbed(tape.ops[tape.n_forward:], users)

    def visit(op: Op, forward: bool, original: Op):
        kept = simplified(op, forward, original)
        last = kept[-1] if isinstance(kept, tuple) else kept
        uses.setdefault(last, uses.get(original, 0))  # what takes its place, its readers
        if op is not original:
            uses.setdefault(op, uses.get(original, 0))
        return kept

    def simplified(op: Op, forward: bool, original: Op):
        if not forward and _transposed_product(original, uses):  # (A @ B).T as B.T @ A.T
            return _product_transposed(op)
        position = _negated_operand(op, uses) if original in absorbed else None
        if position is not None:  # the negation moves out, to cancel further on
            return _negation_outside(op, position)
        if not forward and _all_constant(op):  # `1.0 * 0.5 * 2` left by the seeds: 1.0
            folded = Const(_static(op.fn(*(_value(a) for a in op.args))), op.loc)
            if same_shape(folded, op) and folded.dtype == op.dtype:
                return folded
        better = _respelled(op)
        if better is None and not forward:
            better = _broadcast_dropped(op)
            better = better if better is None else _respelled(better) or better
        if better is not None:
            return better
        kept = _identity_operand(op, exact=forward) or _restacked(op)
        if kept is None or not same_shape(kept, op) or kept.dtype != op.dtype:
            return op
        return kept

    return rewrite(tape, visit)


def _restacked(op: Op) -> Op | None:
    """`np.stack([S[0], S[1], ..., S[n - 1]])` is `S` (a rolled loop's stack of
    the values a list gathered, one per iteration)."""
    if not (isinstance(op, Call) and op.fn is np.stack and len(op.args) == 1
            and op.kwargs in ({}, {"axis": 0}) and isinstance(op.args[0], (list, tuple))):
        return None
    rows = op.args[0]
    source = rows[0].args[0] if rows and isinstance(rows[0], Call) and rows[0].args else None
    if not isinstance(source, Op) or source.shape is None or source.shape[:1] != (len(rows),):
        return None
    return source if all(isinstance(row, Call) and row.fn is operator.getitem
                         and row.args == (source, i) and not row.kwargs
                         for i, row in enumerate(rows)) else None


def _respelled(op: Op) -> Op | None:
    """A clearer op computing the same value, if there is one."""
    if not isinstance(op, Call) or op.kwargs or not op.args:
        return None
    if op.fn is np.broadcast_to and not isinstance(op.args[0], Op) and op.shape:
        fn, args = primitives.filled(sizes(op), op.args[0], op.dtype)
        return Call(fn, args, {}, op.shape, op.dtype, op.loc, op.depends)
    if op.fn in primitives.INDEX_STORES and len(op.args) == 3:
        values = op.args[2]  # `np.add.at(g, i, np.broadcast_to(v, s))`: one v broadcasts
        if isinstance(values, Call) and values.fn is np.broadcast_to and not values.kwargs \
                and isinstance(values.args[0], Op) and values.args[0].shape == () \
                and values.args[0].dtype == values.dtype:
            return Call(op.fn, (*op.args[:2], values.args[0]), {}, op.shape, op.dtype, op.loc,
                        op.depends)
    signed = _signs_folded(op)
    if signed is not None:
        return signed
    inner = op.args[0]
    if op.fn is np.reshape and isinstance(inner, Call) and inner.fn is np.sum \
            and inner.kwargs.get("keepdims") is True and len(inner.args) == 1:
        axis = inner.kwargs.get("axis")
        axes = (axis,) if isinstance(axis, int) else tuple(axis or ())
        squeezed = tuple(n for i, n in enumerate(inner.shape) if i not in axes)
        if axes and squeezed == op.shape:
            return Call(np.sum, inner.args, {"axis": axis}, op.shape, op.dtype, op.loc, op.depends)
    return None


_SIGN_FOLDED = {operator.add: operator.sub, operator.sub: operator.add}
_BROADCASTING = (operator.add, operator.sub, operator.mul, operator.truediv, np.add,
                 np.subtract, np.multiply, np.divide)


def _negations_absorbed(ops: list, users: dict) -> set:
    """Products and quotients whose negated operand's sign, moved out, meets
    its end further on: a negation (`-(-g)`) or the right of a sum (`a + -b`
    as `a - b`), through a chain of single-reader products. Elsewhere the
    sign stays where the template put it."""
    absorbed: set = set()
    for op in reversed(ops):
        readers_of = users.get(op, ())
        if not (_product(op) and len(readers_of) == 1 and isinstance(readers_of[0], Call)):
            continue
        reader = readers_of[0]
        if reader.fn is operator.neg or reader in absorbed or (
                reader.fn in _SIGN_FOLDED and not reader.kwargs and len(reader.args) == 2
                and reader.args[1] is op and reader.args[0] is not op):
            absorbed.add(op)
    return absorbed


def _product(op: Op) -> bool:
    return isinstance(op, Call) and op.fn in (operator.mul, operator.truediv) \
        and not op.kwargs and len(op.args) == 2 and _floating(op)


def _negated_operand(op: Op, uses: dict) -> int | None:
    """Where `op` is `(-a) * b`, `a * (-b)`, `(-a) / b` or `a / (-b)` of floats,
    the negation read nowhere else: the position of the negated operand."""
    if not _product(op):
        return None
    for position, arg in enumerate(op.args):
        if _negation(arg) and uses.get(arg) == 1:
            return position
    return None


def _negation(arg) -> bool:
    """`-a` of a float array or scalar."""
    return isinstance(arg, Call) and arg.fn is operator.neg and not arg.kwargs \
        and _floating(arg) and isinstance(arg.args[0], Op) and _floating(arg.args[0])


def _negation_outside(op: Call, position: int) -> tuple:
    """`-(a * b)` for `(-a) * b`: the same bits (a sign flip is exact), and two
    negations on a chain of them meet and cancel (`-(-g)`), each a pass over
    an array saved."""
    args = list(op.args)
    args[position] = args[position].args[0]
    inner = Call(op.fn, tuple(args), {}, op.shape, op.dtype, op.loc, op.depends)
    return inner, Call(operator.neg, (inner,), {}, op.shape, op.dtype, op.loc, op.depends)


def _floating(op: Op) -> bool:
    return op.dtype is not None and np.issubdtype(op.dtype, np.floating)


def _transposed_product(op: Op, uses: dict) -> bool:
    """`(A @ B).T` of 2-D operands, the product read nowhere else."""
    if not (isinstance(op, Call) and op.fn is primitives.T and not op.kwargs):
        return False
    inner = op.args[0]
    return isinstance(inner, Call) and inner.fn is operator.matmul and not inner.kwargs \
        and uses.get(inner) == 1 and all(isinstance(a, Op) and len(a.shape) == 2
                                         for a in inner.args)


def _product_transposed(op: Call) -> tuple:
    """`B.T @ A.T`, each transpose folded where the operand is one already."""
    left, right = op.args[0].args
    made, operands = [], []
    for each in (right, left):
        if isinstance(each, Call) and each.fn is primitives.T and not each.kwargs:
            operands.append(each.args[0])
        else:
            made.append(Call(primitives.T, (each,), {}, each.shape[::-1], each.dtype, op.loc,
                             each.depends))
            operands.append(made[-1])
    product = Call(operator.matmul, tuple(operands), {}, op.shape, op.dtype, op.loc, op.depends)
    return (*made, product)


def _broadcast_dropped(op: Op) -> Op | None:
    """`np.broadcast_to(g, s) * y` as `g * y` where `y` alone gives the shape:
    an elementwise op broadcasts its operands itself."""
    if not isinstance(op, Call) or op.fn not in _BROADCASTING or op.kwargs \
            or len(op.args) != 2:
        return None
    args, spread = list(op.args), None
    for i, arg in enumerate(args):
        if isinstance(arg, Call) and arg.fn is np.broadcast_to and not arg.kwargs \
                and isinstance(arg.args[0], Op) and arg.args[0].dtype == arg.dtype:
            args[i], spread = arg.args[0], arg
    if args == list(op.args):
        return None
    shapes = [a.shape if isinstance(a, Op) else np.shape(a) for a in args]
    if np.broadcast_shapes(*shapes) == op.shape:
        return Call(op.fn, tuple(args), {}, op.shape, op.dtype, op.loc, op.depends)
    if all(shape == () for shape in shapes) and spread.shape == op.shape:
        # `np.broadcast_to(g, s) * 2` as `np.broadcast_to(g * 2, s)`: the scalar work
        # first, so that the op reading it (`* y`) drops the broadcast in turn
        scalar = Call(op.fn, tuple(args), {}, (), op.dtype, op.loc, op.depends)
        return scalar, Call(np.broadcast_to, (scalar, *spread.args[1:]), {}, op.shape,
                            op.dtype, op.loc, op.depends)
    return None


def _signs_folded(op: Call) -> Op | None:
    """`-1.0 * x` as `-x`; `a + -b` as `a - b`, `-a + b` as `b - a` and
    `a - -b` as `a + b`; `-(0.5 * x)` as `-0.5 * x` (each a sign flip, exact)."""
    if op.fn is operator.neg and len(op.args) == 1 and isinstance(op.args[0], Call):
        inner = op.args[0]
        if inner.fn is operator.mul and not inner.kwargs and len(inner.args) == 2 \
                and _is_number(inner.args[0]) and isinstance(inner.args[1], Op) \
                and same_shape(inner, op) and inner.dtype == op.dtype:
            return Call(operator.mul, (-_value(inner.args[0]), inner.args[1]), {}, op.shape,
                        op.dtype, op.loc, op.depends)
    if op.fn is operator.mul and len(op.args) == 2:
        for constant, other in (op.args, op.args[::-1]):
            if _is_constant(constant, -1) and isinstance(other, Op) \
                    and same_shape(other, op) and other.dtype == op.dtype:
                return Call(operator.neg, (other,), {}, op.shape, op.dtype, op.loc, op.depends)
    if op.fn in _SIGN_FOLDED and len(op.args) == 2:
        left, right = op.args
        if isinstance(right, Call) and right.fn is operator.neg and not right.kwargs \
                and isinstance(right.args[0], Op) and right.args[0].dtype == right.dtype:
            return Call(_SIGN_FOLDED[op.fn], (left, right.args[0]), {}, op.shape, op.dtype,
                        op.loc, op.depends)
        if op.fn is operator.add and isinstance(left, Call) and left.fn is operator.neg \
                and not left.kwargs and isinstance(left.args[0], Op) \
                and left.args[0].dtype == left.dtype and isinstance(right, Op):
            return Call(operator.sub, (right, left.args[0]), {}, op.shape, op.dtype, op.loc,
                        op.depends)
    return None


def _is_number(value) -> bool:
    value = _value(value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _identity_operand(op: Op, exact: bool = False) -> Op | None:
    """The operand `op` merely passes through, if it does; with `exact`, to
    the bit: `-0.0 + 0.0` is `0.0`, so a float plus zero is kept there."""
    if not isinstance(op, Call) or op.kwargs:
        return None
    if exact and op.fn is operator.add and _floating(op):
        return None
    args = op.args
    if op.fn in _SHAPE_NO_OPS and isinstance(args[0], Op):
        return args[0]
    for involution in (operator.neg, primitives.T):  # -(-g), g.T.T
        if op.fn is involution and isinstance(args[0], Call) and args[0].fn is involution:
            inner = args[0].args[0]
            return inner if isinstance(inner, Op) else None
    if op.fn is primitives.index_add and len(args) == 3 and _is_constant(args[2], 0) \
            and isinstance(args[0], Op):
        return args[0]  # `dx[0] += 0.0`
    if len(args) != 2:
        return None
    left, right = args
    if op.fn is operator.add:  # `np.zeros(s) + g`: a buffer nothing was added into
        for zeros, other in ((left, right), (right, left)):
            if isinstance(zeros, Call) and zeros.fn is np.zeros and isinstance(other, Op) \
                    and same_shape(zeros, op):
                return other
    if _is_constant(right, _RIGHT_IDENTITY.get(op.fn)) and isinstance(left, Op):
        return left
    if _is_constant(left, _LEFT_IDENTITY.get(op.fn)) and isinstance(right, Op):
        return right
    return None


def _is_constant(value, constant) -> bool:
    value = _value(value)
    return (constant is not None and not isinstance(value, (Op, bool))
            and isinstance(value, (int, float, np.number)) and value == constant)


_ARITHMETIC = (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
               operator.neg)


def _all_constant(op: Op) -> bool:
    """Scalar arithmetic on numbers alone."""
    return isinstance(op, Call) and op.fn in _ARITHMETIC and not op.kwargs and all(
        isinstance(_value(a), (int, float, np.floating)) and not isinstance(a, bool)
        for a in op.args)


def _value(value):
    """A scalar constant op as its number; anything else as it is."""
    if isinstance(value, Const) and value.shape == () and value.hint is None:
        return value.value
    return value


def _static(number):
    return number.item() if isinstance(number, np.float64) else number
