"""The dimensions of a primitive's result, as expressions of the arguments'.

Each recorded call's result gets `dims`: its shape with a `Dim` wherever
the size follows the arguments' dimensions (ir/dims.py). A rule per family
of primitives says how: elementwise operations broadcast, reductions drop
or keep axes, products contract, reshapes and indexing rearrange, creation
routines take the dimensions they are given. What a rule decides about a
dimension on the way (two sizes broadcast together must be equal, a slice
`x[:, 2]` needs the axis longer than 2) is a fact (`DimFacts.decide`).

A primitive without a rule pins the dimensions it reads: the code is
specialised to their example sizes, as before dimensions were values, so
no rule that is missing can make an answer wrong.
"""

from __future__ import annotations

import functools
import inspect
import operator

import numpy as np

from yota_src.core import primitives
from yota_src.core.nested import leaves
from yota_src.ir.branches import Branch, is_branch
from yota_src.ir.dims import Count, Dim, DimFacts, has_dims
from yota_src.ir.loops import Loop, is_loop
from yota_src.ir.tape import Op


def _op_of(value) -> Op | None:
    """The op of a tape value, or of a traced one (which holds its op)."""
    if isinstance(value, Op):
        return value
    op = getattr(value, "op", None) if not isinstance(value, (np.ndarray, np.generic)) else None
    return op if isinstance(op, Op) else None


def dims_of_value(value) -> tuple:
    """The dimensions of an op, a traced value or a static one."""
    op = _op_of(value)
    if op is not None:
        return op.dims if op.dims is not None else (op.shape or ())
    if isinstance(value, Dim):
        return ()
    if isinstance(value, (list, tuple)):  # `[y, [t]]`: items may be traced
        if not value:
            return (0,)
        return (len(value), *dims_of_value(value[0]))
    return np.shape(value)


def result_dims(fn, args: tuple, kwargs: dict, shape: tuple | None,
                facts: DimFacts) -> tuple | None:
    """The dims of `fn(*args, **kwargs)`'s result (of `shape`), or None where
    they are its example shape (nothing symbolic, or no rule: pinned)."""
    symbolic = [v for v in leaves((args, kwargs), _symbolic)]
    if not symbolic or shape == ():
        return None  # a number has no sizes; the code computes it from the sizes it reads
    if isinstance(fn, Branch):  # a tuple: its parts' sizes are its arms' (`_getitem`)
        return None
    if isinstance(fn, Loop):  # a tuple: its parts' sizes are the loop's (`_getitem`)
        if not _loop_fits(facts, fn, args):
            for each in symbolic:
                for d in _dims_in(each):
                    facts.pin(d)
        return None
    rule = _rule(fn)
    dims = None
    if rule is not None and shape is not None:
        try:
            dims = rule(facts, *args, **kwargs)
        except (_NoRule, TypeError):  # (a call the rule's parameters do not take)
            dims = None
    if dims is not None:
        dims = tuple(dims)
        if len(dims) != len(shape) or any(_plain(d) != n for d, n in zip(dims, shape)):
            dims = None  # a rule that does not fit the example: specialise instead
    if dims is None:
        for each in symbolic:
            for d in _dims_in(each):
                facts.pin(d)
        return None
    dims = tuple(facts.canonical(d) if isinstance(d, Dim) else d for d in dims)
    return dims if any(isinstance(d, Dim) for d in dims) else None


def infer_dims(op: Op, facts: DimFacts | None) -> tuple | None:
    """The dims of an op a pass made, from its operands' (None: the example's).
    A pass makes no new count of a mask: only the trace guards one."""
    if facts is None or op.shape is None or not hasattr(op, "fn"):
        return None
    facts.counting, saved = False, facts.counting
    try:
        return result_dims(op.fn, op.args, op.kwargs, op.shape, facts)
    finally:
        facts.counting = saved


class _NoRule(Exception):
    """The rule does not cover this call: its dimensions are pinned."""


NoRule = _NoRule  # (for the rules of library_shapes.py)
op_of = _op_of
_RULES: dict = {}  # rules added by other modules (library_shapes.py)
_BY_NAME: dict = {}  # the same for functions of optional libraries, by display name


def add_rules(rules: dict, by_name: dict | None = None) -> None:
    """Rules for more primitives, each `rule(facts, *args, **kwargs) -> dims`;
    `by_name`: for functions of SciPy, which the core does not import."""
    _RULES.update(rules)
    _BY_NAME.update(by_name or {})


def _symbolic(value) -> bool:
    if isinstance(value, Dim):
        return True
    op = _op_of(value)
    return op is not None and (op.dims is not None or _of_parts(op) and has_dims(
        op.fn.output_dims()))


def _of_parts(op) -> bool:
    """A call whose value is a tuple of parts with their own sizes."""
    return is_loop(op) or is_branch(op)


def _loop_fits(facts: DimFacts, loop: Loop, args: tuple) -> bool:
    """The loop's body was made for the sizes its arguments have, and a
    carried value keeps its sizes from one iteration to the next: the loop
    serves other sizes as it is (else its arguments' are pinned)."""
    pairs = [(_sizes(param), dims_of_value(arg)) for param, arg in zip(loop.params[1:], args)]
    pairs += [(_sizes(param), _sizes(result)) for param, result in zip(loop.carried,
                                                                         loop.results)]
    for want, got in pairs:
        if len(want) != len(got):
            return False
        for a, b in zip(want, got):
            if (isinstance(a, Dim) or isinstance(b, Dim)) and not facts.decide(a, operator.eq, b):
                return False
    return True


def _sizes(op: Op) -> tuple:
    return op.dims if op.dims is not None else op.shape


def _dims_in(value) -> list:
    if isinstance(value, Dim):
        return [value]
    op = _op_of(value)
    if _of_parts(op):
        return [d for part in op.fn.output_dims() for d in part if isinstance(d, Dim)]
    return [d for d in op.dims if isinstance(d, Dim)]


def _plain(d) -> int:
    return d.value if isinstance(d, Dim) else int(d)


# --- families ----------------------------------------------------------------------

def broadcast(facts: DimFacts, *shapes) -> tuple:
    """NumPy's broadcasting of these dims: a size of 1 stretches only where
    it is 1 whatever the arguments (a Dim that is 1 here is pinned)."""
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for position in range(rank):
        sizes = [s[len(s) - rank + position] for s in shapes if len(s) - rank + position >= 0]
        if sizes and all(isinstance(size, Dim) for size in sizes) and len(
                {frozenset(facts.terms(size).items()) for size in sizes}) == 1:
            result.append(facts.canonical(sizes[0]))  # one size, 1 or not: nothing stretches
            continue
        for size in sizes:
            if isinstance(size, Dim) and size.value == 1:
                facts.pin(size)
        sizes = [size for size in sizes if not (isinstance(size, int) and size == 1)
                 and not (isinstance(size, Dim) and size.value == 1)]
        if not sizes:
            result.append(1)
            continue
        chosen = next((size for size in sizes if isinstance(size, int)), sizes[0])
        for size in sizes:
            if size is not chosen:
                facts.decide(size, operator.eq, chosen)
        result.append(facts.canonical(chosen) if isinstance(chosen, Dim) else chosen)
    return tuple(result)


def _elementwise(facts, *args, **kwargs):
    """Broadcasting; written into `out=` (a pass's in-place form), its sizes."""
    if set(kwargs) - {"out"} or kwargs.get("where", True) is not True:
        raise _NoRule
    dims = broadcast(facts, *(dims_of_value(a) for a in args))
    if kwargs.get("out") is not None:
        out = dims_of_value(kwargs["out"])
        broadcast(facts, out, dims)
        return out
    return dims


def _where(facts, condition, *rest):
    if len(rest) != 2:
        raise _NoRule  # np.where(mask): a count from the data
    return broadcast(facts, *(dims_of_value(a) for a in (condition, *rest)))


def _clip(facts, a, *bounds, **kwargs):
    values = [*bounds, *(kwargs.get(k) for k in ("a_min", "a_max", "min", "max") if k in kwargs)]
    return broadcast(facts, dims_of_value(a), *(dims_of_value(v) for v in values
                                                if v is not None))


def _same(facts, a, *rest, **kwargs):
    return dims_of_value(a)


def _axes(axis, rank: int) -> tuple | None:
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise _NoRule
    return tuple(a % rank for a in axes)


def _reduction(fn):
    signature = inspect.signature(fn)

    def rule(facts, *args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        a = bound.arguments[next(iter(signature.parameters))]
        extra = set(bound.arguments) - {next(iter(signature.parameters)), "axis", "dtype",
                                        "keepdims", "ddof"}
        if extra:
            raise _NoRule
        dims = dims_of_value(a)
        axes = _axes(bound.arguments.get("axis"), len(dims))
        keep = bound.arguments.get("keepdims", False)
        if axes is None:
            return (1,) * len(dims) if keep else ()
        return tuple(1 if i in axes else d for i, d in enumerate(dims)
                     if keep or i not in axes)
    return rule


def _matmul(facts, a, b, **kwargs):
    if kwargs:
        raise _NoRule
    x, y = dims_of_value(a), dims_of_value(b)
    if not x or not y:
        raise _NoRule
    one_x, one_y = len(x) == 1, len(y) == 1
    x = (1,) + tuple(x) if one_x else tuple(x)
    y = tuple(y) + (1,) if one_y else tuple(y)
    facts.decide(x[-1], operator.eq, y[-2]) if isinstance(x[-1], Dim) or \
        isinstance(y[-2], Dim) else None
    batch = broadcast(facts, x[:-2], y[:-2])
    return batch + (() if one_x else (x[-2],)) + (() if one_y else (y[-1],))


def _outer(facts, a, b, out=None):
    if out is not None:
        raise _NoRule
    return tuple(functools.reduce(operator.mul, dims_of_value(v), 1) for v in (a, b))


def _dot(facts, a, b, out=None):
    if out is not None or max(len(dims_of_value(a)), len(dims_of_value(b))) > 2:
        raise _NoRule
    if not dims_of_value(a) or not dims_of_value(b):
        return broadcast(facts, dims_of_value(a), dims_of_value(b))
    return _matmul(facts, a, b)


def _transpose(facts, a, axes=None):
    dims = dims_of_value(a)
    if axes is None:
        return tuple(reversed(dims))
    if not all(isinstance(i, int) for i in axes):
        raise _NoRule
    return tuple(dims[i] for i in axes)


def _reshape(facts, a, shape=None, *rest, order="C", copy=None, **kwargs):
    if shape is None:
        shape = kwargs.pop("newshape", None)
    if kwargs or shape is None:
        raise _NoRule
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    total = functools.reduce(operator.mul, dims_of_value(a), 1)
    known = [d for d in shape if not (isinstance(d, int) and d == -1)]
    if len(known) == len(shape):
        facts.decide(functools.reduce(operator.mul, known, 1), operator.eq, total)
        return shape
    if len(shape) - len(known) > 1:
        raise _NoRule
    product = functools.reduce(operator.mul, known, 1)
    if isinstance(product, Dim):
        quotient = _divide(facts, total, product)
    elif product and isinstance(total, Dim):
        quotient = total // product  # exact, or pinned
    else:
        quotient = _plain(total) // max(_plain(product), 1)
    return tuple(quotient if isinstance(d, int) and d == -1 else d for d in shape)


def _divide(facts, total, product):
    """`total / product` for Dims, where it is exact whatever the sizes."""
    quotient = facts.divide(total, product)
    if quotient is None:
        raise _NoRule
    return quotient


def _creation(facts, shape, *rest, **kwargs):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(d, (int, Dim)) for d in shape):
        raise _NoRule
    return shape


def _like(facts, a, *rest, shape=None, **kwargs):
    return dims_of_value(a) if shape is None else _creation(facts, shape)


def _arange(facts, *args, **kwargs):
    if set(kwargs) - {"dtype"}:
        raise _NoRule
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) == 2:
        start, stop, step = args[0], args[1], 1
    else:
        start, stop, step = args
    if step != 1 or not all(isinstance(v, (int, Dim)) for v in (start, stop)):
        raise _NoRule
    facts.decide(stop, operator.ge, start)
    return (stop - start,)


def _broadcast_to(facts, a, shape, subok=False):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    broadcast(facts, dims_of_value(a), shape)
    return shape


def _expand_dims(facts, a, axis):
    dims = list(dims_of_value(a))
    axes = axis if isinstance(axis, tuple) else (axis,)
    rank = len(dims) + len(axes)
    for position in sorted(i % rank for i in axes):
        dims.insert(position, 1)
    return tuple(dims)


def _concatenate(facts, arrays, axis=0, **kwargs):
    if kwargs or axis is None or not isinstance(arrays, (list, tuple)):
        raise _NoRule
    return concatenated(facts, [dims_of_value(a) for a in arrays], axis)


def concatenated(facts, shapes: list, axis: int) -> tuple:
    """The dims of arrays of these dims joined along `axis`."""
    if any(len(shape) != len(shapes[0]) for shape in shapes):
        raise _NoRule
    rank = len(shapes[0])
    axis %= rank
    for position in range(rank):
        if position != axis:
            for other in shapes[1:]:
                facts.decide(other[position], operator.eq, shapes[0][position])
    total = functools.reduce(operator.add, (s[axis] for s in shapes))
    return tuple(total if i == axis else d for i, d in enumerate(shapes[0]))


def _converted(facts, a, dtype=None, *, copy=True, order="K", ndmin=0, like=None, **kwargs):
    """np.array(x), np.asarray(x) of one array: its dims (a list is made of its items)."""
    if _op_of(a) is None or ndmin > len(dims_of_value(a)) or like is not None or kwargs:
        raise _NoRule
    return dims_of_value(a)


def _moveaxis(facts, a, source, destination):
    """np.moveaxis, np.swapaxes: the axes rearranged."""
    dims = list(dims_of_value(a))
    if not all(isinstance(axis, int) for axis in (source, destination)):
        raise _NoRule
    dims.insert(destination % len(dims), dims.pop(source % len(dims)))
    return tuple(dims)


def _swapaxes(facts, a, axis1, axis2):
    dims = list(dims_of_value(a))
    if not all(isinstance(axis, int) for axis in (axis1, axis2)):
        raise _NoRule
    dims[axis1], dims[axis2] = dims[axis2], dims[axis1]
    return tuple(dims)


def _stack(facts, arrays, axis=0, **kwargs):
    if kwargs or not isinstance(arrays, (list, tuple)):
        raise _NoRule
    shapes = [dims_of_value(a) for a in arrays]
    for other in shapes[1:]:
        for a, b in zip(other, shapes[0]):
            facts.decide(a, operator.eq, b)
    dims = list(shapes[0])
    dims.insert(axis % (len(dims) + 1), len(arrays))
    return tuple(dims)


def _index_store(facts, buffer, index, values):
    try:
        region = _getitem(facts, buffer, index)
    except _NoRule:  # `dx[t:n] += g`: NumPy checks the region against the values
        return dims_of_value(buffer)
    broadcast(facts, region, dims_of_value(values))
    return dims_of_value(buffer)


# --- indexing --------------------------------------------------------------------------

def _getitem(facts, a, index):
    if _of_parts(_op_of(a)):  # a loop's carried value or stack, a branch's name
        return _op_of(a).fn.output_dims()[index]
    dims = dims_of_value(a)
    items = index if isinstance(index, tuple) else (index,)
    if sum(item is Ellipsis for item in items) > 1:
        raise _NoRule
    if any(_is_mask(item) for item in items):
        return _masked(facts, dims, items)
    explicit = sum(1 for item in items if item is not None and item is not Ellipsis)
    expanded = []
    for item in items:
        expanded += [slice(None)] * (len(dims) - explicit) if item is Ellipsis else [item]
    expanded += [slice(None)] * (len(dims) - sum(1 for i in expanded if i is not None))
    arrays = any(_is_index_array(item) for item in expanded)
    result, advanced, positions, insert_at, axis = [], [], [], 0, 0
    for k, item in enumerate(expanded):
        if item is None:
            result.append(1)
            continue
        size = dims[axis]
        axis += 1
        if isinstance(item, slice):
            result.append(_slice_size(facts, size, item))
            continue
        if _is_index_array(item):
            shape = dims_of_value(item)
        elif _op_of(item) is not None and _op_of(item).shape == ():
            shape = ()  # a position from the data: NumPy checks it
        elif isinstance(item, (int, Dim, np.integer)) and not isinstance(item, bool):
            _check_index(facts, size, item)
            shape = ()
        else:
            raise _NoRule
        if arrays:
            insert_at = len(result) if not positions else insert_at
            positions.append(k)
            advanced.append(shape)
    if advanced:
        adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
        at = insert_at if adjacent else 0
        result[at:at] = list(broadcast(facts, *advanced))
    return tuple(result)


def _masked(facts, dims: tuple, items: tuple) -> tuple:
    """`x[mask]`, `x[:, mask]`: the axes the mask covers become one, as long
    as the mask selects: a count the data decide (ir/dims.Count)."""
    masks = [i for i, item in enumerate(items) if _is_mask(item)]
    if len(masks) != 1 or _op_of(items[masks[0]]) is None \
            or any(item is None or item is Ellipsis or _is_index_array(item) and not _is_mask(item)
                   or not isinstance(item, slice) and i != masks[0]
                   for i, item in enumerate(items)):
        raise _NoRule  # only a traced mask among whole slices
    (at,) = masks
    mask = _op_of(items[at])
    covered = dims[at:at + len(mask.shape)]
    if len(covered) != len(mask.shape):
        raise _NoRule
    for size, other in zip(dims_of_value(mask), covered):
        facts.decide(size, operator.eq, other)
    before = [_slice_size(facts, size, item) for size, item in zip(dims[:at], items[:at])]
    after = dims[at + len(mask.shape):]
    after = [_slice_size(facts, size, item) for size, item in zip(after, items[at + 1:])] \
        + list(after[len(items) - at - 1:])
    return (*before, selected(facts, mask, items[at]), *after)


def selected(facts, mask: Op, item) -> Dim:
    """How many elements `mask` (the op of `item`) selects: a Count, the same
    for every mask that computes what it computes."""
    key = mask.selects or facts.selections.get(_structure(mask))
    if key is not None and Count(key) in facts.values:  # a mask counted before
        count = facts.count(key, facts.values[Count(key)])
    elif facts.counting:
        key = facts.selections.setdefault(_structure(mask), ("mask", len(facts.selections)))
        count = facts.count(key, int(np.count_nonzero(mask_value(item))))
        facts.mask_of[Count(key)] = mask
    else:
        raise _NoRule
    mask.selects = key  # a copy of it, or a mask that computes the same, selects the same
    return count


def same_mask(mask: Op, counted: Op) -> None:
    """`mask` selects what `counted` selects: a row of a stack of masks read
    in a reversed loop has the forward body's count."""
    mask.selects = counted.selects


def _structure(op: Op, depth: int = 0):
    """What an op computes, as a key: `~pos` made twice is one mask (a
    counted mask, and a pass's copy of it, is its `selects`). An op with an
    effect (a random draw) or too deep is itself."""
    if getattr(op, "selects", None) is not None:
        return op.selects
    if depth > 12 or not hasattr(op, "fn") or primitives.has_effect(op.fn):
        return ("op", id(op))
    def part(value):
        return _structure(value, depth + 1) if isinstance(value, Op) else ("value", repr(value))
    return (getattr(op.fn, "__qualname__", repr(op.fn)), id(op.fn),
            tuple(part(a) for a in op.args),
            tuple(sorted((k, part(v)) for k, v in op.kwargs.items())))


def mask_value(item):
    value = getattr(item, "value", None)
    if value is None:
        raise _NoRule  # an op of a tape: no example values to count
    return value


def _is_mask(item) -> bool:
    op = _op_of(item)
    if op is not None:
        return bool(op.shape) and op.dtype == np.bool_
    return isinstance(item, (list, np.ndarray)) and np.result_type(item) == np.bool_


def _is_index_array(item) -> bool:
    op = _op_of(item)
    if op is not None:
        return bool(op.shape)
    return isinstance(item, (list, np.ndarray)) and np.ndim(item) > 0


def _check_index(facts, size, item) -> None:
    last = getattr(item, "last", False)
    if last is not False and _plain(item) >= 0:
        # a loop's counter (tracing/counts.Position): in range up to the last position
        # it takes, or, where an argument gives the count, checked by NumPy as the
        # primal is
        if last is None or _plain(last) < 0:
            return
        item = last
    if isinstance(size, Dim) or isinstance(item, Dim):
        if _plain(item) >= 0:
            facts.decide(size, operator.gt, item)
        else:
            facts.decide(size, operator.ge, -item)


def _slice_size(facts, size, item: slice):
    if not all(v is None or isinstance(v, (int, Dim, np.integer))
               for v in (item.start, item.stop, item.step)):
        width = _window(item)
        if width is None:
            raise _NoRule  # a bound computed from the data: its size is the data's
        return width
    if not (isinstance(size, Dim) or any(isinstance(v, Dim) for v in
                                         (item.start, item.stop, item.step))):
        return len(range(*item.indices(size)))
    if item.step == -1 and item.start is None and item.stop is None:
        return size  # `x[::-1]`: every element, backwards
    if item.step not in (None, 1):
        raise _NoRule
    start = _bound(facts, size, item.start, 0)
    stop = _bound(facts, size, item.stop, size)
    facts.decide(stop, operator.ge, start)
    return stop - start


def _window(item: slice) -> int | None:
    """The width of `t:t + k` for a position `t` the code computes (a loop's
    counter): k, whatever t is; None for any other slice."""
    start, stop = _op_of(item.start), _op_of(item.stop)
    if item.step is not None or start is None or stop is None or not hasattr(stop, "fn"):
        return None
    if stop.fn is operator.add and len(stop.args) == 2 and stop.args[0] is start \
            and type(stop.args[1]) is int and stop.args[1] >= 0:
        return stop.args[1]
    return None


def _bound(facts, size, bound, default):
    """A slice bound as a position in 0..size, deciding where it falls."""
    if bound is None:
        return default
    if not isinstance(bound, (int, Dim)) or isinstance(bound, bool):
        raise _NoRule
    if not facts.decide(bound, operator.ge, 0):  # a size's sign is a fact too (`n - 5`)
        facts.decide(size + bound, operator.ge, 0)
        return size + bound
    facts.decide(size, operator.ge, bound)
    return bound


# --- the table --------------------------------------------------------------------------

_ELEMENTWISE_OPERATORS = (
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.neg, operator.pos, operator.abs, operator.eq,
    operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.and_,
    operator.or_, operator.xor, operator.invert)


@functools.cache
def _table() -> dict:
    table = {fn: _elementwise for fn in _ELEMENTWISE_OPERATORS}
    for fn in (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.var, np.std,
               np.any, np.all, np.nansum, np.nanmean, np.nanmax, np.nanmin):
        table[fn] = _reduction(fn)
    table.update({
        operator.matmul: _matmul, np.matmul: _matmul, np.dot: _dot,
        np.transpose: _transpose, primitives.T: _transpose, np.reshape: _reshape,
        np.zeros: _creation, np.ones: _creation, np.empty: _creation,
        np.full: _creation, np.zeros_like: _like, np.ones_like: _like,
        np.empty_like: _like, np.full_like: _like, np.arange: _arange,
        np.broadcast_to: _broadcast_to, np.expand_dims: _expand_dims,
        np.concatenate: _concatenate, np.stack: _stack, np.where: _where, np.clip: _clip,
        np.outer: _outer, operator.getitem: _getitem, primitives.astype: _same, np.copy: _same,
        primitives.stop_gradient: _same, np.array: _converted, np.asarray: _converted,
        np.asanyarray: _converted, np.ascontiguousarray: _converted, np.moveaxis: _moveaxis,
        np.swapaxes: _swapaxes,
        primitives.dimension: lambda facts, d: (),
        primitives.index_update: _index_store, primitives.index_add: _index_store,
    })
    return table


def _rule(fn):
    if isinstance(fn, np.ufunc) and fn.nout == 1:
        return _elementwise
    try:
        rule = _table().get(fn) or _RULES.get(fn)
    except TypeError:
        return None
    if rule is None and str(getattr(fn, "__module__", None)).startswith("scipy"):
        rule = _BY_NAME.get(primitives.display_name(fn))
    return rule


