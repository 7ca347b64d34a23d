"""Large temporaries that are dead are updated in place.

`t3 / t2 * t1` makes two new arrays. Where an operand is a temporary this
function made, read by nothing after this op and by nothing that could have
kept a view of it, its buffer can take the result instead: `t3 /= t2`. For a
small array that saves little, but an array past the allocator's threshold
(128 KiB here) is new memory from the system on every call, page faults
included: a million-element division costs five times as much into a new
array as into a dead one. So this applies to large arrays only, and small
ones keep the plainer code.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core.fused import Fused
from yota_src.ir.tape import Call, Guard, Op, Tape, iter_refs, readers, same_shape
from yota_src.passes.outputs import new_result
from yota_src.passes.rewrite import rewrite

MIN_BYTES = 1 << 17
UFUNCS = {operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
           operator.truediv: np.divide, operator.neg: np.negative, operator.pos: np.positive}
_COMMUTATIVE = (np.add, np.multiply)


def update_in_place(tape: Tape) -> Tape:
    users = readers(tape.ops, tape.output)
    position = {op: index for index, op in enumerate(tape.ops)}
    returned = set(iter_refs(tape.output))
    targets: dict[Op, int] = {}  # op -> which operand's buffer takes its result
    written: set[Op] = set()  # ops whose buffer a later op takes

    for op in tape.ops:
        ufunc = _ufunc(op)
        if ufunc is None or not op.shape or op.dtype is None \
                or np.prod(op.shape) * np.dtype(op.dtype).itemsize < MIN_BYTES:
            continue
        places = range(len(op.args))  # any operand's buffer: `np.divide(1, t, out=t)`
        for place in places:
            buffer = op.args[place]
            if buffer not in written and buffer not in returned \
                    and _fresh(buffer, targets) and _same_type(buffer, op) \
                    and _dead_after(buffer, op, users, position):
                targets[op] = place
                written.add(buffer)
                break

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if original not in targets:
            return op
        args = list(op.args)
        buffer = args[targets[original]]
        if targets[original] == 1 and _ufunc(op) in _COMMUTATIVE:  # `t += a`, not `a + t`
            args.reverse()
        return Call(_ufunc(op), tuple(args), {"out": buffer}, op.shape, op.dtype, op.loc,
                    op.depends)

    return rewrite(tape, visit)


def _ufunc(op: Op):
    """The ufunc an elementwise op is, if it can write into an operand."""
    return ufunc_of(op, UFUNCS)


def ufunc_of(op: Op, spelled: dict):
    """The ufunc `op` calls, `spelled` mapping operators to theirs, if it can
    take `out=`: a call without keywords of one with one output."""
    if not isinstance(op, Call) or op.kwargs:
        return None
    if isinstance(op.fn, Fused):  # numexpr.evaluate(..., out=): elementwise, one output
        return op.fn
    ufunc = spelled.get(op.fn, op.fn)
    if isinstance(ufunc, np.ufunc) and ufunc.nout == 1 and len(op.args) == ufunc.nin:
        return ufunc
    return None


def _fresh(op, targets: dict) -> bool:
    """An array this function made, that no other value shares."""
    if not isinstance(op, Call):
        return False
    if op in targets:
        return True
    return not op.kwargs and (isinstance(op.fn, (np.ufunc, Fused)) or op.fn in UFUNCS
                              or op.fn in (operator.matmul, operator.pow)
                              or new_result(op))


def _same_type(buffer, op: Op) -> bool:
    return isinstance(buffer, Op) and same_shape(buffer, op) and buffer.dtype == op.dtype


def _dead_after(buffer: Op, op: Op, users: dict, position: dict) -> bool:
    """`op` reads `buffer` last, and nothing read it into a view."""
    readers_of = users.get(buffer, [])
    return all(reader is not None and position[reader] <= position[op] and (
        reader is op or isinstance(reader, Guard) or _fresh(reader, {}))
        for reader in readers_of)
