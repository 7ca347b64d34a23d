"""Scalar factors of gradients are applied where the arrays are smallest.

The gradient of a mean carries `-1 / n` through everything below it: the
templates multiply it in at the top (`dlog_p = c * y`), and every array the
reverse sweep computes from there has it, though it could be applied once
to the small result at the end: `dw = c * (dz @ X)`, twenty elements where
`c * y` took a thousand. A factor moves from an array to the ops reading it
wherever each is linear in it (a product or quotient by other values, a
sign change, a sum or difference of arrays with the same factor, a
reduction, a reshape, a matmul), and the arrays it lands on hold no more
elements, all told, than the one it left. Where it meets a product with a
smaller array (`np.outer(dz, w)`), it scales that array instead.

Sizes are the example's where the code is made for them (ys.grad); where
it reads them at run time, one module serves every size, so each is
counted as if every dimension were the same large number: a matrix
outweighs a vector whatever the sizes, two vectors of sizes apart are
even, and the choice is the same at any sizes (sizes.py makes the module
again at others and compares).

Not bit for bit: `(c * y) / p` and `c * (y / p)` round apart by an ulp or
so (the tests compare with finite differences). Not for float16, whose
range a sum taken before its factor can leave. The arrays computed without
their factor are named as temporaries: they are not the gradients.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.dims import Dim
from yota_src.ir.tape import Call, Const, Op, Tape, readers
from yota_src.passes.rewrite import rewrite

_NEGATIONS = (operator.neg, np.negative)
_PRODUCTS = (operator.mul, np.multiply)
_QUOTIENTS = (operator.truediv, np.divide)
_FLIPPED = {operator.add: operator.sub, operator.sub: operator.add,
            np.add: np.subtract, np.subtract: np.add}
_CONTRACTIONS = (operator.matmul, np.matmul, np.dot, np.outer)
_REDUCTIONS = (np.sum, np.mean)
_LARGE = 1 << 10  # every dimension read at run time, for counting elements
# linear in their first operand alone, whatever the others are
_LINEAR_IN_FIRST = (np.broadcast_to, np.expand_dims, np.reshape, np.squeeze, np.ravel,
                    np.transpose, primitives.T, operator.getitem)


class _Move:
    """How a gradient op takes the factors of the operands it reads without
    them (`read`): it carries `factor` on, or applies it to its operand at
    `onto`. `own` is the position of the array that stands for the op
    unscaled, where a number joined the factor (`2 * a`, `-a`), or where
    the op is `c * a` itself (and reads nothing unscaled). `flip` turns a
    sum into a difference, for `c * a + -c * b`."""

    __slots__ = ("factor", "read", "onto", "own", "flip")

    def __init__(self, factor, read=(), onto=None, own=None, flip=False):
        self.factor, self.read, self.onto, self.own, self.flip = factor, read, onto, own, flip


def defer_scales(tape: Tape) -> Tape:
    back = tape.ops[tape.n_forward:]
    plan, deferred = _plan(tape, back)
    if not deferred:
        return tape
    now: dict[Op, Op] = {}  # recorded op -> what took its place (factors are read later)
    unscaled = set()  # ops computing a gradient without its factor: not the gradient

    def visit(op: Op, forward: bool, original: Op):
        kept = op
        if not forward and original in plan:
            kept = _rewritten(op, plan[original], original in deferred, now, unscaled)
        now[original] = kept[-1] if isinstance(kept, tuple) else kept
        return kept

    result = rewrite(tape, visit)
    labels = {op: label for op, label in result.labels.items() if op not in unscaled}
    origins = {op: origin for op, origin in result.origins.items() if op not in unscaled}
    return result.replace(labels=labels, origins=origins)


def _plan(tape: Tape, back: list) -> tuple[dict, set]:
    """Each gradient op's `_Move`, and the ops whose factor is deferred to
    their readers: from all of them, dropping those with a reader that does
    not take it, until none is dropped (within a bound: dropping one can
    change the factor another carries, so no order is promised). Each round
    decides from the last op back, so that a chain is settled in one."""
    users = readers(tape.ops, tape.output)
    in_back = set(back)
    deferred, candidates = set(back), None
    for _ in range(len(back) + 2):
        plan = {}
        for op in back:
            move = _taken(op, deferred, plan, candidates)
            if move is not None:
                plan[op] = move
        if candidates is None:
            candidates = set(plan)
        kept: set = set()  # from the last op back: readers decided first
        for op in reversed(back):
            if op in plan and plan[op].onto is None \
                    and _readers_take(op, users.get(op, ()), plan, in_back, kept):
                kept.add(op)
        if kept == deferred:
            return plan, deferred
        deferred = kept
    return {}, set()


def _readers_take(op: Op, users, plan: dict, in_back: set, kept: set) -> bool:
    """Every reader takes `op` unscaled (the output does not), the elements
    the factor then lands on are no more than `op`'s, and moving it gains
    something: fewer elements, a reader that moves it on, or one where two
    factors become one (`c * a - c * b`, `2 * (c * a)`)."""
    if not users or _elements(op) <= 1:
        return False
    landed, gains = 0, False
    for user in users:
        move = plan.get(user)
        if user not in in_back or move is None or op not in move.read:
            return False
        onto = user.args[move.onto] if move.onto is not None else user
        landed += _elements(onto)
        gains = gains or user in kept or len(move.read) == 2 or move.own is not None
    return landed < _elements(op) or landed == _elements(op) and gains


def _taken(op: Op, deferred: set, plan: dict, candidates) -> _Move | None:
    """How `op` takes the factors of its deferred operands, or carries a
    number it multiplies an array by; None where it does neither."""
    if not isinstance(op, Call) or not _floating(op):
        return None
    read = tuple(a for a in op.args if isinstance(a, Op) and a in deferred and a in plan)
    if read and all(a.dtype == op.dtype for a in read):
        move = _summed(op, read, plan) if len(read) == 2 else _linear(op, read[0], plan,
                                                                       candidates)
        if move is not None:
            return move
    return _literal(op)


def _linear(op: Call, read: Op, plan: dict, candidates) -> _Move | None:
    """`op` is linear in `read`, its one operand without its factor: how
    the factor moves on."""
    fn, args, factor = op.fn, op.args, plan[read].factor
    if sum(1 for a in args if a is read) != 1 or candidates is not None and any(
            isinstance(a, Op) and a is not read and a in candidates for a in args):
        return None  # (a product of two scaled arrays is left as it is)
    if op.kwargs and not (fn in _REDUCTIONS and set(op.kwargs) <= {"axis", "keepdims"}):
        return None
    position = args.index(read)
    if fn in _NEGATIONS:
        return _Move(-factor, (read,), own=0) if _number(factor) else _Move(factor, (read,))
    if fn in _PRODUCTS + _CONTRACTIONS and len(args) == 2:
        other = args[1 - position]
        if _number(other) and _number(factor) and fn in _PRODUCTS:
            return _Move(factor * other, (read,), own=position)
        if isinstance(other, Op) and other.dtype == op.dtype \
                and _elements(other) < _elements(op):
            return _Move(factor, (read,), onto=1 - position)
        return _Move(factor, (read,))
    linear = (fn in _QUOTIENTS and len(args) == 2 and position == 0) or (
        (fn in _LINEAR_IN_FIRST or fn in _REDUCTIONS) and position == 0) or (
        fn is np.where and len(args) == 3 and position > 0 and _number(args[3 - position])
        and args[3 - position] == 0)
    return _Move(factor, (read,)) if linear else None


def _summed(op: Call, read: tuple, plan: dict) -> _Move | None:
    """`c * a + c * b` is `c * (a + b)`; `c * a + -c * b` is `c * (a - b)`;
    `np.where(m, c * a, c * b)` is `c * np.where(m, a, b)`."""
    first, second = (plan[a].factor for a in read)
    if op.kwargs or not (op.fn in _FLIPPED and len(op.args) == 2 or (
            op.fn is np.where and len(op.args) == 3 and op.args[0] not in read)):
        return None
    if first is second or (_number(first) and _number(second) and first == second):
        return _Move(first, read)
    if op.fn in _FLIPPED and _number(first) and _number(second) and first == -second:
        return _Move(first, read, flip=True)
    return None


def _literal(op: Call) -> _Move | None:
    """`c * a` for a number or a float scalar `c` and an array `a` of the
    product's type and shape: the factor, and where `a` is."""
    if op.fn not in _PRODUCTS or op.kwargs or len(op.args) != 2:
        return None
    for position, factor in enumerate(op.args):
        array = op.args[1 - position]
        if _factor(factor) and isinstance(array, Op) and array.dtype == op.dtype \
                and array.shape == op.shape and _elements(op) > 1:
            return _Move(_value(factor), own=1 - position)
    return None


def _rewritten(op: Call, move: _Move, deferred: bool, now: dict, unscaled: set):
    """What replaces `op` (its deferred operands already replaced by their
    values without the factor): itself without the factor where its readers
    take it, else with the factor applied once."""
    if move.own is not None:  # `c * a`, `2 * a` or `-a` for a deferred `a`: `a` stands for it
        if not move.read and not deferred:
            return op
        plain = op.args[move.own]
        return plain if deferred else _times(move.factor, plain, op, now)
    args = list(op.args)
    made = []
    if move.onto is not None:  # np.outer(a, c * w): the factor on the smaller operand
        made.append(_times(move.factor, args[move.onto], op, now))
        args[move.onto] = made[-1]
    plain = Call(_FLIPPED[op.fn] if move.flip else op.fn, tuple(args), dict(op.kwargs),
                 op.shape, op.dtype, op.loc, op.depends)
    plain.dims = op.dims
    if move.onto is not None:
        return (*made, plain)
    unscaled.add(plain)
    return plain if deferred else (plain, _times(move.factor, plain, op, now))


def _times(factor, array: Op, at: Call, now: dict) -> Call:
    """`factor * array`, placed at `at`'s line."""
    factor = now.get(factor, factor) if isinstance(factor, Op) else factor
    made = Call(operator.mul, (factor, array), {}, array.shape, array.dtype, at.loc,
                at.depends)
    made.dims = array.dims
    return made


def _elements(op: Op) -> int:
    """How many elements `op` holds: at the example, or, where its sizes are
    read at run time, with each dimension the same large number."""
    if op.dims is None:
        return math.prod(op.shape)
    return math.prod(_at_large(size) for size in op.dims)


def _at_large(size) -> int:
    if not isinstance(size, Dim):
        return size
    return sum(coefficient * _LARGE ** len(monomial)
               for monomial, coefficient in size.facts.terms(size).items())


def _factor(value) -> bool:
    """A number, or a float64 scalar computed or known (`-1.0 / n`)."""
    if isinstance(value, Const) and _number(value.value):
        return True
    return _number(value) or (isinstance(value, Op) and value.shape == ()
                              and value.dtype == np.float64)


def _value(factor):
    return factor.value if isinstance(factor, Const) and _number(factor.value) else factor


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _floating(op: Op) -> bool:
    """float32 or wider: a factor below 1 applied after a sum instead of
    before it lets the sum grow by as much, past float16's 65504."""
    return op.dtype is not None and op.shape is not None \
        and np.issubdtype(op.dtype, np.floating) and op.dtype.itemsize >= 4
