"""Common subexpressions: the same primitive on the same operands, computed once."""

from __future__ import annotations

import numpy as np

from ..primitives import FRESH_BUFFERS
from ..tape import Call, Op, Tape
from .rewrite import rewrite


def eliminate_common_subexpressions(tape: Tape) -> Tape:
    seen: dict = {}

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if not isinstance(op, Call) or _impure(op.fn) or op.fn in FRESH_BUFFERS:
            return op
        key = _key((op.fn, op.args, op.kwargs))
        if key is None:
            return op
        try:
            return seen.setdefault(key, op)
        except TypeError:  # an unhashable static value
            return op

    return rewrite(tape, visit)


def _impure(fn) -> bool:
    return (getattr(fn, "__module__", "") or "").startswith("numpy.random") or \
        type(getattr(fn, "__self__", None)).__module__.startswith("numpy.random")


def _key(value):
    if isinstance(value, Op):
        return value
    if isinstance(value, (tuple, list)):
        parts = tuple(_key(item) for item in value)
        return None if None in parts and None not in value else (type(value), parts)
    if isinstance(value, dict):
        return ("dict", tuple((k, _key(v)) for k, v in value.items()))
    if isinstance(value, slice):
        return ("slice", _key((value.start, value.stop, value.step)))
    if isinstance(value, np.ndarray):
        return None
    return (type(value), value)
