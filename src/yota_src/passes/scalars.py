"""Elements read from an array are computed on as Python floats.

`a = x[0]` is a NumPy scalar, and arithmetic on NumPy scalars costs three to
four times the same on Python floats: each operation goes through NumPy's
type dispatch. Code that reads a few elements and computes with them (a
polynomial, a physics step) reads them as Python floats instead,
`a = x.item(0)`, as a person tuning it would.

Python floats part from NumPy's in a few places, which decide where this
applies: division and `%` by zero raise instead of giving inf or nan, `**`
can raise on overflow or give a complex number, and a float has none of an
array's methods. So an element is read as a Python float only where every
value computed from it by `+`, `-`, `*`, negation and division by a nonzero
constant (the operations on which the two agree bit for bit), alone or with
other scalars (which may be Python numbers too), goes only to more of those,
comparisons, NumPy functions (which give NumPy scalars back), array literals
and gradient updates, and never meets a float32 or float16 value (NumPy 2
promotes a Python float with those as their own type, a NumPy float64 not).
The value returned keeps its NumPy type.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.tape import Call, Guard, Op, Tape, iter_refs, operands, readers
from yota_src.passes.rewrite import rewrite

_SAME_ON_FLOATS = (operator.add, operator.sub, operator.mul, operator.neg, operator.pos,
                   operator.abs, abs)
_COMPARISONS = (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne)


def python_scalars(tape: Tape) -> Tape:
    users = readers(tape.ops, tape.output)
    reads = {op for op in tape.ops[:tape.n_forward] if _element_read(op)}
    while reads:  # drop the reads whose floats reach an operation that would differ
        floats = _floats_from(tape.ops, reads)
        spoiled = {op for op in floats for user in users.get(op, ())
                   if not _takes_float(user, op, floats, users)}
        if not spoiled:
            break
        reads -= _reads_behind(spoiled, reads, floats)
    if not reads:
        return tape
    floats = _floats_from(tape.ops, reads)
    returned = {op for op in iter_refs(tape.output) if op in floats}
    listed = _listed(reads)
    lists: dict[Op, Call] = {}  # an array read as a list -> its `x.tolist()`

    def visit(op: Op, forward: bool, original: Op):
        made = ()  # ops placed before it: the list its element is read from
        if original in reads:
            array, index = op.args
            if original.args[0] in listed:  # `a, b, c = x.tolist()` (codegen unpacks it)
                whole = lists.get(original.args[0])
                if whole is None:
                    whole = lists[original.args[0]] = Call(
                        primitives.tolist, (array,), {}, array.shape, array.dtype, op.loc,
                        op.depends)
                    whole.dims = array.dims
                    made = (whole,)
                dims = op.dims
                op = Call(operator.getitem, (whole, index), {}, op.shape, op.dtype, op.loc,
                          op.depends)
                op.dims = dims
            else:
                op = Call(primitives.element, (array, *_as_tuple(index)), {}, op.shape,
                          op.dtype, op.loc, op.depends)
        if original in returned:  # the primal returned a NumPy scalar
            return *made, op, Call(np.float64, (op,), {}, op.shape, op.dtype, op.loc, op.depends)
        return (*made, op) if made else op

    return rewrite(tape, visit)


def _listed(reads: set) -> set:
    """The vectors (of 32 elements at most) whose elements are read at half
    their positions or more: `x.tolist()` once costs less than `x.item(i)`
    at each, and unpacked, `a, b, c = x.tolist()`, reads as a person writes it."""
    positions: dict[Op, set] = {}
    for op in reads:
        array, index = op.args
        fixed = array.dims is None or type(array.dims[0]) is int  # unpacking pins the length
        if fixed and len(array.shape) == 1 and type(array.shape[0]) is int \
                and array.shape[0] <= 32:
            positions.setdefault(array, set()).add(_as_tuple(index)[0] % array.shape[0])
    return {array for array, read in positions.items() if 2 * len(read) >= array.shape[0]}


def _takes_bool(reader) -> bool:
    """`reader` does the same with a Python bool as with a NumPy one: a
    decision, or NumPy's own function (`np.where`); not arithmetic, where
    `True + True` is 2 and `~True` is -2 (NumPy's: True and False)."""
    return isinstance(reader, Guard) or isinstance(reader, Call) and (
        isinstance(reader.fn, np.ufunc) or reader.fn is np.where)


def _reads_behind(spoiled: set, reads: set, floats: set) -> set:
    """The reads whose floats flow into `spoiled`."""
    found, stack, seen = set(), list(spoiled), set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op in reads:
            found.add(op)
        elif isinstance(op, Call):
            stack.extend(arg for arg in op.args if isinstance(arg, Op) and arg in floats)
    return found


def _element_read(op: Op) -> bool:
    """`x[0]`, `A[1, 2]`: one element of a float64 array at a constant position."""
    if not (isinstance(op, Call) and op.fn is operator.getitem and op.shape == ()
            and op.dtype == np.float64 and len(op.args) == 2):
        return False
    array, index = op.args
    index = _as_tuple(index)
    return isinstance(array, Op) and bool(array.shape) and array.dtype == np.float64 \
        and len(index) == len(array.shape) and all(type(each) is int for each in index)


def _as_tuple(index) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def _floats_from(ops: list, reads: set) -> set:
    """The ops whose values are Python floats when `reads` are."""
    floats = set(reads)
    for op in ops:
        if isinstance(op, Call) and op not in floats and _keeps_float(op, floats):
            floats.add(op)
    return floats


def _keeps_float(op: Call, floats: set) -> bool:
    """A Python float may come out: Python floats in, with numbers or other
    scalars (which may be Python numbers too: `round(a) * b`)."""
    if op.kwargs or not any(arg in floats for arg in op.args if isinstance(arg, Op)):
        return False
    scalars = all(arg in floats or _scalar_alike(arg) if isinstance(arg, Op)
                  else type(arg) in (int, float) for arg in op.args)
    if op.fn in _SAME_ON_FLOATS:
        return scalars
    if op.fn is operator.truediv:
        return scalars and op.args[0] in floats and type(op.args[1]) in (int, float) \
            and op.args[1] != 0
    return False


def _scalar_alike(value: Op) -> bool:
    return value.shape == () and _alike(value)


def _alike(value: Op) -> bool:
    """A Python float and a NumPy float64 promote alike with `value`: not so
    for float32 or float16 under NumPy 2, where a Python float is weak
    (`float32 + 0.1` stays float32, `float32 + np.float64(0.1)` does not)."""
    if value.dtype is None:
        return False
    try:
        return np.result_type(value.dtype, np.float64(1.0)) == np.result_type(value.dtype, 1.0)
    except TypeError:  # a string's dtype (`repr(t)`): promotes with neither
        return False


def _takes_float(user, op: Op, floats: set, users: dict) -> bool:
    """`user` gives what it gives for a NumPy scalar when `op` is a Python float."""
    if user is None:  # the output: converted back
        return True
    if not isinstance(user, Call) or not all(
            each in floats or _alike(each) for each in operands(user)):
        return False
    on_array = any(isinstance(arg, Op) and arg.shape for arg in user.args)
    if user.fn in _COMPARISONS and not on_array:  # a Python bool
        return all(_takes_bool(reader) for reader in users.get(user, ()))
    if user in floats:
        return True  # a Python float too, followed further
    if user.fn in _SAME_ON_FLOATS or user.fn in _COMPARISONS:
        return on_array  # NumPy's own operation on an array; not `b * True`
    if user.fn in (operator.truediv, operator.pow, operator.mod, operator.floordiv):
        return any(isinstance(arg, Op) and bool(arg.shape) for arg in user.args)  # an array's
    if isinstance(user.fn, np.ufunc) or user.fn is np.array:                     # rules
        return True
    return user.fn in primitives.INDEX_STORES and user.args[0] is not op
