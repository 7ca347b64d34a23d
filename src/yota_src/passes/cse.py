"""Common subexpressions: the same primitive on the same operands, computed once."""

from __future__ import annotations

import numpy as np

from yota_src.core import nested
from yota_src.core.primitives import FRESH_BUFFERS, T, has_effect
from yota_src.ir.dims import Dim
from yota_src.ir.tape import Call, Guard, Op, Tape
from yota_src.passes.rewrite import rewrite


def eliminate_common_subexpressions(tape: Tape) -> Tape:
    seen: dict = {}

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if isinstance(op, Guard):  # the same check twice (a dict compares a key again)
            try:
                return seen.setdefault(("guard", op.value, op.convert, _key(op.expected)), op)
            except TypeError:
                return op
        if not isinstance(op, Call) or has_effect(op.fn) or op.fn in FRESH_BUFFERS \
                or op.fn is T:  # a view, free to make again: `vs.T @ xs` reads better
            return op
        try:
            return seen.setdefault(_key((op.fn, op.args, op.kwargs)), op)
        except TypeError:  # an unhashable static value: never merged
            return op

    return rewrite(tape, visit)


def _key(value):
    """What makes two operands the same: ops by identity, static values by
    type and value; arrays are never compared by value."""
    return nested.shape_of(value, _leaf_key)


def _leaf_key(value):
    if isinstance(value, Op):
        return value
    if isinstance(value, Dim):  # the same polynomial of sizes
        return (Dim, value.key())
    if isinstance(value, np.ndarray):
        raise TypeError("arrays are not compared by value")
    return (type(value), value)
