"""Scalar gradients of a small array gather into one array literal.

Reading a small array element by element (`a, b, c = x[0], x[1], x[2]`)
gives one scalar gradient per element, which the adjoint of indexing writes
into a zeros buffer one `+=` at a time (accumulate.py). Where every write is
a scalar at its own constant position, a person writes the gradient as one
array of them, `dx = np.array([da, db, dc])`: one allocation instead of a
buffer and an update per element (a third of the time for three elements).
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.tape import Call, Op, Tape, readers
from yota_src.passes.rewrite import rewrite

_MAX_SIZE = 64  # elements: a literal longer than this reads worse than the updates


def gather_scalars(tape: Tape) -> Tape:
    users = readers(tape.ops, tape.output)
    ends = {op for op in tape.ops[tape.n_forward:]  # each chain walked once, from its end
            if not any(_continues(user, op) for user in users.get(op, ()))
            and _writes(op, users) is not None}

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if original not in ends:
            return op
        writes = _writes(op, None)
        if writes is None:  # an operand became something else; leave it
            return op
        items, sums = np.zeros(op.shape, dtype=object), []
        items[...] = 0.0
        for position, value in writes:  # a position written twice gets the sum
            if isinstance(items[position], float) and items[position] == 0.0:
                items[position] = value
            else:
                sums.append(Call(operator.add, (items[position], value), {}, (), op.dtype,
                                 op.loc, op.depends))
                items[position] = sums[-1]
        return (*sums, Call(np.array, (items.tolist(),), {}, op.shape, op.dtype, op.loc,
                            op.depends))

    return rewrite(tape, visit)


def _continues(user, op: Op) -> bool:
    return isinstance(user, Call) and user.fn is primitives.index_add and user.args[0] is op


def _writes(op: Op, users: dict | None) -> list | None:
    """[(position, scalar)] written by a chain of scalar updates of a fresh
    float64 zeros buffer ending at `op`, in order; or None. With
    `users`, each link must have no other reader."""
    if not (isinstance(op, Call) and op.fn is primitives.index_add and op.dtype == np.float64
            and 0 < np.prod(op.shape) <= _MAX_SIZE):
        return None
    writes = []
    while isinstance(op, Call) and op.fn is primitives.index_add:
        buffer, index, value = op.args
        position = _position(index, op.shape)
        if position is None or not _scalar(value) or (
                users is not None and len(users.get(buffer, ())) != 1):
            return None
        writes.append((position, value))
        op = buffer
    fresh = isinstance(op, Call) and op.fn in primitives.FRESH_BUFFERS and (
        op.fn is np.zeros_like or not op.kwargs or op.kwargs == {"dtype": np.float64})
    return writes[::-1] if fresh else None


def _position(index, shape: tuple) -> tuple | None:
    """The element a constant integer index names, as a non-negative tuple."""
    index = index if isinstance(index, tuple) else (index,)
    if len(index) != len(shape) or not all(type(each) is int for each in index):
        return None
    if not all(-size <= each < size for each, size in zip(index, shape)):
        return None
    return tuple(each % size for each, size in zip(index, shape))


def _scalar(value) -> bool:
    """A float64 scalar: the literal of them is float64, as the buffer was."""
    if isinstance(value, Op):
        return value.shape == () and value.dtype == np.float64
    return type(value) is float
