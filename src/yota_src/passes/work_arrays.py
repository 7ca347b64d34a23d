"""Large temporaries of `ys.grad` go into work arrays kept from call to call.

A new array past the allocator's threshold is new memory from the system
on every call, page faults included: measured on this machine, the
five-op chain of `sum(1 / (1 + exp(-x)))` runs 1.5x faster at 10^6
elements, and 2.6x at 5 x 10^4, when its temporaries are written into
arrays made once (`np.add(1, t1, out=work[1])`). `ys.grad` is called in a
loop, so its generated code keeps such arrays (`simplegrad`, whose code is
read and saved, stays without them: passes/__init__.py).

A temporary goes into a work array only where nothing the function returns
can be that memory or a view of it, so a result handed to the user is never
overwritten by a later call: every reader of it (and of what is updated in
place in it, passes/in_place.py) makes a new array or only reads it. Two
temporaries share a work array where the first is dead before the second
is made. A call takes a free set of work arrays and gives it back at its
return, so calls from two threads, or a call inside a call, never share one.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import primitives
from yota_src.core.fused import Fused
from yota_src.ir.tape import Call, Guard, Op, Tape, operands, readers
from yota_src.passes import in_place
from yota_src.passes.outputs import new_result
from yota_src.passes.rewrite import rewrite

MIN_BYTES = in_place.MIN_BYTES
_UFUNCS = {**in_place.UFUNCS, operator.matmul: np.matmul}  # not `**`: `a ** 0.5` is np.sqrt


def use_work_arrays(tape: Tape) -> Tape:
    if tape.free_counts:  # a trip count from an argument: shapes may vary from call to call
        return tape
    users = readers(tape.ops, tape.output)
    position = {op: index for index, op in enumerate(tape.ops)}
    slots: list[list] = []  # [shape, dtype, position after which it is free]
    placed: dict[Op, int] = {}  # op -> its work array
    c_ordered = _c_ordered(tape.ops)
    for op in tape.ops:
        if _ufunc(op) is None or not _large(op) or op not in c_ordered:
            continue
        end = _last_use(op, users, position)
        if end is None:
            continue
        index = next((index for index, (shape, dtype, free_after) in enumerate(slots)
                      if (shape, dtype) == (op.shape, op.dtype) and free_after < position[op]),
                     len(slots))
        if index == len(slots):
            slots.append([op.shape, op.dtype, -1])
        slots[index][2] = end
        placed[op] = index

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if original not in placed:
            return op
        work = Call(primitives.work_array, (placed[original],), {}, op.shape, op.dtype, None,
                    False)
        return work, Call(_ufunc(op), op.args, {"out": work}, op.shape, op.dtype, op.loc,
                          op.depends)

    return rewrite(tape, visit)


def _ufunc(op):
    """The ufunc a new elementwise array or product is made by, if any."""
    return in_place.ufunc_of(op, _UFUNCS)


_ALWAYS_C = (operator.matmul, np.matmul, np.dot, np.outer)


def _c_ordered(ops: list) -> set:
    """Ops whose arrays NumPy lays out in C order whatever the arguments'
    layout, the only ones a work array (C order) may take: a work array of
    another layout than NumPy's would change the order `x.sum()` adds in,
    and the bits, or what an order-dependent read (`ravel(order='K')`) sees.
    An elementwise result takes its operands' layout, so it is in C order
    where they are; an argument is known to be only where it has one axis."""
    known: set = set()
    for op in ops:
        if op.shape is not None and len(op.shape) <= 1:
            known.add(op)
        elif isinstance(op, Call) and op.fn in _ALWAYS_C:
            known.add(op)
        elif isinstance(op, Call) and isinstance(op.kwargs.get("out"), Op):
            if op.kwargs["out"] in known:
                known.add(op)
        elif isinstance(op, Call) and (_ufunc(op) is not None or new_result(op)) and all(
                each in known for each in operands(op) if each.shape):
            known.add(op)
    return known


def _large(op: Op) -> bool:
    return bool(op.shape) and op.dtype is not None and \
        np.prod(op.shape) * np.dtype(op.dtype).itemsize >= MIN_BYTES


def _last_use(op: Op, users: dict, position: dict) -> int | None:
    """The position of the last op that reads `op`'s memory, or None where
    that memory may outlive the call (returned, viewed, held by a loop)."""
    memory, end, todo = {op}, position[op], [op]
    while todo:
        for reader in users.get(todo.pop(), []):
            if reader is None:  # returned
                return None
            if isinstance(reader, Call) and reader.kwargs.get("out") in memory:
                if reader not in memory:  # updated in place: the same memory
                    memory.add(reader)
                    todo.append(reader)
            elif not _reads_only(reader):
                return None
            end = max(end, position[reader])
    return end


def _reads_only(reader: Op) -> bool:
    """`reader` makes a new value from what it reads, keeping no view of it."""
    if isinstance(reader, Guard):
        return True
    if not isinstance(reader, Call) or reader.fn in primitives.INDEX_STORES:
        return False
    return isinstance(reader.fn, (np.ufunc, Fused)) or reader.fn in _UFUNCS \
        or reader.fn in operator_reads or new_result(reader)


operator_reads = {operator.floordiv, operator.mod, operator.eq, operator.ne, operator.lt,
                  operator.le, operator.gt, operator.ge, operator.and_, operator.or_,
                  operator.xor, operator.invert, primitives.element}
