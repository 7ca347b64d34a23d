"""Arrays that look into other arrays' memory, followed as NumPy follows them.

A slice, a transpose, a reshape or the parts np.split gives are views:
writing into the array changes what a view holds, and writing through a view
changes the array. The tape is functional, so the unroller follows both
directions itself:

* after a write into an array, every view that is still held and overlaps
  what was written is computed again from the new array: the same primitive,
  recorded anew, repointing the view's `Traced` (so every name holding it sees
  the new value), and then the views of that view;
* a write through a view is a write into the array it looks into, found by
  following the views back to the array that owns the memory (`h[t][0] = v`
  is `h[t, 0] = v`); then the other views follow.

Views nobody holds any more are forgotten (weak references), so a temporary
`h[t]` read before `h[t + 1] = ...` costs nothing, and an RNN's state buffer
is written step by step like any local array.
"""

from __future__ import annotations

import operator
import weakref

import numpy as np

from yota_src.core import nested, primitives
from yota_src.errors import MutationError
from yota_src.tracing.traced import Traced, traced_in, values_of


class View:
    """`view` was made by `fn(*args, **kwargs)` and looks into `parent`."""

    __slots__ = ("view", "parent", "fn", "args", "kwargs")

    def __init__(self, view: Traced, parent: Traced, fn, args: tuple, kwargs: dict):
        self.view = weakref.ref(view)
        self.parent = parent
        self.fn = fn
        self.args = args
        self.kwargs = kwargs


class Views:
    """The views made while unrolling, by the array they look into."""

    def __init__(self, unroller):
        self.unroller = unroller
        self.children: dict[int, list[View]] = {}  # id of an array -> views into it
        self.records: dict[int, View] = {}  # id of a view -> how it was made

    def note(self, result: Traced, fn, args: tuple, kwargs: dict) -> None:
        produced = list(primitives.arrays_in(result.value))
        if not produced:
            return
        for arg in traced_in((args, kwargs)):
            if any(np.may_share_memory(out, array) for out in produced
                   for array in primitives.arrays_in(arg.value)):
                record = View(result, arg, fn, args, kwargs)
                self.children.setdefault(id(arg), []).append(record)
                self.records[id(result)] = record
                return

    def record_of(self, traced: Traced) -> View | None:
        record = self.records.get(id(traced))
        return record if record is not None and record.view() is traced else None

    def held(self, parent: Traced) -> list[View]:
        """The views into `parent` someone still holds."""
        alive = [record for record in self.children.get(id(parent), ())
                 if record.view() is not None]
        if alive:
            self.children[id(parent)] = alive
        else:
            self.children.pop(id(parent), None)
        return alive

    def refresh(self, array: Traced, written) -> None:
        """`array` was written (`written`: the old memory that changed, or None
        for all of it): compute again the views that looked into what changed;
        the others still hold the right numbers (their op stands), and are
        made to look into the new memory, so a later write finds them."""
        for record in self.held(array):
            view = record.view()
            if view is None:
                continue
            old = view.value
            if written is None or any(
                    np.may_share_memory(part, region) for part in primitives.arrays_in(old)
                    for region in primitives.arrays_in(written)):
                again = self.unroller.recompute(record.fn, record.args, record.kwargs)
                view.op, view.value = again.op, again.value
                self.refresh(view, old)
            else:
                view.value = record.fn(*values_of(record.args), **values_of(record.kwargs))
                self.refresh(view, ())  # nothing of it changed: its views only move too

    def write_through(self, view: Traced, new: Traced, where) -> tuple[Traced, Traced]:
        """(the array `view` looks into at the root, its value after `view`
        became `new`)."""
        chain = []
        root = view
        while (record := self.record_of(root)) is not None:
            chain.append(record)
            root = record.parent
        first = chain[0]
        if len(chain) == 1 and first.fn is operator.getitem and first.args[0] is root \
                and not isinstance(root.value, (tuple, list)) \
                and primitives.is_basic_index(first.args[1]):  # `row = h[t]`: h[t] = ...
            return root, self.unroller.primitive(primitives.index_update,
                                                 (root, first.args[1], new), {})
        positions = self.positions(chain, root)
        if positions is None or np.unique(positions).size != positions.size:
            raise MutationError(
                f"in-place change through a view made by {primitives.display_name(first.fn)}",
                where, hint="Write into the array it looks into instead, or copy the view "
                            "first (`v = v.copy()`).")
        record = self.unroller.primitive
        if np.array_equal(positions.ravel(), np.arange(np.size(root.value))):
            return root, record(np.reshape, (new, np.shape(root.value)), {})
        flat = record(np.reshape, (root, (-1,)), {})
        written = record(primitives.index_update,
                         (flat, positions.ravel(), record(np.reshape, (new, (-1,)), {})), {})
        return root, record(np.reshape, (written, np.shape(root.value)), {})

    @staticmethod
    def positions(chain: list[View], root: Traced):
        """Where each element of the view sits in `root` (flat indices): the
        views' primitives applied to an array of positions instead."""
        value = np.arange(np.size(root.value)).reshape(np.shape(root.value))
        standing = {id(root): value}
        for record in reversed(chain):
            def swap(structure):
                return nested.map_leaves(
                    structure, lambda traced: standing.get(id(traced), traced.value),
                    lambda value: isinstance(value, Traced))
            try:
                value = record.fn(*swap(record.args), **swap(record.kwargs))
            except Exception:
                return None
            standing = {id(record.view()): value}
        return np.asarray(value) if isinstance(value, np.ndarray) else None
