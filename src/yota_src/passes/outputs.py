"""Returned gradients own their memory.

A gradient that is an argument itself (`d/dW sum(W * x)` is `x`), an array
from outside (a global), a view into one of those (`w[1:]`, `W.T`, a
reshape, a read-only broadcast), or the same array as another returned
gradient would surprise a user who updates it in place: `dx *= -lr` would
change `w`. Such outputs are copied; a result a primitive always makes anew
is returned as it is.
"""

from __future__ import annotations

import numpy as np

from yota_src.core import primitives
from yota_src.ir.lazy import dask_values
from yota_src.ir.loops import is_loop_output
from yota_src.ir.tape import Call, Const, Input, Op, Tape, iter_refs, map_refs

# primitives whose result is always a new array (beside ufuncs, operators and
# constructors: primitives.returns_new_array), never a view of an operand
_NEW_RESULTS = (np.sum, np.mean, np.prod, np.std, np.var, np.where, np.dot, np.outer,
                np.matmul, np.tensordot, np.kron, np.concatenate, np.stack, np.cumsum,
                np.cumprod, np.clip, np.sort, np.zeros_like, np.ones_like, np.full_like,
                np.linalg.solve, np.linalg.inv, np.max, np.min, np.amax, np.amin, np.diff,
                np.repeat, np.tile, np.pad, np.roll)


def _may_share(op: Op, outside: set) -> bool:
    """Whether `op` may be (a view into) an argument, an array from outside, a
    primal value or one of `outside`: views are followed to what they look
    into; a view into a new array of the reverse pass's own is its alone."""
    while isinstance(op, Call) and not _fresh(op):
        if is_loop_output(op):
            loop, k = op.args[0].fn, op.args[1]
            if k >= len(loop.carried):
                return False  # a stack: an array the loop made
            result = loop.results[k]
            if not (isinstance(result, Call) and _fresh(result)):
                return True  # the value may come in and go out unchanged
            op = op.args[0].args[k]  # what the loop starts from, if it runs no time
            continue
        operand = op.args[0] if op.args else None
        if not isinstance(operand, Op) or op.fn is np.broadcast_to:
            return True  # a read-only broadcast, or a view of what we cannot follow
        op = operand
    return isinstance(op, (Input, Const)) or op in outside


def _fresh(op: Call) -> bool:
    if op.fn is primitives.astype:  # a copy unless asked not to be one (`copy=False`)
        copy = op.kwargs.get("copy", op.args[5] if len(op.args) > 5 else True)
        return copy is not False
    return primitives.returns_new_array(op.fn) or new_result(op)


def new_result(op: Call) -> bool:
    """`op` is a call of one of _NEW_RESULTS that makes a new array: but
    `np.diff(a, n=0)`, which gives `a` itself."""
    if op.fn is np.diff:
        return op.kwargs.get("n", op.args[1] if len(op.args) > 1 else 1) != 0
    return op.fn in _NEW_RESULTS


def _copied(op: Op, signature) -> Call:
    """A copy of `op`; of a broadcast, `np.full(shape, values)`: the same
    bits, a fifth of the cost of `np.copy(np.broadcast_to(...))` on small
    arrays (np.broadcast_to is Python), as fast on large ones. NumPy's own:
    CuPy's `full` fills with a scalar only."""
    if isinstance(op, Call) and op.fn is np.broadcast_to and len(op.args) == 2 \
            and not op.kwargs and (signature is None or signature.library == "numpy"):
        values, shape = op.args
        return Call(np.full, (shape, values), {}, op.shape, op.dtype, op.loc, op.depends)
    return Call(np.copy, (op,), {}, op.shape, op.dtype, op.loc, op.depends)


def own_outputs(tape: Tape) -> Tape:
    if not isinstance(tape.output, tuple) or len(tape.output) < 2:
        return tape
    value, *gradients = tape.output
    ops = list(tape.ops)
    labels = dict(tape.labels)
    seen = set(iter_refs(value))  # the loss, and any aux (has_aux)

    forward = set(tape.ops[: tape.n_forward])
    lazy = dask_values(tape)  # Dask's arrays are never changed in place: none is copied

    def owned(op):
        if not isinstance(op, Op):
            return op
        shared = op in seen or _may_share(op, forward | seen)
        seen.add(op)
        if not shared or op.shape == () or op in lazy:
            return op
        copy = _copied(op, tape.signature)
        ops.append(copy)  # codegen names it after the argument it is the gradient of
        seen.add(copy)
        if isinstance(labels.get(op), Op):  # `dW = np.copy(t1)`, not `dW_2 = np.copy(dW)`
            labels[copy] = labels.pop(op)
        return copy

    output = (value,) + tuple(map_refs(g, owned) for g in gradients)
    return tape.replace(ops=ops, output=output, n_forward=tape.n_forward, labels=labels)

