"""Statements while unrolling: assignments (names, unpacking, items,
attributes), `if` decided on values, loops run (and rolled while traced,
rolling.py), `with` blocks of known context managers, `try` bodies run
through, imports read from outside. One small `exec_<node>` method per
statement kind; the interpreter dispatches to them."""

from __future__ import annotations

import contextlib
import itertools
import operator
import warnings

import gast
import numpy as np

from yota_src.core import operators
from yota_src.core.values import ATTR
from yota_src.errors import LoopEntry, MutationError, UnsupportedSyntaxError, YotaError
from yota_src.ir import contexts
from yota_src.ir.dims import Dim
from yota_src.tracing import counts, rolling
from yota_src.tracing.frames import Break, Continue, Return
from yota_src.tracing.ownership import user_instance
from yota_src.tracing.row_lists import as_rows
from yota_src.tracing.source import node_text
from yota_src.tracing.traced import Traced, give_name

BINARY = operators.by_node(gast, "binary")
KNOWN_CONTEXTS = (np.errstate, contextlib.nullcontext, warnings.catch_warnings)
MAX_LOOP = 1_000_000


class Statements:
    """What each statement does, and assignment to each kind of target."""

    def __init__(self, unroller):
        self.unroller = unroller
        # the interpreter's dispatch, reached at every node and block
        self.eval, self.exec_block = unroller.eval, unroller.exec_block

    def bind(self, target, value, frame):
        """Assign to a target: names, unpacking, container items, attributes."""
        kind = type(target)
        if kind is gast.Name:
            self.scope_of(target.id, target, frame)[target.id] = value
            if self.unroller.user_code:
                give_name(value, target.id)
                if isinstance(value, Dim):  # `T, N, D = xs.shape`: the sizes' names
                    value.facts.name(value, target.id)
        elif kind in (gast.Tuple, gast.List):
            self.unpack(target.elts, value, target, frame)
        elif kind is gast.Subscript:
            container = self.eval(target.value, frame)
            index = self.unroller.expressions.index(container, target, frame)
            self.unroller.access.store_item(container, index, value, target, frame)
        elif kind is gast.Attribute:
            obj = self.eval(target.value, frame)
            if isinstance(obj, Traced):
                raise MutationError("assignment to an attribute of an array",
                                    self.unroller.location_of(target, frame))
            name = frame.source.mangle(target.attr)
            self.unroller.writes.into_argument(obj, (ATTR, name), value, target, frame)
            setattr(obj, name, value)
        else:
            raise self.unroller.unsupported(target, frame, "this assignment target")

    def scope_of(self, name: str, node, frame) -> dict:
        """The variables an assignment to `name` goes to: the frame's own, or
        for `nonlocal` the enclosing unrolled function's."""
        if name in frame.declared:
            raise self.unroller.outside_reads.outside_write(node, frame)  # `global name`
        if ("nonlocal", name) not in frame.declared:
            return frame.locals
        enclosing = frame.parent
        while enclosing is not None and name not in enclosing.locals:
            enclosing = enclosing.parent
        if enclosing is None:  # a cell of a function defined outside the unrolled code
            raise self.unroller.outside_reads.outside_write(node, frame)
        return enclosing.locals

    def unpack(self, targets, value, node, frame):
        items = self.unroller.access.iterate(value, node, frame)
        starred = [i for i, t in enumerate(targets) if isinstance(t, gast.Starred)]
        if starred:
            i = starred[0]
            after = len(targets) - i - 1
            if len(items) < len(targets) - 1:
                where = self.unroller.location_of(node, frame).short
                raise ValueError(f"not enough values to unpack at {where}")
            items = items[:i] + [items[i:len(items) - after]] + items[len(items) - after:]
            targets = targets[:i] + [targets[i].value] + targets[i + 1:]
        if len(items) != len(targets):
            raise ValueError(f"cannot unpack {len(items)} values into {len(targets)} names "
                             f"at {self.unroller.location_of(node, frame).short}")
        for target, item in zip(targets, items):
            self.bind(target, item, frame)

    def exec_Expr(self, stmt, frame):
        self.eval(stmt.value, frame)

    def exec_Pass(self, stmt, frame):
        pass

    def exec_Global(self, stmt, frame):
        """`global X`: X is read from the module; assigning it would change
        outside state, and is refused where it happens."""
        frame.declared.update(stmt.names)

    def exec_Nonlocal(self, stmt, frame):
        """`nonlocal X` in a function defined in the unrolled code: X is the
        enclosing function's variable (assigning it changes that one); in a
        closure of a function defined outside, assigning it is refused."""
        for name in stmt.names:
            frame.locals.pop(name, None)
            frame.declared.add(("nonlocal", name))

    def exec_Assign(self, stmt, frame):
        value = self.eval(stmt.value, frame)
        for target in stmt.targets:
            self.bind(target, value, frame)

    def exec_AnnAssign(self, stmt, frame):
        if stmt.value is not None:
            self.bind(stmt.target, self.eval(stmt.value, frame), frame)

    def exec_AugAssign(self, stmt, frame):
        """`x += y` changes an array in place (every alias sees it, also when
        it is reached as `items[0]` or `self.h`), rebinds immutable values,
        and extends containers in place, as Python does. The target's parts
        are evaluated once."""
        target = stmt.target
        if isinstance(target, gast.Subscript):
            container = self.eval(target.value, frame)
            index = self.unroller.expressions.index(container, target, frame)
            current = self.unroller.access.subscript(container, index, target, frame)
        elif isinstance(target, gast.Attribute):
            owner = self.eval(target.value, frame)
            current = self.unroller.access.attribute(owner, frame.source.mangle(target.attr),
                                                     target, frame)
        else:
            current = self.eval(target, frame)
        rhs = self.eval(stmt.value, frame)
        fn = BINARY[type(stmt.op)]
        if isinstance(current, (list, dict, set)):
            self.unroller.outside_reads.refuse_write(current, target, frame)
        if isinstance(current, (list, dict, set)) or user_instance(current):
            fn = getattr(operator, f"i{fn.__name__.strip('_')}")  # `__iadd__` first, as Python
        new = self.unroller.operators.binary(fn, current, rhs)
        element_of_array = isinstance(target, gast.Subscript) and isinstance(container, Traced)
        if isinstance(current, Traced) and isinstance(current.value, np.ndarray) \
                and not element_of_array:
            self.unroller.writes.mutate(current, new, target, frame)
            if isinstance(target, gast.Name) and self.unroller.user_code:
                give_name(current, target.id)
            new = current  # the same object, stored back as Python does
        if isinstance(target, gast.Subscript):
            self.unroller.access.store_item(container, index, new, target, frame)
        elif isinstance(target, gast.Attribute):
            name = frame.source.mangle(target.attr)
            self.unroller.writes.into_argument(owner, (ATTR, name), new, target, frame)
            setattr(owner, name, new)
        else:
            self.bind(target, new, frame)

    def exec_Return(self, stmt, frame):
        value = None if stmt.value is None else self.eval(stmt.value, frame)
        unroller = self.unroller
        if unroller.depth == 1 and unroller.user_code:  # the differentiated function's own return
            unroller.returned_at = unroller.location_of(stmt, frame)
        raise Return(value)

    def exec_If(self, stmt, frame):
        self.unroller.marks.run(stmt, frame, self.eval(stmt.test, frame), self.exec_block)

    def exec_For(self, stmt, frame):
        count = self.trip_count(stmt, frame)
        if count is not None and count.rows and isinstance(stmt.iter, gast.Name):
            iterable, use = self.eval(stmt.iter, frame), None  # for x in xs
            items = self.unroller.access.items(iterable, stmt.iter, frame, header=True)
        elif count is not None:
            iterable, use = range(count.value), count.counter
            items = iter(iterable)
        elif isinstance(together := self.sized_together(stmt, frame), counts.SizedTogether):
            iterable, count = together, together.count  # enumerate(xs), zip(xs, ys)
            use = count.counter if together.enumerates else None
            counter = together.counter_name(stmt.target)
            if counter is not None:
                self.unroller.index_nodes |= counts.index_positions(stmt.body, counter)
            items = together.items(self.unroller.access, stmt.iter, frame, use)
        else:
            iterable = together if together is not None else as_rows(self.eval(stmt.iter, frame))
            count = self.sized_count(iterable)
            if isinstance(iterable, counts.SizedRange):  # range(T): T may be read at run time
                iterable = iterable.example
            # the counter of a range: rolled at trace time if it only indexes
            use = (count.counter if count is not None else counts.Use()) \
                if isinstance(iterable, range) and iterable.step == 1 \
                and isinstance(stmt.target, gast.Name) else None
            items = self.unroller.access.items(iterable, stmt.iter, frame,
                                               header=count is not None)
        first = iterable.start if isinstance(iterable, range) and iterable.step == 1 else None
        total = _length(iterable)
        last = (count.size - 1 if count.size is not None else None) if count is not None \
            else (iterable[-1] if isinstance(iterable, range) and iterable else None)
        if use is not None and isinstance(stmt.target, gast.Name):
            self.unroller.index_nodes |= counts.index_positions(stmt.body, stmt.target.id)
        starts = []  # where each iteration's ops begin
        with self.loop(stmt, frame, count, first) as (start, settle):
            for iteration in itertools.count():
                start(iteration)  # the next item (`xs[t]`, unpacking) is the `for` line's
                begin = len(self.unroller.recorder.ops)
                try:
                    item = next(items)
                except StopIteration:
                    break
                if use is not None and not isinstance(iterable, counts.SizedTogether):
                    item = counts.Counter(item, use, last)
                starts.append(begin)
                self.bind(stmt.target, item, frame)
                if self.iteration(stmt.body, frame):
                    return
                entry = settle()
                if total is not None and rolling.roll_rest(self.unroller, frame, entry, starts,
                                                           total, use):
                    self.bind_last(stmt.target, iterable, total, use, last, frame)
                    break
        self.unroller.at(stmt, frame)
        self.exec_block(stmt.orelse, frame)

    def bind_last(self, target, iterable, total: int, use, last, frame) -> None:
        """A loop rolled at trace time: its name holds the last item, as Python leaves it."""
        if isinstance(iterable, counts.SizedTogether):
            self.bind(target, iterable.last_item(self.unroller.access, target, frame, use),
                      frame)
            return
        if not isinstance(target, gast.Name) or target.id not in frame.locals:
            return
        if isinstance(iterable, Traced):  # the last row: `xs[K - 1]` where K is a size
            row = self.unroller.access.subscript(
                iterable, last if isinstance(last, Dim) else total - 1, target, frame)
            self.bind(target, row, frame)
        else:  # a range
            self.bind(target, counts.Counter(iterable[-1], use, last) if use is not None
                      else iterable[-1], frame)

    def exec_While(self, stmt, frame):
        truth = self.unroller.decisions.truth
        with self.loop(stmt, frame) as (start, settle):
            for count in itertools.count():
                start(count)  # the test that starts iteration `count`
                if not truth(self.eval(stmt.test, frame), stmt.test, frame):
                    break
                if count >= MAX_LOOP:
                    raise UnsupportedSyntaxError(f"the loop ran more than {MAX_LOOP} times",
                                                 self.unroller.location_of(stmt, frame))
                if self.iteration(stmt.body, frame):
                    return
                settle()
        self.unroller.at(stmt, frame)
        self.exec_block(stmt.orelse, frame)

    def sized_together(self, stmt, frame):
        """`enumerate(xs)` or `zip(xs, ys, ...)` over the rows of arrays (or
        ranges) whose lengths are sizes read at run time, all equal: one
        count, read at run time where the loop rolls whole (a SizedTogether).
        Its arguments are evaluated once, here: where they are not all
        sized, the call made of them; None where it is no such call."""
        node = stmt.iter
        if not self.unroller.user_code or self.unroller.dims is None \
                or not isinstance(node, gast.Call) or node.keywords or not node.args \
                or any(isinstance(arg, gast.Starred) for arg in node.args) \
                or not isinstance(node.func, gast.Name):
            return None
        called = self.eval(node.func, frame)
        enumerates = called is enumerate
        if called not in (enumerate, zip) or enumerates and len(node.args) != 1:
            return None
        given = [self.eval(arg, frame) for arg in node.args]
        parts = [as_rows(part) for part in given]  # a list argument read as one array: its stack
        lengths = [self.rows_size(part) for part in parts]
        if any(length is None for length in lengths) \
                or len({length.value for length in lengths}) != 1:
            return self.unroller.calls.call(called, given, {}, node, frame)
        for other in lengths[1:]:  # zip stops at the shortest: equal lengths, checked
            self.unroller.dims.require(lengths[0], operator.eq, other,
                                       self.unroller.location_of(stmt, frame))
        return counts.SizedTogether(parts, self.sized_count(parts[0]), enumerates)

    def rows_size(self, value) -> Dim | None:
        """The number of rows of a traced array, where it is a size read at run time."""
        if not isinstance(value, Traced) or not isinstance(value.value, np.ndarray) \
                or not value.op.dims or not isinstance(value.op.dims[0], Dim):
            return None
        return value.op.dims[0]

    def sized_count(self, iterable) -> counts.LoopCount | None:
        """A loop over `range(T)` or over the rows of an array, where T or the
        number of rows is a size read at run time (ir/dims.py): its count,
        which the code reads at run time if the loop rolls whole (else it
        is pinned)."""
        facts = self.unroller.dims
        if isinstance(iterable, counts.SizedRange):
            return iterable.count(facts)
        size = self.rows_size(iterable)
        if facts is None or not self.unroller.user_code or size is None:
            return None
        return counts.SizedRange(0, size).count(facts)

    def trip_count(self, stmt, frame) -> counts.LoopCount | None:
        """`for t in range(n):` over an int argument `n`, or a loop over the
        rows of an array argument: the loop's count, which may be read at run
        time if nothing else uses `n` or the array's length (counts.py)."""
        if not self.unroller.user_code:
            return None
        name = counts.range_of_count(stmt.iter)
        if name is not None:
            # read for the count: no other use of it
            value = self.unroller.expressions.eval_Name(name, frame)
            if isinstance(value, counts.TripCount) and self.eval(stmt.iter.func, frame) is range:
                return counts.LoopCount.of(value)
        found = counts.rows_of_count(stmt.iter)
        if found is None or self.unroller.dims is not None:  # sizes: `sized_count`
            return None
        name, how, less = found
        value = self.unroller.expressions.eval_Name(name, frame)
        watch = self.unroller.lengths.get(value.op) if isinstance(value, Traced) else None
        stop = stmt.iter.args[0] if how == "range" else None
        stop = stop.left if isinstance(stop, gast.BinOp) else stop
        if watch is None or how == "range" and (
                self.eval(stmt.iter.func, frame) is not range
                or isinstance(stop, gast.Call) and self.eval(stop.func, frame) is not len):
            return None
        return counts.LoopCount(len(value.value) - less, watch[0], watch[1], rows=True,
                                less=less)

    @contextlib.contextmanager
    def loop(self, stmt, frame, count=None, first: int | None = None):
        """A loop statement runs: `start(i)` begins iteration i, whose ops
        record (entry, i) in their location's loops, at the loop's header
        (its test or next item: else those ops would carry the body's last line)."""
        unroller = self.unroller
        header = frame.source.location(stmt) if unroller.user_code else None
        state = counts.LoopState(stmt.body)
        outer, entry = unroller.loops, LoopEntry(next(unroller.loop_entries), header, count,
                                                 isinstance(stmt, gast.While), first, state)
        if count is not None:
            count.state = state
        calls = [unroller.opaque_calls]

        def start(iteration: int) -> None:
            unroller.loops = outer + ((entry, iteration),)
            unroller.at(stmt, frame)

        def settle() -> LoopEntry:
            """An iteration has run: note what it changed; the loop's entry."""
            state.after_iteration(frame.locals, unroller.opaque_calls != calls[0])
            calls[0] = unroller.opaque_calls
            return entry
        try:
            yield start, settle
        finally:
            unroller.loops = outer

    def iteration(self, body, frame) -> bool:
        """Run a loop body once; True where it breaks out of the loop."""
        try:
            self.exec_block(self.unroller.marks.loop_body(body), frame)
        except Break:
            return True
        except Continue:
            pass
        return False

    def exec_Break(self, stmt, frame):
        raise Break

    def exec_Continue(self, stmt, frame):
        raise Continue

    def exec_FunctionDef(self, stmt, frame):
        frame.locals[stmt.name] = self.unroller.calls.make_function(stmt, frame, stmt.name)

    def exec_Assert(self, stmt, frame):
        if not self.unroller.decisions.truth(self.eval(stmt.test, frame), stmt.test, frame):
            message = self.eval(stmt.msg, frame) if stmt.msg is not None \
                else node_text(stmt.test)
            raise AssertionError(f"{message} ({self.unroller.location_of(stmt, frame).short})")

    def exec_Raise(self, stmt, frame):
        raise self.eval(stmt.exc, frame)

    def exec_Delete(self, stmt, frame):
        for target in stmt.targets:
            if not isinstance(target, gast.Name):
                raise self.unroller.unsupported(target, frame, "`del` of anything but a name")
            frame.locals.pop(target.id, None)

    def exec_With(self, stmt, frame):
        """Known context managers (np.errstate, ...) wrap the unrolling itself.
        Ops recorded under np.errstate carry its settings in their location,
        so the generated code computes them (and their gradients) under it."""
        unroller = self.unroller
        managers, outer = [], unroller.context
        try:
            for item in stmt.items:
                manager = self.eval(item.context_expr, frame)
                if not isinstance(manager, KNOWN_CONTEXTS):
                    raise UnsupportedSyntaxError(
                        f"`with` over {type(manager).__name__} is not supported",
                        unroller.location_of(item.context_expr, frame),
                        hint="Only np.errstate, contextlib.nullcontext and "
                             "warnings.catch_warnings run through; move other managers "
                             "outside the differentiated function.")
                where = unroller.location_of(item.context_expr, frame)
                if isinstance(manager, np.errstate):
                    unroller.context = contexts.errstate(unroller.context, manager, where)
                elif isinstance(manager, warnings.catch_warnings):
                    unroller.context = contexts.catch_warnings(unroller.context, manager, where)
                value = manager.__enter__()
                managers.append(manager)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value, frame)
            self.exec_block(stmt.body, frame)
        finally:
            unroller.context = outer
            for manager in reversed(managers):
                manager.__exit__(None, None, None)

    def set_warning_filter(self, function, args: tuple, kwargs: dict, node, frame) -> None:
        """warnings.simplefilter(...) in the function: run, and kept in the
        catch_warnings block around it, which the generated code opens too."""
        unroller = self.unroller
        unroller.context = contexts.with_filter(unroller.context, function, args, kwargs,
                                                unroller.location_of(node, frame))
        function(*args, **kwargs)

    def exec_Try(self, stmt, frame):
        """The body runs through; an exception while unrolling it cannot be
        turned into straight-line code, so it is an error, not a branch."""
        unroller = self.unroller
        outer = unroller.context
        caught = tuple(kind for handler in stmt.handlers for kind in self.caught_by(handler, frame))
        if caught:  # the body's code refuses data on which it would raise one of these
            unroller.context = contexts.attempt(outer, caught, unroller.location_of(stmt, frame))
        try:
            try:
                self.exec_block(stmt.body, frame)
            except (Return, Break, Continue, YotaError):
                raise
            except Exception as error:
                if not stmt.handlers:
                    raise
                raise UnsupportedSyntaxError(
                    f"the `try` body raised {type(error).__name__} while unrolling",
                    unroller.location_of(stmt, frame),
                    hint="Exception handlers are not unrolled: check the condition with "
                         "`if` instead of catching the error.") from error
            finally:
                unroller.context = outer
            self.exec_block(stmt.orelse, frame)
        finally:
            self.exec_block(stmt.finalbody, frame)

    def caught_by(self, handler, frame) -> tuple:
        """The exception classes an `except` clause names (Exception for a bare one)."""
        if handler.type is None:
            return (Exception,)
        kinds = self.eval(handler.type, frame)
        return kinds if isinstance(kinds, tuple) else (kinds,)

    def exec_Import(self, stmt, frame):
        for alias in stmt.names:
            module = __import__(alias.name)
            if alias.asname:
                for part in alias.name.split(".")[1:]:
                    module = getattr(module, part)
            name = alias.asname or alias.name.split(".")[0]
            frame.locals[name] = self.unroller.outside_reads.outside_value(module, name)

    def exec_ImportFrom(self, stmt, frame):
        """`from m import K` in the function reads K from outside, as a global
        would: a dependency, and an array read live."""
        module = __import__(stmt.module or "", frame.globals, None,
                            [a.name for a in stmt.names], stmt.level)
        self.unroller.outside_reads.outside_value(module, None)
        for alias in stmt.names:
            frame.locals[alias.asname or alias.name] = self.unroller.access.attribute(
                module, alias.name, stmt, frame)


def _length(iterable) -> int | None:
    """How many items a `for` loop over a range or a traced array's rows has."""
    if isinstance(iterable, range):
        return len(iterable)
    if isinstance(iterable, Traced) and isinstance(iterable.value, np.ndarray) \
            and iterable.value.ndim:
        return iterable.value.shape[0]
    return None
