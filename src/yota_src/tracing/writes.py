"""In-place changes, made functional: `x[i] = v`, `x += y`, `out=`,
`np.add.at`. The tape records a new value (an index_update, an index_add)
and every alias of the written array, views included, is given it, so the
code reads as Python ran it while the tape stays a pure program."""

from __future__ import annotations

import math
import operator

import numpy as np

from yota_src.core import primitives
from yota_src.core.values import ATTR
from yota_src.errors import MutationError
from yota_src.ir.dims import plain
from yota_src.ir.tape import Call, Const, Input
from yota_src.tracing.row_lists import NotStacked, a_row
from yota_src.tracing.source import node_text
from yota_src.tracing.traced import Traced, has_traced, traced_in, values_of

# `ufunc.at` that is an accumulation, recorded functionally as index_add: the
# sign the values are added with.
ACCUMULATING_AT = {np.add: 1, np.subtract: -1}


class Writes:
    """Writes into arrays the function made; arguments and arrays from
    outside are refused, as the change would escape the tape. Items and
    attributes set on an object passed in are replayed by the generated code
    (`into_argument`)."""

    def __init__(self, unroller):
        self.unroller = unroller
        self.undo: list[tuple] = []  # (object, step, had it, old value): put back after the trace
        self.written: dict[tuple, object] = {}  # (id of object, step) -> where it was written

    def into_argument(self, obj, step: tuple, value, node, frame) -> None:
        """`bn_param["running_mean"] = v`, `model.mode = "train"`, `xs[0] = v`
        into an object passed in: the generated code makes the same write into
        the same object, after the same earlier effects; the gradient is
        computed as the tape's dataflow says, so a later read of what was
        written is refused (`read_back`). The caller makes the write; it is
        undone when the trace ends (`put_back`), since the call of the
        generated code makes it. Objects from outside, objects reached by two
        paths and values generated code cannot spell are refused."""
        outside = self.unroller.outside_reads
        path = outside.held_paths.get(id(obj))
        where = self.unroller.location_of(node, frame)
        if not path or not self.unroller.user_code or id(obj) in outside.outside:
            outside.refuse_write(obj, node, frame)  # raises where it is not the arguments'
            return
        if id(obj) in outside.aliased:
            raise MutationError(
                "in-place change of an object passed in that the arguments hold twice", where,
                hint="The generated code repeats a write into an argument at one place: pass "
                     "the object once, or return the new value instead.")
        if a_row(value):  # the generated code would store a row of its stack
            raise NotStacked("an item of a list argument read as one array is stored")
        if not (isinstance(value, Traced) or _spelled_as_literal(value)) \
                or not _spelled_as_literal(step[1]):
            raise MutationError(
                "in-place change of an argument with a "
                f"{'function' if callable(value) else type(value).__name__} value",
                where, hint="The generated code repeats writes into arguments of arrays, "
                            "numbers, strings, None and tuples of them: return anything else.")
        kind, key = step
        had = hasattr(obj, key) if kind == ATTR else \
            (key in obj if isinstance(obj, dict) else True)
        old = (getattr(obj, key, None) if kind == ATTR else obj[key] if had else None)
        self.undo.append((obj, step, had, old))
        self.written[(id(obj), step)] = where
        recorder = self.unroller.recorder
        depends = isinstance(value, Traced) and value.op.depends
        recorder.ops.append(Call(primitives.store_in_argument,
                                 (path[0][1], path[1:] + (step,), recorder.refs(value, where)),
                                 {}, None, None, where, depends))

    def read_back(self, obj, step: tuple, value) -> None:
        """What the function wrote into an argument, read again as a value
        computed from the arguments: refused, so that a gradient never depends
        on a write the caller sees."""
        try:
            where = self.written.get((id(obj), step))
        except TypeError:  # a key no write had: a tuple of slices (unhashable before 3.12)
            return
        if where is None or not (isinstance(value, Traced) and value.op.depends):
            return
        raise MutationError(
            f"a value written into an argument at {where.short if where else 'an earlier line'} "
            "is read back", self.unroller.loc,
            hint="The generated code repeats writes into arguments whose value the loss does "
                 "not read again: keep the value in a local variable and read that.")

    def put_back(self) -> None:
        """Undo the trace's writes into arguments, latest first: the call of
        the generated code makes them."""
        for obj, (kind, key), had, old in reversed(self.undo):
            if kind == ATTR:
                if had:
                    setattr(obj, key, old)
                else:
                    delattr(obj, key)
            elif had:
                obj[key] = old
            else:
                del obj[key]
        self.undo.clear()

    def mutate(self, target: Traced, new: Traced, node, frame, written=None) -> None:
        """Apply an in-place change: every alias of `target` now holds `new`.

        The tape stays functional; Python aliasing is honoured by updating the
        one `Traced` all names share. A view is written through into the array
        it looks into, and the views into a written array follow it (views.py).
        Arguments and arrays from outside are refused: the change would escape
        where the tape cannot follow. `written` is the old memory that changed
        (None: all of it)."""
        where = self.unroller.location_of(node, frame)
        views = self.unroller.recorder.views
        if views.record_of(target) is not None:
            new = self.cast_for(target, new, where)
            root, changed = views.write_through(target, new, where)
            self.mutate(root, changed, node, frame)
            return
        if target.op in self.unroller.recorder.row_ops:  # the caller's array in a list
            raise NotStacked("an item of a list argument read as one array is changed")
        if isinstance(target.op, Const):
            raise self.unroller.outside_reads.outside_write(node, frame)
        if isinstance(target.op, Input):
            raise MutationError(
                "in-place change of an argument", where,
                hint="The caller would see the change, which generated code does not "
                     "reproduce: copy first (`x = x.copy()`) or build a new array.")
        new = self.cast_for(target, new, where)
        old = target.value
        target.op, target.value = new.op, new.value
        views.refresh(target, old if written is None else written)

    def cast_for(self, target: Traced, new: Traced, where) -> Traced:
        """`new` as a value `target` can hold in place: its shape, and its dtype
        where NumPy's in-place rules allow the cast."""
        if np.shape(new.value) != np.shape(target.value):
            raise ValueError(f"cannot write a {np.shape(new.value)} result into an array of "
                             f"shape {np.shape(target.value)} ({where.short if where else ''})")
        if np.result_type(new.value) == target.value.dtype:
            return new
        if not np.can_cast(np.result_type(new.value), target.value.dtype, "same_kind"):
            raise TypeError(  # as NumPy's in-place ufuncs do (`t = np.arange(5); t *= dt`)
                f"Cannot cast the result from dtype('{np.result_type(new.value)}') to "
                f"dtype('{target.value.dtype}') with casting rule 'same_kind' "
                f"({where.short if where else 'in place'})")
        return self.unroller.primitive(primitives.astype, (new, target.value.dtype), {})

    def store(self, container: Traced, index, value, node, frame) -> None:
        """`container[index] = value` as a functional index_update."""
        if not primitives.is_basic_index(index):
            if any(t.op.depends for t in traced_in(index)):
                if not (_unique_whatever_the_data(index) or not has_traced(value)
                        and np.ndim(value) == 0):  # one value: which write is last cannot matter
                    self.guard_written_once(container, index, node, frame)
            else:
                shape = np.shape(container.value)
                every = np.arange(np.prod(shape, dtype=int)).reshape(shape)
                selected = every[plain(values_of(index))]
                if np.unique(selected).size != selected.size:  # an element written twice
                    raise MutationError("assignment with repeated indices",
                                        self.unroller.location_of(node, frame),
                                        hint="Only the last write would count; make the "
                                             "indices unique or accumulate with np.add.at.")
        written = _region(container.value, plain(values_of(index)))  # the memory written
        new = self.unroller.primitive(primitives.index_update, (container, index, value), {})
        self.mutate(container, new, node, frame, written)

    def guard_written_once(self, container: Traced, index, node, frame) -> None:
        """Indices from the data that write each element once at the example:
        guarded so. Where data repeats one, NumPy leaves which write is last
        open, so the generated code raises ControlFlowChanged rather than
        guess; an example that repeats one is refused now, for the same reason."""
        primitive = self.unroller.primitive
        shape = np.shape(container.value)
        positions = primitive(np.reshape, (primitive(np.arange, (math.prod(shape),), {}),
                                           shape), {})
        written = primitive(np.ravel, (primitive(operator.getitem, (positions, index), {}),), {})
        ordered = primitive(np.sort, (written,), {})
        repeats = primitive(np.any, (primitive(operator.eq, (
            primitive(operator.getitem, (ordered, slice(1, None)), {}),
            primitive(operator.getitem, (ordered, slice(None, -1)), {})), {}),), {})
        text = f"{node_text(node)} = ... writes an element twice"
        if self.unroller.decisions.concretize(repeats, bool, node, frame, text=text):
            raise MutationError(
                "assignment of values through indices from the data that repeat an element",
                self.unroller.location_of(node, frame),
                hint="NumPy does not say which write is last: use a boolean mask "
                     "(x[mask] = v), np.where(mask, new, x), or accumulate with np.add.at.")

    def into(self, fn, args: tuple, kwargs: dict):
        """`np.tanh(g, out=g)`: the result, written in place into a local
        array (every alias sees it), only where a ufunc's `where=` mask is
        True; an argument or an array from outside is refused when written,
        as any in-place change."""
        primitive = self.unroller.primitive
        out = kwargs["out"]
        target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(target, Traced) or not isinstance(target.value, np.ndarray):
            raise MutationError(f"{primitives.display_name(fn)} writes into an array the "
                                "function did not make (out=)", self.unroller.loc,
                                hint="Use the result instead: `y = np.add(x, z)`.")
        where = kwargs.get("where", True) if isinstance(fn, np.ufunc) else True
        rest = {k: v for k, v in kwargs.items() if k != "out" and (k != "where" or where is True)}
        if primitives.is_random_draw(fn):  # `rng.random(out=buf)` draws one per element
            rest.setdefault("size", target.value.shape)
            if target.value.dtype != np.float64:
                rest.setdefault("dtype", target.value.dtype)
        result = primitive(fn, args, rest)
        if where is not True:
            result = primitive(np.where, (where, result, target), {})
        self.mutate(target, primitive(np.broadcast_to, (result, target.value.shape), {})
                    if np.shape(result.value) != target.value.shape else result, None, None)
        return target if not isinstance(out, tuple) else (target,)

    def ufunc_at(self, fn, args: tuple, kwargs: dict) -> None:
        """`np.add.at(a, index, b)` (or np.subtract.at) changes the local array
        `a` in place: recorded as a functional index_add bound to every alias of
        `a`, as `a[index] += b` is. The other `ufunc.at` are refused."""
        name = primitives.display_name(fn)
        sign = ACCUMULATING_AT.get(fn.__self__)
        if sign is None or len(args) != 3 or kwargs:
            raise MutationError(
                f"{name} writes into its first argument", self.unroller.loc,
                hint="Only np.add.at(a, index, b) and np.subtract.at(a, index, b) are "
                     "rewritten as functional updates; compute the result as a new array "
                     "(e.g. with np.where, or np.add.at on a fresh array).")
        target, index, values = args
        if not isinstance(target, Traced):
            raise MutationError(f"{name} on an array the function did not create",
                                self.unroller.loc,
                                hint="Copy it into a local array first (`y = y.copy()`).")
        if sign < 0:
            values = (self.unroller.primitive(operator.neg, (values,), {})
                      if isinstance(values, Traced) else np.negative(values))
        new = self.unroller.primitive(primitives.index_add, (target, index, values), {})
        self.mutate(target, new, None, None)


def _unique_whatever_the_data(index) -> bool:
    """Does this index select each element at most once, whatever the traced
    parts hold? A boolean mask does; so does a tuple with a static integer
    array whose values are distinct along the selection (`[np.arange(n), y]`)."""
    items = index if isinstance(index, tuple) else (index,)
    if all(not isinstance(item, Traced) or np.result_type(item.value) == np.bool_
           for item in items):
        return True
    arrays = [item for item in items if isinstance(item, (Traced, np.ndarray, list))]
    try:
        shape = np.broadcast_shapes(*(np.shape(values_of(item)) for item in arrays))
    except ValueError:
        return False
    fixed = [np.asarray(values_of(item)) for item in arrays  # np.arange(n): not from the data
             if not isinstance(item, Traced) or not item.op.depends
             or getattr(item.op, "fn", None) is np.arange]  # (of a size: distinct too)
    return any(np.issubdtype(item.dtype, np.integer) and item.shape == shape
               and np.unique(item).size == item.size for item in fixed)


def _region(array: np.ndarray, index):
    """The memory `array[index] = ...` writes, as a view (ints become one-wide
    slices, so `x[0, 0]` is a region, not a copied number); None for indices
    that select by value (arrays, masks)."""
    if not primitives.is_basic_index(index):
        return None
    items = index if isinstance(index, tuple) else (index,)
    as_slices = tuple(slice(i, i + 1 if i != -1 else None)
                      if isinstance(i, (int, np.integer)) else i for i in items)
    return array[as_slices]


def _spelled_as_literal(value) -> bool:
    """A value generated code writes as a literal: numbers, text, None, and
    tuples and lists of them."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return True
    if type(value) in (tuple, list):
        return all(_spelled_as_literal(item) for item in value)
    return False
