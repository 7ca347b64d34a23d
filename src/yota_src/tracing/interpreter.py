"""The staged interpreter: a function's gast tree + concrete arguments -> Tape.

Every value is either *static* (ints, strings, shapes, modules, functions,
containers: plain Python objects, evaluated now and folded) or *traced* (a
`Traced`: an op of the tape together with its concrete example value). Loops
run, branches are decided, user functions are inlined and primitives are
recorded. A decision that depends on traced data is recorded as a Guard, so
the straight-line code refuses inputs that would have gone another way.

The interpreter keeps where it is (the line, the loops, the call depth, the
code running natively) and dispatches each node to the room that knows what
it means: statements, expressions, calls, access to attributes and items,
operators, decisions, in-place writes; reads from outside the arguments and
what the trace writes (the recorder) are rooms that own state of their own.
Applying a primitive, folded on static values or recorded on traced ones, is
its own: every room comes to it.
"""

from __future__ import annotations

import itertools
import operator
import types
from collections.abc import Callable
from dataclasses import replace

import gast
import numpy as np

from yota_src.core import nested, operators, primitives, registry
from yota_src.errors import (
    Location,
    MutationError,
    NoDiffRuleError,
    UnsupportedSyntaxError,
    YotaError,
    place,
)
from yota_src.ir.dims import DimFacts, has_dims, pinned, plain
from yota_src.ir.iterations import CounterValue
from yota_src.ir.loops import Loop
from yota_src.ir.tape import Op
from yota_src.tracing import counts
from yota_src.tracing.access import Access, mask_counts
from yota_src.tracing.array_methods import ArrayMethod, ArrayMethods
from yota_src.tracing.branches import Branches
from yota_src.tracing.calls import Calls, UserFunction
from yota_src.tracing.container_changes import contents, unchanged
from yota_src.tracing.decisions import Decisions
from yota_src.tracing.expressions import Expressions
from yota_src.tracing.frames import Break, Continue, Return
from yota_src.tracing.generators import UnrolledGenerator
from yota_src.tracing.operators import Operators
from yota_src.tracing.outside_reads import NoOutsideReads, OutsideReads
from yota_src.tracing.ownership import user_kernel
from yota_src.tracing.random_draws import random_state
from yota_src.tracing.recorder import Recorder
from yota_src.tracing.row_lists import RowList, arrays_for, pin_all
from yota_src.tracing.source import node_text
from yota_src.tracing.statements import Statements
from yota_src.tracing.traced import Traced, has_traced, traced_in, values_of
from yota_src.tracing.views import Views
from yota_src.tracing.writes import Writes

_COUNTS = (counts.TripCount, counts.Counter)
# Primitives whose result's shape depends on the values, not just the shapes.
DATA_SHAPED = {np.unique, np.nonzero, np.flatnonzero, np.argwhere, np.extract, np.compress,
               np.bincount, np.arange, np.setdiff1d, np.intersect1d, np.union1d, np.setxor1d,
               np.trim_zeros, np.histogram, np.histogram_bin_edges,
               *(getattr(np, name) for name in (
                   "unique_values", "unique_counts", "unique_inverse", "unique_all")
                   if hasattr(np, name))}
# Primitives whose result has the shape of their index or condition arguments,
# whatever values those hold.
SHAPED_BY_INDEX_SHAPES = {operator.getitem, np.take, np.take_along_axis, np.choose, np.where,
                          np.select, np.clip, primitives.index_add, primitives.index_update,
                          primitives.item, primitives.fstring}
# Primitives that read an integer array as counts or as a shape.
READS_COUNTS = {np.repeat, np.tile, np.reshape, np.resize, np.broadcast_to, np.full, np.zeros,
                np.ones, np.empty, np.pad, np.split, np.array_split, np.linspace, np.eye}
# of those, the ones whose first argument is the array rearranged (its values are no counts)
_ARRAY_FIRST = {np.repeat, np.tile, np.reshape, np.resize, np.broadcast_to, np.pad, np.split,
                np.array_split}


class Unroller:
    """Runs code on concrete values (the AST semantics and Python's object
    model), recording traced operations through its recorder."""

    # `ys.grad(inner, w)` called in the traced code: the API, a later stage,
    # installs how its own functions are traced (api/nested_derivatives.py)
    nested_derivative: Callable | None = None

    def __init__(self, user_code: bool = True, roll: bool = True, dims: DimFacts | None = None):
        """`user_code`: False where the code run is a library's, not the
        user's (a rule's template and its helpers, which a later stage runs
        on traced values): its lines are not the user's, what it reads from
        outside is no part of the specialisation, and the recorder keeps no
        values (they travel with the Traced values). `roll`: a loop whose
        iterations settled may become a loop op while traced (rolling.py).
        `dims`: the facts of the trace's symbolic dimensions (ir/dims.py), or
        None where every size is the example's."""
        self.user_code = user_code
        self.dims = dims
        # where the interpreter is: the statement (or native call) whose ops are
        # being recorded, handed to the recorder with each of them, and the
        # loops it is in ((entry, iteration) each, in Location.loops)
        self.loc: Location | None = None
        self.loops: tuple = ()
        self.loop_entries = itertools.count()
        self.branches: tuple = ()  # (BranchEntry, arm) each, in Location.branches
        self.native: tuple | None = None  # (node, frame) of the call running natively
        self.context: tuple = ()  # the np.errstate, warnings and try blocks around us
        self.depth = 0
        self.generator: UnrolledGenerator | None = None  # whose body runs now, if any
        self.generators: list[UnrolledGenerator] = []  # started while unrolling
        self.returned_at: Location | None = None  # the top-level `return` that ran
        # counts (counts.py): where a counter only indexes, an array argument's rows
        self.index_nodes: set[int] = set()
        self.lengths: dict[Op, tuple[int, counts.Use]] = {}
        self.python_index = False  # evaluating the index of a Python container
        self.sized_slices = False  # evaluating the index of a traced array: sizes stay sizes
        # calls whose effects the ops may not show: helpers inlined, code run natively
        # (counts.LoopState)
        self.opaque_calls = 0
        self.roll = roll  # loops may roll while traced (rolling.py)
        self.roll_attempts: dict = {}  # loop entry -> the iteration to try rolling it again
        self.random_states: dict = {}  # generators drawn from: (generator, state before)
        # the rooms
        self.recorder = Recorder(self, keep_values=user_code)
        self.marks = Branches(self)
        if dims is not None and user_code:  # a template driver sets them as it runs one
            dims.where = lambda: self.loc
            dims.as_value = self.recorder.dimension
        self.recorder.views = Views(self)  # which arrays look into which (slices, ...)
        self.outside_reads = OutsideReads(self) if user_code else NoOutsideReads(self)
        self.decisions = Decisions(self)
        self.operators = Operators(self)
        self.access = Access(self)
        self.writes = Writes(self)
        self.calls = Calls(self)
        self.array_methods = ArrayMethods(self)
        self.statements = Statements(self)
        self.expressions = Expressions(self)
        self._stmt_handlers = {}
        self._expr_handlers = {}

    # -- entry point ----------------------------------------------------------------

    def call_function(self, fn, args: tuple, kwargs: dict):
        """Inline a top-level Python function on (partly traced) arguments."""
        return self.calls.inline_function(fn, args, kwargs, None, None)

    # -- dispatch -------------------------------------------------------------------

    def exec_block(self, body, frame):
        for stmt in body:
            self.exec(stmt, frame)

    def exec(self, stmt, frame):
        self.at(stmt, frame)
        handler = self._stmt_handlers.get(type(stmt))
        if handler is None:
            handler = getattr(self.statements, f"exec_{type(stmt).__name__}", None)
            if handler is None:
                raise self.unsupported(stmt, frame, f"the `{_keyword(stmt)}` statement")
            self._stmt_handlers[type(stmt)] = handler
        try:
            handler(stmt, frame)
        except (Return, Break, Continue):
            raise
        except (Exception, SystemExit) as error:  # the innermost user line, for messages
            if getattr(error, "yota_location", None) is None and self.user_code:
                error.yota_location = self.loc
            raise

    def eval(self, node, frame):
        handler = self._expr_handlers.get(type(node))
        if handler is None:
            handler = getattr(self.expressions, f"eval_{type(node).__name__}", None)
            if handler is None:
                raise self.unsupported(node, frame, f"the expression `{node_text(node)}`")
            self._expr_handlers[type(node)] = handler
        value = handler(node, frame)
        if type(value) in _COUNTS:  # a trip count or a counter, used: no longer free
            if type(value) is not counts.Counter or id(node) not in self.index_nodes \
                    or self.python_index:  # indexing a Python value reads what no op shows
                value.use.used = True
                if self.branches:  # `(-1) ** t`, `coeffs[t]` in an arm: the iterations that
                    self.opaque_calls += 1  # took the arm may all agree where others would not
                if type(value) is counts.Counter and not self.python_index:
                    return CounterValue(value)  # may meet the data: `j == y[i]`
                return int(value)
            return counts.Position(value, value.last)  # an array's index
        return value

    # -- where the interpreter is -----------------------------------------------------

    def at(self, stmt, frame) -> None:
        """Make `stmt` the current line of the user's code: each statement as
        it runs, and a loop's header again before each test or next item."""
        if self.user_code:
            self.loc = self.in_context(frame.source.location(stmt))

    def in_context(self, loc: Location) -> Location:
        """`loc` with the blocks and loops the interpreter is in there."""
        if not (self.context or self.loops or self.branches):
            return loc
        return replace(loc, context=self.context, loops=self.loops, branches=self.branches)

    def location_of(self, node, frame) -> Location | None:
        if node is None or frame is None:
            return self.loc
        return self.in_context(frame.source.location(node)) if self.user_code else self.loc

    def decision_location(self, node, frame) -> Location | None:
        """Where a decision is, as its message says: the user's line, also in
        code yota-src generated (source.py)."""
        if node is None or frame is None or not self.user_code:
            return self.location_of(node, frame)
        return self.in_context(frame.source.user_location(node))

    def unsupported(self, node, frame, what: str) -> UnsupportedSyntaxError:
        return UnsupportedSyntaxError(f"{what} is not supported", self.location_of(node, frame),
                                      hint=_REWRITES.get(type(node), ""))

    def where(self) -> Location | None:
        """The user's line that code running natively was called from."""
        return self.location_of(*(self.native or (None, None)))

    def natively(self, node, frame, fn, *args, **kwargs):
        """Run `fn` (sorted, dict.__setitem__, a container search, ...) on values
        that may be traced: the decisions it takes are guarded and named after
        `node`."""
        saved, self.native = self.native, (node, frame)
        pin_all((args, kwargs, getattr(fn, "__self__", None)))
        if self.dims is not None:
            args, kwargs = pinned((args, kwargs))  # sizes it could do anything with
            owner = getattr(fn, "__self__", None)
            if isinstance(owner, (tuple, list)) and has_dims(owner):  # `x.shape.count(6)`
                if isinstance(owner, list):
                    owner[:] = pinned(list(owner))
                else:
                    fn = getattr(pinned(owner), fn.__name__)
        try:
            return fn(*args, **kwargs)
        finally:
            self.native = saved

    def swap_position(self, state):
        """Where the interpreter is (line, call depth, running generator): given
        back, and replaced by `state` unless it is None (generators.py)."""
        position = (self.loc, self.native, self.depth, self.user_code, self.generator,
                    self.loops, self.branches)
        if state is not None:
            (self.loc, self.native, self.depth, self.user_code, self.generator,
             self.loops, self.branches) = state
        return position

    def close_generators(self) -> None:
        for generator in reversed(self.generators):
            generator.close()
        self.generators.clear()

    # -- primitives: folded or recorded ------------------------------------------------

    def primitive(self, fn, args: tuple, kwargs: dict):
        """Apply a primitive: fold it when nothing is traced, else record it.

        A static call that builds an array (np.zeros, np.arange) is recorded
        too, so the generated code says how the array is made.
        """
        try:
            hash(fn)
        except TypeError:
            raise UnsupportedSyntaxError(
                f"a call of a {type(fn).__name__} object", self.loc,
                hint="Generated code can call functions, not objects such as np.poly1d: "
                     "call the function it stands for (np.polyval(coefficients, x)).") from None
        if fn in (np.nonzero, np.where) and len(args) == 1 and not kwargs \
                and isinstance(args[0], Traced) and np.ndim(args[0].value) == 1:
            # the positions a 1-d mask selects, as many as it selects (ir/library_shapes.py)
            return (self.primitive(np.flatnonzero, args, {}),)
        if any(isinstance(a, RowList) for a in (*args, *kwargs.values())):
            made = arrays_for(self, fn, args, kwargs)
            if isinstance(made, Traced):
                return made
            args, kwargs = made
        if kwargs.get("out") is not None:
            return self.writes.into(fn, args, kwargs)
        if isinstance(fn, np.ufunc) and kwargs.get("where", True) is not True:
            raise UnsupportedSyntaxError(
                f"{primitives.display_name(fn)}(..., where=...) without out=", self.loc,
                hint="NumPy leaves the elements where the mask is False uninitialised: "
                     "use np.where(mask, f(x), other), or pass out= an array to keep them.")
        if primitives.is_ufunc_at(fn):
            return self.writes.ufunc_at(fn, args, kwargs)
        self.refuse_callbacks(fn, args, kwargs)
        if any(isinstance(a, types.GeneratorType) for a in (*args, *kwargs.values())):
            if fn is not np.fromiter:
                raise UnsupportedSyntaxError(
                    f"{primitives.display_name(fn)} given a generator", self.loc,
                    hint="Pass a list (a list comprehension) instead.")
            args = (list(args[0]), *args[1:])
        draws = primitives.random_source(fn)
        if draws is primitives.draw:  # generator.method(...): the generator is the first argument
            draws = values_of(args[0])
        if draws is not None and (getattr(fn, "__name__", "") == "shuffle"
                                  or (fn is primitives.draw and args[1] == "shuffle")):
            # it may leave a short list as it was, so no comparison can tell
            name = f"{type(draws).__name__}.shuffle" if fn is primitives.draw \
                else primitives.display_name(fn)
            raise MutationError(
                f"{name} writes into its argument", self.loc,
                hint="Generated code is functional: index with a permutation instead "
                     "(`items = [items[i] for i in np.random.permutation(len(items))]`).")
        if draws is not None:
            self.random_states.setdefault(id(draws), (draws, random_state(draws)))
        elif not has_traced((args, kwargs)) and not (self.dims is not None
                                                    and has_dims((args, kwargs))):
            value = self.run_primitive(fn, args, kwargs)
            if isinstance(value, np.ndarray) or isinstance(value, primitives.GENERATORS) \
                    or (self.user_code and isinstance(value, np.floating)
                        and _numpy_function(fn)):
                # how it is made: np.zeros(3), and np.sqrt(4) rather than a bare 2.0
                return self.recorder.record(fn, args, kwargs, value, self.loc)
            return value
        try:
            values, keywords = values_of(args), values_of(kwargs)
            if self.dims is not None:  # sizes as their example values, for NumPy
                values, keywords = plain(values), plain(keywords)
            value = self.run_primitive(fn, values, keywords)
        except YotaError:
            raise
        except Exception as error:
            _add_note(error, self.loc)
            raise
        result = self.recorder.record(fn, args, kwargs, value, self.loc)
        guard_shapes = result.op.depends and has_traced((args, kwargs)) \
            and _shape_may_follow_data(fn, args, kwargs)
        text = f"{primitives.display_name(fn)}(...)"
        if isinstance(value, (tuple, list)) and fn is not operator.getitem:
            # several results (np.linalg.qr, np.nonzero, np.split): the code sees
            # each one, as it sees the items of any tuple a call returns; how many
            # a list holds (`s.split(",")`) can follow the data
            if result.op.depends and (isinstance(value, list) or guard_shapes):
                self.decisions.concretize(result, len, None, None, text=text)
            items = [self.primitive(operator.getitem, (result, i), {}) for i in range(len(value))]
            for i, item in enumerate(items):
                if guard_shapes and isinstance(item, Traced):
                    self.decisions.concretize(item, np.shape, None, None, text=f"{text}[{i}]")
            if hasattr(value, "_fields"):
                return type(value)._make(items)
            return items if isinstance(value, list) else tuple(items)
        if guard_shapes:
            self.decisions.concretize(result, np.shape, None, None, text=text)
            counts = mask_counts(result.op)
            if counts:  # a count read at run time: the guard stays only where it is pinned
                self.recorder.ops[-1].sizes = counts
        return result

    def run_primitive(self, fn, args: tuple, kwargs: dict):
        """Call `fn` on example values with every array argument read-only, so a
        function that writes into an argument (np.random.shuffle, np.copyto,
        np.fill_diagonal, any other) is refused instead of changing a value
        behind the tape's back and being dropped from the generated code."""
        containers = [(c, contents(c)) for c in (*args, *kwargs.values())
                      if contents(c) is not None]
        with primitives.arguments_read_only((args, kwargs)) as protected:
            try:
                result = fn(*args, **kwargs)
                if all(unchanged(c, before) for c, before in containers):
                    return result  # (random.shuffle(items) reorders a list in place)
            except ValueError as error:
                if not (protected and "read-only" in str(error)):
                    raise
        name = primitives.display_name(fn)
        raise MutationError(
            f"{name} writes into its argument", self.loc,
            hint="Generated code is functional: call a function that returns a new array "
                 "instead (e.g. `y = x[np.random.permutation(len(x))]` rather than shuffling x, "
                 "`np.where(mask, v, x)` rather than np.putmask or np.place).")

    def refuse_callbacks(self, fn, args: tuple, kwargs: dict) -> None:
        """A primitive that would call a function of the user's (np.piecewise's
        functions, np.vectorize, np.apply_along_axis) runs it natively, where
        its operations are not recorded: refused, rather than frozen."""
        for value in (fn, *_nested((args, kwargs))):
            if isinstance(value, (Traced, np.ndarray, int, float, str)) or value is None:
                continue
            callee = getattr(value, "pyfunc", value if value is not fn else None)  # np.vectorize
            if isinstance(callee, (UserFunction, ArrayMethod)) or (
                    isinstance(callee, types.FunctionType) and user_kernel(callee)):
                name = getattr(callee, "__name__", "a function")
                reason = registry.refusal_for(fn)
                if reason is not None and has_traced((args, kwargs)):  # odeint(f, y0, t)
                    raise NoDiffRuleError(
                        f"no gradient through {primitives.display_name(fn)}: {reason}",
                        self.loc, hint=f"{primitives.display_name(fn)} would call {name}() "
                                       "natively, where yota-src cannot follow it.")
                raise UnsupportedSyntaxError(
                    f"{primitives.display_name(fn)} would call {name}() natively, where "
                    "yota-src cannot follow what it computes", self.loc,
                    hint="Apply the function in your own code instead (a loop or a "
                         "comprehension; np.where in place of np.piecewise), so that what "
                         "it computes is recorded.")

    def recompute(self, fn, args: tuple, kwargs: dict) -> Traced:
        """The same primitive on the current values of its arguments: a view
        made again after the array it looks into was written."""
        value = self.run_primitive(fn, plain(values_of(args)), plain(values_of(kwargs)))
        return self.recorder.record(fn, args, kwargs, value, self.loc, note_views=False)


_REWRITES = {
    gast.Yield: "`yield` outside a generator function called by the unrolled code (a "
                "lambda?): build and return a list instead.",
    gast.YieldFrom: "`yield from` outside a generator function called by the unrolled "
                    "code: build and return a list instead.",
    gast.Match: "Write it as if/elif over the cases.",
    gast.Await: "Differentiate a plain (synchronous) function.",
    gast.ClassDef: "Define the class at module level.",
}


def _keyword(stmt) -> str:
    return {"AsyncFunctionDef": "async def", "AsyncFor": "async for", "AsyncWith": "async with",
            "ClassDef": "class", "Global": "global", "Nonlocal": "nonlocal", "With": "with",
            "Try": "try", "TryStar": "try/except*", "Match": "match"}.get(
        type(stmt).__name__, type(stmt).__name__)


def _numpy_function(fn) -> bool:
    """A function of NumPy's own (np.sqrt, np.float64), not of SciPy or math."""
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy" \
        or isinstance(fn, np.ufunc)


def _nested(structure):
    """Every value inside nested tuples, lists, dicts and slices."""
    return nested.leaves(structure, lambda value: not isinstance(
        value, (tuple, list, dict, slice)))


def _shape_may_follow_data(fn, args, kwargs) -> bool:
    """Can the result's shape change with the values (not just the shapes) of
    the inputs? For np.unique and its kind; for any primitive given a traced
    integer or boolean number (a count, a length, an axis: np.full(n[0], v),
    np.reshape(x, (n[0], -1))); and for those reading an integer array as
    counts or a shape (np.repeat(x, counts)). Not where such values are
    indices or elementwise operands, whose shapes alone decide."""
    if fn in DATA_SHAPED or (fn is np.where and len(args) + len(kwargs) == 1):
        return True
    if isinstance(fn, Loop):  # its values are as the body makes them, whatever its count
        return False
    if isinstance(fn, np.ufunc) or fn in operators.SYMBOLS \
            or fn in SHAPED_BY_INDEX_SHAPES:
        return False
    counts = (args[1:], kwargs) if fn in _ARRAY_FIRST else (args, kwargs)
    return any(t.op.depends and t.op.dtype is not None and not t.op.differentiable
               and (t.op.shape == () or fn in READS_COUNTS) for t in traced_in(counts))


def _add_note(error: Exception, loc: Location | None) -> None:
    if loc is not None and hasattr(error, "add_note"):
        error.add_note(f"while unrolling {place(loc.filename, loc.lineno, full=True)}: "
                       f"{loc.line.strip()}")
