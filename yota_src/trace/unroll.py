"""The staged interpreter: a function's gast tree + concrete arguments -> Tape.

Every value is either *static* (ints, strings, shapes, modules, functions,
containers: plain Python objects, evaluated now and folded) or *traced* (a
`Traced`: an op of the tape together with its concrete example value). Loops
run, branches are decided, user functions are inlined and primitives are
recorded. A decision that depends on traced data is recorded as a Guard, so
the straight-line code refuses inputs that would have gone another way.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import functools
import inspect
import itertools
import math
import operator
import random
import sys
import types
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import replace

import gast
import numpy as np

from yota_src.core import distributions, nested, operators, primitives, registry
from yota_src.core.compiled_text import GENERATED
from yota_src.core.values import ATTR, ITEM, children, is_array, kind_of
from yota_src.errors import (
    Location,
    LoopEntry,
    MutationError,
    NoDiffRuleError,
    SourceUnavailableError,
    UnsupportedSyntaxError,
    YotaError,
)
from yota_src.ir import contexts
from yota_src.ir.loops import Loop
from yota_src.ir.specialisation import MISSING, dependency, describe, is_plain_data, snapshot
from yota_src.ir.tape import Call, Const, Input, Op
from yota_src.trace import array_library, counts
from yota_src.trace import rolling as trace_roll
from yota_src.trace.builtin_calls import builtin_handler, routed
from yota_src.trace.generators import UnrolledGenerator, is_generator_function
from yota_src.trace.recorder import NotCarried, Recorder
from yota_src.trace.source import FunctionSource, closure_cells, function_source, unwrap
from yota_src.trace.traced import Traced, has_traced, traced_in, values_of
from yota_src.trace.views import Views

BINARY = operators.by_node(gast, "binary")
UNARY = operators.by_node(gast, "unary")
COMPARE = operators.by_node(gast, "compare")

_COUNTS = (counts.TripCount, counts.Counter)
# builtins that change no state when called (next(it) advances an iterator)
_PURE_BUILTINS = {len, range, float, int, abs, min, max, sum, isinstance, issubclass, zip,
                  enumerate, round, bool, type, tuple, list, dict, set, frozenset, sorted,
                  reversed, any, all, str, repr, format, hasattr, getattr, divmod, pow, map,
                  filter, iter, hash, id, callable, complex, slice, ord, chr}

# Functions from these packages are primitives (recorded), never inlined.
# Libraries whose functions are run, not unrolled (logging and warnings: their
# internals are locks and handlers; what they show is recorded as output).
OPAQUE_PACKAGES = {"numpy", "cupy", "scipy", "math", "builtins", "operator", "functools",
                   "itertools", "jax", "torch", "logging", "warnings"}
KNOWN_CONTEXTS = (np.errstate, contextlib.nullcontext, warnings.catch_warnings)
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
# `ufunc.at` that is an accumulation, recorded functionally as index_add: the
# sign the values are added with.
ACCUMULATING_AT = {np.add: 1, np.subtract: -1}
IN_PLACE_METHODS = {"sort", "fill", "put", "itemset", "resize", "partition", "setfield"}
CONTAINER_CHANGES = {"append", "extend", "insert", "pop", "remove", "clear", "update",
                     "setdefault", "popitem", "add", "discard", "sort", "reverse",
                     "difference_update", "intersection_update", "symmetric_difference_update"}
SEQUENCES = (list, tuple, str, range)  # indexed by position: a traced index is an int
CACHES = tuple(t for t in (getattr(functools, "_lru_cache_wrapper", None),) if t)
STANDARD_LIBRARY = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__main__"}
NATIVE_PACKAGES = OPAQUE_PACKAGES | STANDARD_LIBRARY  # their code runs natively, not unrolled
MAX_DEPTH = 60
MAX_LOOP = 1_000_000


# --- control flow signals ---------------------------------------------------

class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# --- scopes -----------------------------------------------------------------

class Frame:
    """One function activation: locals, enclosing frames, closure cells, globals."""

    __slots__ = ("source", "locals", "parent", "cells", "globals", "declared")

    def __init__(self, source: FunctionSource, locals_: dict, parent, cells: dict, globals_):
        self.source = source
        self.locals = locals_
        self.parent = parent
        self.cells = cells  # free variable name -> cell, for functions defined outside
        self.globals = globals_
        self.declared: set = set()  # names in a `global` statement

    def resolve(self, name: str) -> tuple:
        """(value, where it came from): None for a local of the unrolled code,
        else the cell, GLOBAL or BUILTIN: a read from outside the arguments."""
        frame = self if name not in self.declared else None
        while frame is not None:
            if name in frame.locals:
                return frame.locals[name], None
            cell = frame.cells.get(name)
            if cell is not None:
                try:
                    return cell.cell_contents, cell
                except ValueError:
                    raise NameError(f"free variable {name!r} referenced before assignment "
                                    "in enclosing scope") from None
            frame = frame.parent
        if name in self.globals:
            return self.globals[name], GLOBAL
        if hasattr(builtins, name):
            return getattr(builtins, name), BUILTIN
        raise NameError(f"name {name!r} is not defined")

    def child(self) -> Frame:
        """A scope for a comprehension: reads fall through to this frame."""
        return Frame(self.source, {}, self, {}, self.globals)


GLOBAL, BUILTIN = "global", "builtin"


class UserFunction:
    """A `def` or `lambda` met while unrolling; calling it inlines its body."""

    def __init__(self, unroller, source: FunctionSource, frame: Frame, signature, name):
        self.unroller = unroller
        self.source = source
        self.frame = frame
        self.signature = signature
        self.__name__ = name

    def __call__(self, *args, **kwargs):  # from native callers such as map()
        return self.unroller.inline(self.source, self.signature, args, kwargs,
                                    self.frame, {}, self.frame.globals)


class ArrayMethod:
    """`x.sum` for a traced `x`: calling it records the matching NumPy function."""

    def __init__(self, target: Traced, name: str):
        self.target = target
        self.name = name

    def __call__(self, *args, **kwargs):  # from native callers such as map()
        unroller = self.target.unroller
        return unroller.array_method(self, args, kwargs, *(unroller.native or (None, None)))


ARRAY_METHODS = {
    name: getattr(np, name) for name in (
        "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "cumsum",
        "cumprod", "clip", "dot", "ravel", "squeeze", "swapaxes", "repeat", "take", "round",
        "trace", "diagonal", "all", "any", "argsort", "conj", "copy", "nonzero")
}
ARRAY_METHODS["flatten"] = np.ravel


def inlinable(fn) -> bool:
    """A Python function of the user's (or a template helper): its source is unrolled."""
    fn = unwrap(fn)
    if not isinstance(fn, types.FunctionType) or fn.__code__.co_filename.startswith("<frozen"):
        return False  # a frozen module's (os.environ's methods) has no source: run natively
    module = _module_of(fn)
    if module.split(".")[0] == "yota_src":  # its own code runs natively, but for templates
        return module.startswith("yota_src.templates")
    # the standard library runs natively too: its arithmetic and decisions on traced
    # values go through their protocols (traced.py), its errors name the user's line
    return module.split(".")[0] not in NATIVE_PACKAGES


_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_OPERATOR_NAMES = {"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow",
                   "lshift", "rshift", "and", "or", "xor"}


def _holds_traced(value, seen=None) -> bool:
    """Is a traced value inside `value`, also inside objects of the user's
    classes (whose operators then need unrolling, not a native run)?"""
    if isinstance(value, Traced):
        return True
    seen = set() if seen is None else seen
    if id(value) in seen or kind_of(value) != "struct":
        return False
    seen.add(id(value))
    return any(_holds_traced(child, seen) for _, child in children(value))


def _special(cls: type, name: str):
    """A special method as Python finds it: in the class's own MRO, never
    through a metaclass's `__getattr__`."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _user_instance(value) -> bool:
    """An object of a class the user's code defined (a subclass of float or
    of a namedtuple too), whose special methods are its own."""
    if isinstance(value, (Traced, type, types.ModuleType)):
        return False
    package = _module_of(type(value)).split(".")[0]
    return bool(package) and package not in NATIVE_PACKAGES


def _defers(left, right) -> bool:
    """Does `left`'s own operator give way to `right`'s reflected one? A
    Python number's does; NumPy's only to a class that opts out of NumPy's
    operators (`__array_ufunc__ = None`) or outranks it (`__array_priority__`)."""
    value = left.value if isinstance(left, Traced) else left
    if isinstance(value, (bool, int, float, complex)):
        return True
    if getattr(type(right), "__array_ufunc__", False) is None:
        return True
    return getattr(right, "__array_priority__", -np.inf) > getattr(value, "__array_priority__",
                                                                   0.0)


def _watched(value) -> bool:
    """Objects from outside whose parts the trace may read: user modules,
    classes, instances and containers. Library modules, functions and plain
    numbers are taken whole (their snapshot says all there is)."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] not in OPAQUE_PACKAGES
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic,
                                           types.FunctionType, types.BuiltinFunctionType,
                                           types.MethodType, functools.partial)):
        return False
    owner = value if isinstance(value, type) else type(value)
    if owner in (list, dict, tuple, set, frozenset, bytearray, types.MappingProxyType):
        return True
    return _module_of(owner).split(".")[0] not in OPAQUE_PACKAGES


_GENERATOR_FUNCTIONS: dict[int, tuple] = {}


def _yields(node) -> bool:
    """Is this parsed function a generator function (cached per node)?"""
    known = _GENERATOR_FUNCTIONS.get(id(node))
    if known is None or known[0] is not node:
        known = _GENERATOR_FUNCTIONS[id(node)] = (node, is_generator_function(node))
    return known[1]


def _module_of(value) -> str:
    """`value.__module__` where it is a name (on some C types, before Python
    3.11, it is the descriptor of their instances' attribute)."""
    module = getattr(value, "__module__", None)
    return module if isinstance(module, str) else ""


def _own_api(fn) -> bool:
    """ys.grad, ys.simplegrad, a GradFunction, ... (not a template helper)."""
    if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields"):
        return False  # a namedtuple class made while unrolling takes our module's name
    module = _module_of(fn) if isinstance(fn, (types.FunctionType, type)) \
        else _module_of(type(fn))
    return (module or "").startswith("yota_src.") \
        and not module.startswith("yota_src.templates")


def _outside_by_nature(value) -> bool:
    """The user's classes, functions and modules: made before any call (the
    unrolled code makes UserFunction objects, never these), so what is read
    from them is outside state, and writing to them is refused."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] not in OPAQUE_PACKAGES
    if isinstance(value, (type, types.FunctionType)):
        return _module_of(value).split(".")[0] not in OPAQUE_PACKAGES
    return False


def _user_kernel(fn) -> bool:
    """A user's function called from a user's rule (conv_grad_data): recorded as
    a call, as the rule says, rather than unrolled."""
    module = _module_of(unwrap(fn))
    return inlinable(fn) and not module.startswith("yota_src")


_signatures: dict = {}


def _signature(fn) -> inspect.Signature:
    """fn's own signature (not its __wrapped__'s), remade when its defaults
    are rebound."""
    defaults, kwdefaults = getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)
    cached = _signatures.get(fn)
    if cached is None or cached[0] is not defaults or cached[1] is not kwdefaults:
        cached = _signatures[fn] = (defaults, kwdefaults,
                                    inspect.signature(fn, follow_wrapped=False))
    return cached[2]


# --- the interpreter ----------------------------------------------------------

class Unroller(Recorder):
    """Runs user code on concrete values (the AST semantics and Python's
    object model), recording traced operations through its Recorder."""

    # `ys.grad(inner, w)` called in the traced code: the API, a later stage,
    # installs how its own functions are traced (api/nested_derivatives.py)
    nested_derivative: Callable | None = None

    def __init__(self, templates: bool = False):
        """`templates`: this unroller runs adjoint templates only (the reverse
        pass's driver), not user code: it keeps no values (they travel with
        the Traced values), and a template's helpers are not specialisation."""
        super().__init__(keep_values=not templates)
        # where the interpreter is: the statement (or native call) whose ops are
        # being recorded, handed to the recorder with each of them, and the
        # loops it is in ((entry, iteration) each, in Location.loops)
        self.loc: Location | None = None
        self.loops: tuple = ()
        self.loop_entries = itertools.count()
        self.index_nodes: set[int] = set()  # where a counter only indexes (counts.py)
        self.lengths: dict[Op, tuple[int, counts.Use]] = {}  # an array argument's rows (counts.py)
        self.python_index = False  # evaluating the index of a Python container
        # calls whose effects the ops may not show: helpers inlined, code run natively
        # (counts.LoopState)
        self.opaque_calls = 0
        self.roll = True  # loops may roll while traced (trace_roll.py)
        self.roll_attempts: dict = {}  # loop entry -> the iteration to try rolling it again
        self.dependencies: dict = {}  # what the trace read from outside the arguments
        self.watched: dict[int, object] = {}  # objects from outside, by id: attribute reads count
        self.held: dict[int, object] = {}  # objects the arguments hold, by id: never written
        self.outside: dict[int, object] = {}  # every object read from outside, by id: never written
        self.outside_names: dict[int, str] = {}  # the names outside containers were read by
        # outside objects, by id -> (module name, path): how an import reaches them again
        self.outside_paths: dict[int, tuple] = {}
        self.random_states: dict = {}  # generators drawn from: (generator, state before)
        self.views = Views(self)  # which arrays look into which (slices, transposes, ...)
        self.native: tuple | None = None  # (node, frame) of the call running natively
        self.context: tuple = ()  # the np.errstate, warnings and try blocks around us
        self.generator: UnrolledGenerator | None = None  # whose body runs now, if any
        self.generators: list[UnrolledGenerator] = []  # started while unrolling
        self.user_code = not templates
        self.depth = 0
        self.returned_at: Location | None = None  # the top-level `return` that ran
        self._stmt_handlers = {}
        self._expr_handlers = {}

    # -- entry points ---------------------------------------------------------

    def call_function(self, fn, args: tuple, kwargs: dict):
        """Inline a top-level Python function on (partly traced) arguments."""
        return self.inline_function(fn, args, kwargs, None, None)

    def run_template(self, template, dy, y, args: tuple, kwargs: dict, wants,
                     loc: Location | None) -> list[tuple]:
        """Run an adjoint template; return (parameter, input value, gradient) triples.

        `wants(param, value)` says which inputs need a gradient. Top-level
        assignments of the other `d<param>` are skipped, so a rule never
        records what nobody asked for.
        """
        source = function_source(template)
        signature = _signature(template)
        first, second, *rest = signature.parameters.values()
        bound = signature.replace(parameters=rest).bind(*args, **kwargs)
        bound.apply_defaults()
        needed = [name for name, value in bound.arguments.items() if wants(name, value)]
        if not needed:
            return []
        frame = Frame(source, {first.name: dy, second.name: y, **bound.arguments},
                      None, closure_cells(template), template.__globals__)
        skipped = {f"d{p.name}" for p in rest} - {f"d{name}" for name in needed} \
            - _names_read(source.node)  # `da = f(db)` needs db even where b needs none
        loc = contexts.gradient_location(loc)  # under the primal's error handling
        assert not self.user_code, "templates run on an Unroller(templates=True)"
        saved = self.loc, self.native
        self.loc, self.native = loc, None
        try:
            with contexts.applied(loc.context if loc else ()):
                for stmt in source.node.body:
                    if not (isinstance(stmt, gast.Assign) and _assigned_names(stmt) <= skipped):
                        self.exec(stmt, frame)
        finally:
            self.loc, self.native = saved
        return [(name, bound.arguments[name], frame.locals.get(f"d{name}")) for name in needed]

    # -- reads from outside the arguments ---------------------------------------

    def read_outside(self, name: str, value, origin, frame):
        """A global, builtin or closure variable: recorded as a dependency of
        the specialisation, and arrays read live."""
        if origin is GLOBAL or origin is BUILTIN:
            namespace = frame.globals
            module = namespace.get("__name__", "?")
            self.depend(("global", id(namespace), name), f"global {name} of {module}",
                        lambda: namespace.get(name, MISSING),
                        value if origin is GLOBAL else MISSING, namespace, name,
                        listed=module.split(".")[0] != GENERATED)  # api/nested_derivatives.py
            path = (module, ((ATTR, name),)) if origin is GLOBAL else None
            return self.outside_value(value, name, path)
        cell = origin
        self.depend(("cell", id(cell)), f"closure variable {name} of "
                    f"{getattr(frame.source.node, 'name', 'a lambda')}()",
                    lambda: cell.cell_contents, value)
        return self.outside_value(value, name)

    def outside_write(self, node, frame) -> MutationError:
        return MutationError(
            "in-place change of a value defined outside the function (a global, a closure "
            "variable, a default or an object reached from one)", self.location_of(node, frame),
            hint="The generated code would not repeat the change: build a new value and "
                 "return it, or copy it into a local first.")

    def refuse_write(self, obj, node, frame) -> None:
        """Changing an object from outside, or one an argument holds, would be
        an effect the generated code does not repeat (the caller's model keeps
        its old attributes, a history list its old length): refused."""
        if id(obj) in self.held:
            raise MutationError(
                "in-place change of an argument (an attribute, item or element of an object "
                "passed in)", self.location_of(node, frame),
                hint="The generated code would not repeat the change: return the new value "
                     "(e.g. as an auxiliary output) and update the object outside the "
                     "differentiated function.")
        if id(obj) in self.watched or id(obj) in self.outside or _outside_by_nature(obj):
            raise self.outside_write(node, frame)

    def hold(self, structure) -> None:
        """Remember the containers and objects an argument holds (the mirrors
        made for it, and its parts passed as they are): writes to them are
        refused, and reads of objects that are not mirrored field by field
        (a SimpleNamespace, a deque, an enum) are dependencies, like reads of
        outside objects."""
        if structure is None or isinstance(structure, (Traced, str, bytes, int, float, complex,
                                                       np.generic)) or is_array(structure) \
                or id(structure) in self.held or _outside_by_nature(structure):
            return
        self.held[id(structure)] = structure
        if kind_of(structure) == "struct":
            for _, child in children(structure):
                self.hold(child)
        elif _watched(structure):
            self.watched[id(structure)] = structure

    def depend(self, key, what: str, read, value, module=None, name=None,
               listed: bool = True) -> None:
        if key not in self.dependencies:
            self.dependencies[key] = dependency(what, read, value, listed, module, name)

    def outside_value(self, value, name: str | None, path: tuple | None = None):
        """Objects are watched (their attribute reads become dependencies);
        arrays and random generators become live constants on the tape. `path`
        is how an import reaches the value (see `child_path`), where one does."""
        if is_array(value) or isinstance(value, primitives.GENERATORS):
            return self.lift(value, name, self.loc, path)
        if not isinstance(value, (bool, int, float, complex, str, bytes, np.generic,
                                  type(None))):
            self.outside[id(value)] = value  # never changed by the trace (`next(counter)`)
            if path is not None:
                self.outside_paths.setdefault(id(value), path)
        if isinstance(value, types.MethodType):  # what the method reads of its object counts
            self.outside_value(value.__self__, name)
        elif _watched(value):
            self.watched[id(value)] = value
            if name and id(value) not in self.outside_names:
                self.outside_names[id(value)] = name
        return value

    def child_path(self, parent, step: tuple) -> tuple | None:
        """How an import reaches `parent`'s attribute or item `step` ((ATTR,
        name) or (ITEM, key)), where it reaches `parent`: a saved module reads
        a large outside array through it rather than holding a copy."""
        if isinstance(parent, types.ModuleType):
            return parent.__name__, (step,)
        known = self.outside_paths.get(id(parent))
        return None if known is None else (known[0], known[1] + (step,))

    # -- recording --------------------------------------------------------------

    def recompute(self, fn, args: tuple, kwargs: dict) -> Traced:
        """The same primitive on the current values of its arguments: a view
        made again after the array it looks into was written."""
        value = self.run_primitive(fn, values_of(args), values_of(kwargs))
        return self.record(fn, args, kwargs, value, self.loc, note_views=False)

    def mutate(self, target: Traced, new: Traced, node, frame, written=None) -> None:
        """Apply an in-place change: every alias of `target` now holds `new`.

        The tape stays functional; Python aliasing is honoured by updating the
        one `Traced` all names share. A view is written through into the array
        it looks into, and the views into a written array follow it (views.py).
        Arguments and arrays from outside are refused: the change would escape
        where the tape cannot follow. `written` is the old memory that changed
        (None: all of it)."""
        where = self.location_of(node, frame)
        if self.views.record_of(target) is not None:
            new = self.cast_for(target, new, where)
            root, changed = self.views.write_through(target, new, where)
            self.mutate(root, changed, node, frame)
            return
        if isinstance(target.op, Const):
            raise self.outside_write(node, frame)
        if isinstance(target.op, Input):
            raise MutationError(
                "in-place change of an argument", where,
                hint="The caller would see the change, which generated code does not "
                     "reproduce: copy first (`x = x.copy()`) or build a new array.")
        new = self.cast_for(target, new, where)
        old = target.value
        target.op, target.value = new.op, new.value
        self.views.refresh(target, old if written is None else written)

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
        return self.primitive(primitives.astype, (new, target.value.dtype), {})

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
        if kwargs.get("out") is not None:
            return self.into(fn, args, kwargs)
        if isinstance(fn, np.ufunc) and kwargs.get("where", True) is not True:
            raise UnsupportedSyntaxError(
                f"{primitives.display_name(fn)}(..., where=...) without out=", self.loc,
                hint="NumPy leaves the elements where the mask is False uninitialised: "
                     "use np.where(mask, f(x), other), or pass out= an array to keep them.")
        if primitives.is_ufunc_at(fn):
            return self.ufunc_at(fn, args, kwargs)
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
            self.random_states.setdefault(id(draws), (draws, _random_state(draws)))
        elif not has_traced((args, kwargs)):
            value = self.run_primitive(fn, args, kwargs)
            if isinstance(value, np.ndarray) or isinstance(value, primitives.GENERATORS) \
                    or (self.user_code and isinstance(value, np.floating)
                        and _numpy_function(fn)):
                # how it is made: np.zeros(3), and np.sqrt(4) rather than a bare 2.0
                return self.record(fn, args, kwargs, value, self.loc)
            return value
        try:
            value = self.run_primitive(fn, values_of(args), values_of(kwargs))
        except YotaError:
            raise
        except Exception as error:
            _add_note(error, self.loc)
            raise
        result = self.record(fn, args, kwargs, value, self.loc)
        guard_shapes = result.op.depends and _shape_may_follow_data(fn, args, kwargs)
        text = f"{primitives.display_name(fn)}(...)"
        if isinstance(value, (tuple, list)) and fn is not operator.getitem:
            # several results (np.linalg.qr, np.nonzero, np.split): the code sees
            # each one, as it sees the items of any tuple a call returns; how many
            # a list holds (`s.split(",")`) can follow the data
            if result.op.depends and (isinstance(value, list) or guard_shapes):
                self.concretize(result, len, None, None, text=text)
            items = [self.primitive(operator.getitem, (result, i), {}) for i in range(len(value))]
            for i, item in enumerate(items):
                if guard_shapes and isinstance(item, Traced):
                    self.concretize(item, np.shape, None, None, text=f"{text}[{i}]")
            if hasattr(value, "_fields"):
                return type(value)._make(items)
            return items if isinstance(value, list) else tuple(items)
        if guard_shapes:
            self.concretize(result, np.shape, None, None, text=text)
        return result

    def into(self, fn, args: tuple, kwargs: dict):
        """`np.tanh(g, out=g)`: the result, written in place into a local
        array (every alias sees it), only where a ufunc's `where=` mask is
        True; an argument or an array from outside is refused when written,
        as any in-place change."""
        out = kwargs["out"]
        target = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if not isinstance(target, Traced) or not isinstance(target.value, np.ndarray):
            raise MutationError(f"{primitives.display_name(fn)} writes into an array the "
                                "function did not make (out=)", self.loc,
                                hint="Use the result instead: `y = np.add(x, z)`.")
        where = kwargs.get("where", True) if isinstance(fn, np.ufunc) else True
        rest = {k: v for k, v in kwargs.items() if k != "out" and (k != "where" or where is True)}
        if primitives.is_random_draw(fn):  # `rng.random(out=buf)` draws one per element
            rest.setdefault("size", target.value.shape)
            if target.value.dtype != np.float64:
                rest.setdefault("dtype", target.value.dtype)
        result = self.primitive(fn, args, rest)
        if where is not True:
            result = self.primitive(np.where, (where, result, target), {})
        self.mutate(target, self.primitive(np.broadcast_to, (result, target.value.shape), {})
                    if np.shape(result.value) != target.value.shape else result, None, None)
        return target if not isinstance(out, tuple) else (target,)

    def refuse_callbacks(self, fn, args: tuple, kwargs: dict) -> None:
        """A primitive that would call a function of the user's (np.piecewise's
        functions, np.vectorize, np.apply_along_axis) runs it natively, where
        its operations are not recorded: refused, rather than frozen."""
        for value in (fn, *_nested((args, kwargs))):
            if isinstance(value, (Traced, np.ndarray, int, float, str)) or value is None:
                continue
            callee = getattr(value, "pyfunc", value if value is not fn else None)  # np.vectorize
            if isinstance(callee, (UserFunction, ArrayMethod)) or (
                    isinstance(callee, types.FunctionType) and _user_kernel(callee)):
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

    def output(self, fn, args: tuple, kwargs: dict, node, frame) -> None:
        """print, warnings.warn, logging: recorded, not run. The generated code
        shows the output at every call, in order, with live values; tracing
        shows nothing (so the first call of ys.grad prints once, like f)."""
        if fn is print and kwargs.get("file") is not None:
            kwargs = {**kwargs, "file": self.stream(kwargs["file"], node, frame)}
        self.require_printable(fn, (args, kwargs), node, frame)
        depends = any(t.op.depends for t in traced_in((args, kwargs)))
        self.ops.append(Call(fn, self.refs(args, self.loc), self.refs(kwargs, self.loc), None, None,
                             self.location_of(node, frame), depends))

    def stream(self, file, node, frame) -> primitives.StandardStream:
        for name in ("stdout", "stderr"):
            if file is getattr(sys, name) or file is getattr(sys, f"__{name}__"):
                return primitives.StandardStream(name)
        raise UnsupportedSyntaxError(
            f"print(file=...) to a {type(file).__name__}", self.location_of(node, frame),
            hint="Generated code can print to sys.stdout and sys.stderr only: return what "
                 "you want to write, or write it outside the differentiated function.")

    def require_printable(self, fn, structure, node, frame) -> None:
        """What an output call shows must be spelled in the generated code:
        values, numbers, strings, arrays and containers of them."""
        if isinstance(structure, (Traced, np.ndarray, np.generic, str, bytes, int, float,
                                  complex, np.dtype, primitives.StandardStream)) \
                or structure is None:
            return
        if isinstance(structure, (tuple, list)) and not hasattr(structure, "_fields"):
            for item in structure:
                self.require_printable(fn, item, node, frame)
            return
        if type(structure) is dict:
            for item in (*structure.keys(), *structure.values()):
                self.require_printable(fn, item, node, frame)
            return
        if isinstance(structure, type) and issubclass(structure, Warning) \
                and getattr(builtins, structure.__name__, None) is structure:
            return
        raise UnsupportedSyntaxError(
            f"{primitives.display_name(fn)}() of a {type(structure).__name__} object",
            self.location_of(node, frame),
            hint="The generated code repeats output at every call and can show numbers, "
                 "strings, arrays and lists, tuples and dicts of them: show the fields "
                 "you want to see (e.g. print(model.W)) or an f-string.")

    def run_primitive(self, fn, args: tuple, kwargs: dict):
        """Call `fn` on example values with every array argument read-only, so a
        function that writes into an argument (np.random.shuffle, np.copyto,
        np.fill_diagonal, any other) is refused instead of changing a value
        behind the tape's back and being dropped from the generated code."""
        containers = [(c, _contents(c)) for c in (*args, *kwargs.values())
                      if _contents(c) is not None]
        with primitives.arguments_read_only((args, kwargs)) as protected:
            try:
                result = fn(*args, **kwargs)
                if all(_unchanged(c, before) for c, before in containers):
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

    def ufunc_at(self, fn, args: tuple, kwargs: dict) -> None:
        """`np.add.at(a, index, b)` (or np.subtract.at) changes the local array
        `a` in place: recorded as a functional index_add bound to every alias of
        `a`, as `a[index] += b` is. The other `ufunc.at` are refused."""
        name = primitives.display_name(fn)
        sign = ACCUMULATING_AT.get(fn.__self__)
        if sign is None or len(args) != 3 or kwargs:
            raise MutationError(
                f"{name} writes into its first argument", self.loc,
                hint="Only np.add.at(a, index, b) and np.subtract.at(a, index, b) are "
                     "rewritten as functional updates; compute the result as a new array "
                     "(e.g. with np.where, or np.add.at on a fresh array).")
        target, index, values = args
        if not isinstance(target, Traced):
            raise MutationError(f"{name} on an array the function did not create", self.loc,
                                hint="Copy it into a local array first (`y = y.copy()`).")
        if sign < 0:
            values = (self.primitive(operator.neg, (values,), {}) if isinstance(values, Traced)
                      else np.negative(values))
        new = self.primitive(primitives.index_add, (target, index, values), {})
        self.mutate(target, new, None, None)

    def concretize(self, value, convert, node, frame, text=None):
        """A static Python value from a possibly traced one, guarded if it came
        from the data (a branch test, an int loop count, a data-dependent shape).

        Without a node the decision was asked for by code running natively (a
        comparison inside sorted(), the hash of a dict key): the guard names
        the value and the call that made it."""
        if not isinstance(value, Traced):
            return convert(value)
        result = convert(value.value)
        if value.op.depends:
            within = None
            if node is None and text is None:
                node, frame = self.native or (None, None)
                text, within = self.expression_text(value.op), node and _text(node)
            if text is None and not self.user_code:  # a rule's decision: say what it read
                text = self.expression_text(value.op)
            self.guard(value.op, result, convert, text or _text(node),
                       self.location_of(node, frame), within)
        return result

    def where(self) -> Location | None:
        """The user's line that code running natively was called from."""
        return self.location_of(*(self.native or (None, None)))

    def decide(self, value: Traced, convert):
        """A decision taken by code running natively (`bool`, `hash`, `index`)."""
        return self.concretize(value, convert, None, None)

    def natively(self, node, frame, fn, *args, **kwargs):
        """Run `fn` (sorted, dict.__setitem__, a container search, ...) on values
        that may be traced: the decisions it takes are guarded and named after
        `node`."""
        saved, self.native = self.native, (node, frame)
        try:
            return fn(*args, **kwargs)
        finally:
            self.native = saved

    def contains(self, container, item, node, frame) -> bool:
        """`item in container` on values: a traced container records the test;
        a static one is searched natively, so each comparison (and hash) it
        makes of a traced item is a guarded decision."""
        if isinstance(container, Traced):
            found = self.primitive(operator.contains, (container, item), {})
            return self.concretize(found, bool, node, frame) if node is not None \
                else self.decide(found, bool)
        self.depend_on_contents(container)  # `"KEY" in os.environ`, `3 in QUEUE`
        return self.natively(node, frame, operator.contains, container, item)

    def identical(self, left, right, node, frame) -> bool:
        """`a is b` asks whether two names hold one object: for traced values,
        whether their example values are one object, as in Python (so
        `np.asarray(x) is x`). Two arguments, or an argument and an array from
        outside, may be one object at one call and not the next: that is guarded."""
        value = lambda v: v.value if isinstance(v, Traced) else v  # noqa: E731
        same = value(left) is value(right)
        if isinstance(left, Traced) and isinstance(right, Traced) and left.op is not right.op \
                and isinstance(left.op, (Input, Const)) and isinstance(right.op, (Input, Const)):
            self.concretize(self.primitive(operator.is_, (left, right), {}), bool, node, frame)
        return same

    def length(self, value: Traced) -> int:
        """len() of a traced value: static for arrays, data for text."""
        if isinstance(value.value, str):
            return self.decide(value, len)
        self.read_length(value)
        return len(value.value)

    def read_length(self, value) -> None:
        """The length of an array argument was read: a count the code takes
        from it is folded (counts.py)."""
        watch = self.lengths.get(value.op) if isinstance(value, Traced) else None
        if watch is not None:
            watch[1].used = True

    def expression_text(self, op: Op, depth: int = 0) -> str:
        """A short expression for a traced value, for guard messages: the user's
        name for it, or how it was computed from named values (`x[1] < x[0]`)."""
        if op.hint:
            return op.hint
        if isinstance(op, Input):
            return self.input_names.get(op, "an argument")
        if not isinstance(op, Call) or depth > 2:
            return "..."
        show = lambda a: self.expression_text(a, depth + 1) if isinstance(a, Op) \
            else _short_repr(a)  # noqa: E731
        fn, args = op.fn, op.args
        if fn is operator.getitem:
            return f"{show(args[0])}[{_index_text(args[1], show)}]"
        if fn is primitives.T:
            return f"{show(args[0])}.T"
        symbol = operators.SYMBOLS.get(fn)
        if symbol and len(args) == 2:
            return f"{show(args[0])} {symbol} {show(args[1])}"
        if symbol and len(args) == 1:
            return f"{symbol}{show(args[0])}"
        return f"{primitives.display_name(fn)}({', '.join(show(a) for a in args)})"

    def truth(self, value, node, frame) -> bool:
        """`if value:` — a user object holding traced values is asked through
        its `__bool__` (or `__len__`), unrolled; the answer is guarded."""
        if self.compares_itself(value):
            for dunder in ("__bool__", "__len__"):
                answer = self.operator_method(value, dunder)
                if answer is not NotImplemented:
                    return self.truth(answer, node, frame)
        return self.concretize(value, bool, node, frame)

    # -- calls ------------------------------------------------------------------

    def call(self, fn, args: tuple, kwargs: dict, node, frame):
        if array_library.is_device_function(fn):
            fn = array_library.host_function(fn, self.location_of(node, frame))
            if fn is array_library.host_array_module:
                return np
        if isinstance(fn, Traced):
            raise TypeError(f"'{type(fn.value).__name__}' object is not callable "
                            f"({self.location_of(node, frame).short})")
        if isinstance(fn, UserFunction):
            return self.inline(fn.source, fn.signature, args, kwargs, fn.frame, {},
                               fn.frame.globals)
        if isinstance(getattr(fn, "__self__", None), UnrolledGenerator):  # send, throw, close
            return fn(*args, **kwargs)  # as they are: an exception class is not a callback
        if isinstance(fn, ArrayMethod):
            return self.array_method(fn, args, kwargs, node, frame)
        if isinstance(fn, functools.partial):
            return self.call(fn.func, fn.args + args, {**fn.keywords, **kwargs}, node, frame)
        if isinstance(fn, (operator.itemgetter, operator.attrgetter)):
            return self.natively(node, frame, fn, *args)  # indexing, on traced values
        if isinstance(fn, CACHES) and has_traced((args, kwargs)):
            raise UnsupportedSyntaxError(
                f"the cached function {getattr(fn, '__name__', '?')}() called with values "
                "computed from the arguments", self.location_of(node, frame),
                hint="What a cache returns depends on the calls before, which the generated "
                     "code cannot know: call the function undecorated (fn.__wrapped__).")
        if primitives.is_output(fn):
            return self.output(fn, args, kwargs, node, frame)
        handler = builtin_handler(fn)
        if handler is not None:
            if fn not in _PURE_BUILTINS:  # next(it), setattr(...): state the ops do not show
                self.opaque_calls += 1
            return handler(self, args, kwargs, node, frame)
        if distributions.is_distribution(fn):  # norm(mu, sigma): its methods take them
            return distributions.freeze(fn, args, kwargs)
        if registry.is_primitive(fn) or primitives.is_random_draw(fn):
            return self.primitive(fn, args, kwargs)
        if not self.user_code and _user_kernel(fn):  # a user rule's kernel: called as it says
            try:
                return self.primitive(fn, args, kwargs)
            except NotCarried:  # make_vjp(y, x) gives a closure: unrolled, like user code
                return self.inline_function(fn, args, kwargs, node, frame)
        if _own_api(fn) and self.user_code and self.nested_derivative is not None:
            result = self.nested_derivative(fn, args, kwargs, node, frame)
            if result is not NotImplemented:
                return result
        if _own_api(fn):
            raise UnsupportedSyntaxError(
                f"{getattr(fn, '__name__', type(fn).__name__)}() of yota-src inside a "
                "differentiated function (a gradient of a gradient) is not supported yet",
                self.location_of(node, frame),
                hint="A saved gradient module is plain Python: import its grad_<name> and "
                     "call that instead, and it is differentiated like any code.")
        if inlinable(fn if not isinstance(fn, types.MethodType) else fn.__func__):
            return self.inline_function(fn, args, kwargs, node, frame)
        if isinstance(fn, type):
            self.opaque_calls += 1
            return self.construct(fn, args, kwargs, node, frame)
        method = self.python_method(fn, "__call__")
        if method is not None:  # a callable object of the user's: its __call__ is unrolled
            return self.inline_function(method, (fn,) + tuple(args), kwargs, node, frame)
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, str) and isinstance(fn, types.BuiltinMethodType):
            args = tuple(list(a) if isinstance(a, types.GeneratorType) else a for a in args)
            if has_traced((args, kwargs)):  # " ".join(f"{v}" for v in x): recorded text
                return self.primitive(getattr(str, fn.__name__), (owner, *args), kwargs)
            return fn(*args, **kwargs)
        if _computes_on_arrays(fn):
            return self.primitive(fn, args, kwargs)
        return self.native_call(fn, args, kwargs, node, frame)

    def native_call(self, fn, args: tuple, kwargs: dict, node, frame):
        """A function that only arranges values (a container's method, heapq,
        bisect, pickle, a library class's method): run natively on the traced
        values themselves, whose arithmetic is recorded and whose decisions are
        guarded (traced.py), so what it does to local containers happens as in
        a call. A container of the arguments or from outside that it changes
        is put back and refused: the generated code would not change it."""
        self.opaque_calls += 1  # `lst.pop()`: state a loop's ops do not show
        protected = [(c, _contents(c)) for c in (getattr(fn, "__self__", None), *args,
                                                 *kwargs.values())
                     if (id(c) in self.held or id(c) in self.outside or id(c) in self.watched)
                     and _contents(c) is not None]
        try:
            result = self.natively(node, frame, fn, *_routed_args(self, args, node, frame),
                                   **kwargs)
        except YotaError:
            raise
        except Exception as error:
            if not has_traced((args, kwargs)) or not _succeeds_on_values(fn, args, kwargs):
                raise  # an error of the code itself, which it would raise natively too
            raise UnsupportedSyntaxError(
                f"{_callee_name(fn)}() cannot take a value computed from the arguments "
                f"({error})", self.location_of(node, frame),
                hint="It needs a concrete number or text, which would freeze the value: "
                     "compute with NumPy or Python arithmetic in the differentiated "
                     "function, or move the call outside it.") from None
        finally:
            changed = [(c, before) for c, before in protected if not _unchanged(c, before)]
            for container, before in changed:
                _restore(container, before)
        if changed:
            self.refuse_write(changed[0][0], node, frame)
        self.depend_on_call(fn, args, kwargs, result)
        return result

    def depend_on_call(self, fn, args, kwargs, result) -> None:
        """A method of an outside object (os.environ.get, a logger's
        isEnabledFor) or a library function (os.getenv) called on static
        values reads state the trace cannot see: its result is a dependency,
        read again by calling it."""
        if not self.user_code or has_traced((args, kwargs)) or not is_plain_data(result):
            return
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType) \
                and id(owner) not in self.outside and id(owner) not in self.watched \
                and id(owner) not in self.held:
            return  # a method of a value made here: computed afresh at every trace
        try:
            key = ("call", id(fn) if owner is None else id(owner),
                   getattr(fn, "__name__", None), snapshot((args, kwargs)))
            hash(key)
        except TypeError:
            return
        self.depend(key, f"{primitives.display_name(fn)}(...)",
                    lambda: fn(*args, **kwargs), result)

    def inline_function(self, fn, args, kwargs, node, frame):
        self.opaque_calls += 1  # a helper may change state a loop's trace cannot see
        if isinstance(fn, types.MethodType):
            args, fn = (fn.__self__,) + tuple(args), fn.__func__
        fn = unwrap(fn)
        source = function_source(fn)
        if self.user_code:  # its code may be replaced, its defaults rebound
            self.depend(("code", id(fn)), f"the code of {fn.__qualname__}()",
                        lambda: fn.__code__, fn.__code__, listed=False)
            if fn.__defaults__ or fn.__kwdefaults__:
                self.depend(("defaults", id(fn)), f"defaults of {fn.__qualname__}()",
                            lambda: (fn.__defaults__, fn.__kwdefaults__),
                            (fn.__defaults__, fn.__kwdefaults__))
        return self.inline(source, _signature(fn), args, kwargs, None,
                           closure_cells(fn), fn.__globals__, node, frame)

    def inline(self, source, signature, args, kwargs, parent, closure, globals_,
               node=None, frame=None):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            where = self.location_of(node, frame).short if node else "the top level"
            raise TypeError(f"{error} (in a call at {where})") from None
        passed = set(bound.arguments)
        bound.apply_defaults()
        if self.user_code:  # a value passed in unnamed takes the name the callee gives it
            for name, value in bound.arguments.items():
                if name not in passed:  # a default: from outside the call
                    bound.arguments[name] = value = self.outside_value(value, name)
                elif is_array(value):  # an array of a static structure
                    bound.arguments[name] = value = self.lift(value, name, self.loc)
                self.name(value, name)
        local = Frame(source, dict(bound.arguments), parent, closure, globals_)
        if _yields(source.node):  # a generator function: its body runs as it is consumed
            return UnrolledGenerator(self, lambda: self.run_body(source, local))
        if self.depth >= MAX_DEPTH:
            raise UnsupportedSyntaxError(
                f"calls nest deeper than {MAX_DEPTH} levels while unrolling",
                self.location_of(node, frame) if node else None,
                hint="yota-src unrolls recursion completely, so it must reach a base case "
                     "decided by static values within that depth: write deeper recursion as "
                     "a loop.")
        saved, self.depth, self.native = (self.loc, self.native), self.depth + 1, None
        try:
            if isinstance(source.node, gast.Lambda):
                return self.eval(source.node.body, local)
            self.exec_block(source.node.body, local)
        except _Return as result:
            return result.value
        finally:
            (self.loc, self.native), self.depth = saved, self.depth - 1
        return None

    def run_body(self, source, frame) -> None:
        """A generator function's body, in its generator's thread."""
        self.depth += 1
        try:
            self.exec_block(source.node.body, frame)
        except _Return as returned:
            return returned.value
        return None

    def swap_position(self, state):
        """Where the interpreter is (line, call depth, running generator): given
        back, and replaced by `state` unless it is None (generators.py)."""
        position = (self.loc, self.native, self.depth, self.user_code, self.generator,
                    self.loops)
        if state is not None:
            (self.loc, self.native, self.depth, self.user_code, self.generator,
             self.loops) = state
        return position

    def close_generators(self) -> None:
        for generator in reversed(self.generators):
            generator.close()
        self.generators.clear()

    def construct(self, cls, args, kwargs, node, frame):
        """Instantiate a class: inline a Python `__init__`, else call it natively."""
        init = cls.__init__
        if cls.__new__ is object.__new__ and inlinable(init):
            try:
                source = function_source(init)
            except YotaError:  # generated __init__ (dataclasses): stores values as given
                return cls(*args, **kwargs)
            obj = object.__new__(cls)
            self.inline(source, _signature(init), (obj,) + tuple(args), kwargs, None,
                        closure_cells(init), init.__globals__, node, frame)
            return obj
        if has_traced((args, kwargs)) and cls.__module__.split(".")[0] in NUMERIC_PACKAGES \
                and cls.__module__ != "builtins":  # np.float32(x) is a primitive; zip(...) is not
            return self.primitive(cls, args, kwargs)
        if issubclass(cls, primitives.GENERATORS):  # np.random.RandomState(0): made by the code
            return self.primitive(cls, args, kwargs)
        if not has_traced((args, kwargs)):
            return cls(*args, **kwargs)
        return self.native_call(cls, args, kwargs, node, frame)  # Counter(labels), deque(xs)

    def array_method(self, method: ArrayMethod, args, kwargs, node, frame):
        x, name = method.target, method.name
        if name == "reshape":
            shape = args[0] if len(args) == 1 else tuple(args)
            return self.primitive(np.reshape, (x, shape), kwargs)
        if name == "transpose":
            axes = args[0] if len(args) == 1 else (tuple(args) or None)
            return self.primitive(np.transpose, (x,) if axes is None else (x, axes), kwargs)
        if isinstance(x.value, primitives.GENERATORS):  # rng.normal(size=3): a draw from it
            if name == "spawn":
                raise UnsupportedSyntaxError(
                    "rng.spawn() inside the differentiated function",
                    self.location_of(node, frame),
                    hint="Spawning moves the generator's seed sequence on, which cannot be "
                         "rewound, so the trace would leave it spawned twice: spawn the child "
                         "generators outside and pass them in.")
            return self.primitive(primitives.draw, (x, name, *args), kwargs)
        if name == "astype":
            plain = values_of((args, kwargs))
            if isinstance(x.value, np.ndarray) and \
                    primitives.astype(x.value, *plain[0], **plain[1]) is x.value:
                return x  # copy=False and nothing to cast: the very array, as in NumPy
            return self.primitive(primitives.astype, (x,) + tuple(args), kwargs)
        if name == "item":
            if kwargs or not all(type(arg) is int for arg in args):
                raise UnsupportedSyntaxError(
                    "x.item() with other than int positions", self.location_of(node, frame),
                    hint="Index the array (x[i, j]) and call .item() on the element.")
            if len(args) == 1 and np.ndim(x.value) != 1:  # a position in the flattened array
                x = self.primitive(np.ravel, (x,), {})
            if args:  # `x.item(i)`, as generated code reads elements (passes/scalars.py)
                x = self.primitive(operator.getitem, (x, args if len(args) > 1 else args[0]),
                                   {})
            return self.primitive(primitives.item, (x,), {})
        if name == "tolist":
            if np.issubdtype(x.op.dtype, np.inexact):  # each element keeps its gradient
                return self.scalars_of(x)
            receiver = node.func.value if isinstance(getattr(node, "func", None),
                                                     gast.Attribute) else None
            return self.concretize(x, primitives.tolist, receiver, frame)
        if name in ARRAY_METHODS:
            return self.primitive(ARRAY_METHODS[name], (x,) + tuple(args), kwargs)
        if name in IN_PLACE_METHODS:
            raise MutationError(f"x.{name}() changes the array in place",
                                self.location_of(node, frame),
                                hint=f"Use the function that returns a new array, "
                                     f"e.g. np.{name}(x).")
        raise UnsupportedSyntaxError(
            f"the array method .{name}() is not supported", self.location_of(node, frame),
            hint=f"Call the NumPy function instead, e.g. np.{name}(x, ...).")

    def scalars_of(self, x: Traced):
        """`x.tolist()` of a float array: nested lists of its elements, each a
        traced Python number."""
        if np.ndim(x.value) == 0:
            return self.primitive(primitives.item, (x,), {})
        return [self.scalars_of(self.primitive(operator.getitem, (x, i), {}))
                for i in range(len(x.value))]

    # -- attribute and item access ----------------------------------------------

    def attribute(self, obj, name: str, node, frame):
        """`obj.name`. What comes from outside the call is a dependency: any
        attribute of an outside object, and an attribute found on the class of
        any object (a method, a class constant), since the class is outside."""
        if isinstance(obj, Traced):
            return self.traced_attribute(obj, name, node, frame)
        frozen = distributions.mirror(obj)  # a global prior = norm(0, 1): prior.logpdf(x)
        if frozen is not None and callable(getattr(obj, name, None)):
            frozen.parameters = {key: self.lift(value, key, self.loc) if is_array(value) else value
                                 for key, value in frozen.parameters.items()}
            return getattr(frozen, name)  # its arrays read live, named after their parameter
        if isinstance(obj, super) and self.user_code:  # super().forward: a class's attribute
            mro = obj.__self_class__.__mro__
            following = mro[mro.index(obj.__thisclass__) + 1:]
            found = next((klass for klass in following if name in klass.__dict__), None)
            if found is not None:
                self.depend_on_class(found, name)
        owner = None
        if not isinstance(obj, (types.ModuleType, type, super)):
            owner = next((klass for klass in type(obj).__mro__ if name in klass.__dict__), None)
            found = owner.__dict__[name] if owner is not None else None
            if isinstance(found, property) and inlinable(found.fget):
                self.depend_on_class(owner, name)
                return self.inline_function(found.fget, (obj,), {}, node, frame)
            if name in (getattr(obj, "__dict__", None) or ()):
                owner = None  # the instance's own attribute
        value = getattr(obj, name)
        if not self.user_code:
            return value
        if name == "__dict__" and id(obj) in self.held:  # model.__dict__["k"] = v is a write
            self.held[id(value)] = value
        if owner is not None:
            self.depend_on_class(owner, name)
        if id(obj) not in self.watched and not _outside_by_nature(obj):
            return value
        if not isinstance(obj, (list, dict, tuple, set, frozenset)):  # their snapshot has all
            self.depend(("attr", id(obj), name), f"attribute {name} of {describe(obj)}",
                        lambda: getattr(obj, name), value,
                        obj if isinstance(obj, types.ModuleType) else None, name)
        return self.outside_value(value, self.part_name(obj, name) or name,
                                  self.child_path(obj, (ATTR, name)))

    def depend_on_absence(self, obj, name: str) -> None:
        """An attribute found missing on an outside object (getattr with a
        default, hasattr): setting it later must retrace."""
        if not self.user_code or isinstance(obj, Traced):
            return
        if id(obj) in self.watched or id(obj) in self.held or _outside_by_nature(obj):
            self.depend(("attr", id(obj), name), f"attribute {name} of {describe(obj)}",
                        lambda: getattr(obj, name, MISSING), MISSING)
        elif not isinstance(obj, (types.ModuleType, type)):  # missing on its class too
            for klass in type(obj).__mro__:
                if _outside_by_nature(klass) and klass.__module__ != "builtins":
                    self.depend(("attr", id(klass), name), f"attribute {name} of class "
                                f"{klass.__qualname__}", lambda klass=klass: klass.__dict__.get(
                                    name, MISSING), MISSING)

    def depend_on_class(self, klass: type, name: str) -> None:
        """A method, property or constant read from a class of the user's: the
        class may be changed (`Model.scale = 5.0`, a method rebound)."""
        if not _outside_by_nature(klass) or klass.__module__ == "builtins":
            return
        value = klass.__dict__[name]
        self.depend(("attr", id(klass), name), f"attribute {name} of class {klass.__qualname__}",
                    lambda: klass.__dict__.get(name, MISSING), value)

    def traced_attribute(self, x: Traced, name: str, node, frame):
        value = x.value
        if name in ("shape", "ndim", "size", "dtype"):
            if name in ("shape", "size"):
                self.read_length(x)
            return getattr(np.asarray(value), name) if name != "dtype" else np.result_type(value)
        if name == "T":
            return self.primitive(primitives.T, (x,), {})
        if name in ("real", "imag"):
            return self.primitive(getattr(np, name), (x,), {})
        if isinstance(value, tuple) and hasattr(value, "_fields") and name in value._fields:
            return self.primitive(operator.getitem, (x, value._fields.index(name)), {})
        if isinstance(value, str) and callable(getattr(str, name, None)):
            return functools.partial(getattr(str, name), x)  # `s.upper()` is str.upper(s)
        if callable(getattr(value, name, None)):
            return ArrayMethod(x, name)
        raise UnsupportedSyntaxError(f"the attribute .{name} of a traced value is not supported",
                                     self.location_of(node, frame))

    def subscript(self, obj, index, node, frame):
        if isinstance(obj, Traced):
            if isinstance(obj.value, (tuple, list)):
                index = self.concretize(index, operator.index, node, frame)
            result = self.primitive(operator.getitem, (obj, index), {})
            if _is_mask_index(index) and result.op.depends:
                self.concretize(result, np.shape, node, frame)  # the count is data
            return result
        method = self.python_method(obj, "__getitem__")
        if method is not None:  # a class of the user's: its __getitem__ is unrolled
            return self.inline_function(method, (obj, index), {}, node, frame)
        if has_traced(index):
            if is_array(obj):
                return self.primitive(operator.getitem, (obj, index), {})
            if not isinstance(obj, SEQUENCES):  # a dict looks the key's value up
                return self.part_of(obj, self.natively(node, frame, operator.getitem, obj,
                                                       index), None)
            index = self.concretize(index, operator.index, node, frame)
        return self.part_of(obj, obj[index], index)

    def python_method(self, obj, name: str):
        """`type(obj).name` where it is a Python function of the user's (a
        `__getitem__`, `__call__` or `__len__` to unroll), else None."""
        if isinstance(obj, (Traced, type, types.ModuleType, types.FunctionType)):
            return None
        owner = next((klass for klass in type(obj).__mro__ if name in klass.__dict__), None)
        method = owner.__dict__[name] if owner is not None else None
        if not isinstance(method, types.FunctionType) or not inlinable(method):
            return None
        if self.user_code:
            self.depend_on_class(owner, name)
        return method

    def iterate(self, value, node, frame) -> list:
        return list(self.items(value, node, frame))

    def items(self, value, node, frame, header: bool = False):
        """Iterate as Python does, one item at a time: a generator advances
        only as far as it is consumed (a `for` loop's body runs in between),
        and a traced array's row is read in the iteration that uses it
        (`header`: a loop whose count may be the array's length)."""
        if isinstance(value, Traced):
            if isinstance(value.value, (str, bytes)):  # its length is data
                count = self.concretize(value, len, node, frame)
            else:
                count = len(value.value) if isinstance(value.value, (tuple, list)) else (
                    np.shape(value.value)[0] if np.ndim(value.value) else None)
            if count is None:
                where = self.location_of(node, frame)
                raise TypeError("iteration over a 0-d value" + (f" at {where.short}" if where
                                                                  else ""))
            if not header:
                self.read_length(value)
            for i in range(count):
                yield self.subscript(value, i, node, frame)
            return
        self.depend_on_contents(value)
        if isinstance(value, dict):
            for key in value:
                yield self.part_of(value, key, None)
        else:
            for i, item in enumerate(value):
                yield self.part_of(value, item, i)

    def depend_on_contents(self, container) -> None:
        """Iterating (or taking the length of) an outside container that is not
        a plain list, dict or tuple (a deque, os.environ, an array.array): its
        contents are a dependency. Plain containers are snapshotted whole."""
        if self.user_code and id(container) in self.watched \
                and not isinstance(container, (list, dict, tuple, set, frozenset, str)):
            self.depend(("contents", id(container)), f"the contents of {describe(container)}",
                        lambda: list(container), list(container))

    def part_of(self, container, item, key):
        """An item of a static container: an array in it, or anything in a
        container from outside, is itself from outside (named after the
        container and the key: `LAYERS_0`)."""
        if not self.user_code or isinstance(item, Traced):
            return item
        if id(container) in self.watched and key is not None \
                and not isinstance(container, (list, dict, tuple, set, frozenset, str)):
            try:  # an item of an outside mapping or sequence whose snapshot is its identity
                self.depend(("item", id(container), key), f"item {key!r} of "
                            f"{describe(container)}", lambda: container[key], item)
            except TypeError:  # an unhashable key: the whole contents
                self.depend_on_contents(container)
        if is_array(item) or id(container) in self.watched:
            path = None if key is None else self.child_path(container, (ITEM, key))
            return self.outside_value(item, self.part_name(container, key), path)
        return item

    def part_name(self, container, key) -> str | None:
        base = self.outside_names.get(id(container))
        if base is None or not isinstance(key, (int, str)):
            return base
        return "".join(c if c.isalnum() or c == "_" else "_" for c in f"{base}_{key}")

    # -- names ------------------------------------------------------------------

    def bind(self, target, value, frame):
        """Assign to a target: names, unpacking, container items, attributes."""
        kind = type(target)
        if kind is gast.Name:
            self.scope_of(target.id, target, frame)[target.id] = value
            if self.user_code:
                self.name(value, target.id)
        elif kind in (gast.Tuple, gast.List):
            self.unpack(target.elts, value, target, frame)
        elif kind is gast.Subscript:
            container = self.eval(target.value, frame)
            self.store_item(container, self.eval(target.slice, frame), value, target, frame)
        elif kind is gast.Attribute:
            obj = self.eval(target.value, frame)
            if isinstance(obj, Traced):
                raise MutationError("assignment to an attribute of an array",
                                    self.location_of(target, frame))
            self.refuse_write(obj, target, frame)
            setattr(obj, frame.source.mangle(target.attr), value)
        else:
            raise self.unsupported(target, frame, "this assignment target")

    def scope_of(self, name: str, node, frame) -> dict:
        """The variables an assignment to `name` goes to: the frame's own, or
        for `nonlocal` the enclosing unrolled function's."""
        if name in frame.declared:
            raise self.outside_write(node, frame)  # `global name`
        if ("nonlocal", name) not in frame.declared:
            return frame.locals
        enclosing = frame.parent
        while enclosing is not None and name not in enclosing.locals:
            enclosing = enclosing.parent
        if enclosing is None:  # a cell of a function defined outside the unrolled code
            raise self.outside_write(node, frame)
        return enclosing.locals

    def store_item(self, container, index, value, target, frame) -> None:
        """`container[index] = value`, the container and index evaluated."""
        if isinstance(container, Traced):
            self.store(container, index, value, target, frame)
            if isinstance(target.value, gast.Name) and self.user_code:
                self.name(container, target.value.id)
            return
        if is_array(container):
            raise MutationError("in-place change of an array the function did not create",
                                self.location_of(target, frame),
                                hint="Copy it into a local array first.")
        self.refuse_write(container, target, frame)
        if isinstance(container, SEQUENCES) and isinstance(index, Traced):
            container[self.concretize(index, operator.index, target.slice, frame)] = value
        else:  # a dict stores under the key's value, a traced key kept as it is
            self.natively(target, frame, operator.setitem, container, index, value)

    def store(self, container: Traced, index, value, node, frame) -> None:
        """`container[index] = value` as a functional index_update."""
        if not primitives.is_basic_index(index):
            if any(t.op.depends for t in traced_in(index)):
                if not (_unique_whatever_the_data(index) or not has_traced(value)
                        and np.ndim(value) == 0):  # one value: which write is last cannot matter
                    self.guard_written_once(container, index, node, frame)
            else:
                shape = np.shape(container.value)
                selected = np.arange(np.prod(shape, dtype=int)).reshape(shape)[values_of(index)]
                if np.unique(selected).size != selected.size:  # an element written twice
                    raise MutationError("assignment with repeated indices",
                                        self.location_of(node, frame),
                                        hint="Only the last write would count; make the "
                                             "indices unique or accumulate with np.add.at.")
        written = _region(container.value, values_of(index))  # the old memory written
        new = self.primitive(primitives.index_update, (container, index, value), {})
        self.mutate(container, new, node, frame, written)

    def guard_written_once(self, container: Traced, index, node, frame) -> None:
        """Indices from the data that write each element once at the example:
        guarded so. Where data repeats one, NumPy leaves which write is last
        open, so the generated code raises ControlFlowChanged rather than
        guess; an example that repeats one is refused now, for the same reason."""
        shape = np.shape(container.value)
        positions = self.primitive(np.reshape, (self.primitive(
            np.arange, (math.prod(shape),), {}), shape), {})
        written = self.primitive(np.ravel, (self.primitive(
            operator.getitem, (positions, index), {}),), {})
        ordered = self.primitive(np.sort, (written,), {})
        repeats = self.primitive(np.any, (self.primitive(operator.eq, (
            self.primitive(operator.getitem, (ordered, slice(1, None)), {}),
            self.primitive(operator.getitem, (ordered, slice(None, -1)), {})), {}),), {})
        if self.concretize(repeats, bool, node, frame,
                           text=f"{_text(node)} = ... writes an element twice"):
            raise MutationError(
                "assignment of values through indices from the data that repeat an element",
                self.location_of(node, frame),
                hint="NumPy does not say which write is last: use a boolean mask "
                     "(x[mask] = v), np.where(mask, new, x), or accumulate with np.add.at.")

    @staticmethod
    def name(value, name: str) -> None:
        """Give a traced value the user's name, unless it has one already."""
        if isinstance(value, Traced) and isinstance(value.op, Call):
            value.op.last_name = name
            if value.op.hint is None:
                value.op.hint = name

    def unpack(self, targets, value, node, frame):
        items = self.iterate(value, node, frame)
        starred = [i for i, t in enumerate(targets) if isinstance(t, gast.Starred)]
        if starred:
            i = starred[0]
            after = len(targets) - i - 1
            if len(items) < len(targets) - 1:
                where = self.location_of(node, frame).short
                raise ValueError(f"not enough values to unpack at {where}")
            items = items[:i] + [items[i:len(items) - after]] + items[len(items) - after:]
            targets = targets[:i] + [targets[i].value] + targets[i + 1:]
        if len(items) != len(targets):
            raise ValueError(f"cannot unpack {len(items)} values into {len(targets)} names "
                             f"at {self.location_of(node, frame).short}")
        for target, item in zip(targets, items):
            self.bind(target, item, frame)

    # -- statements -------------------------------------------------------------

    def exec_block(self, body, frame):
        for stmt in body:
            self.exec(stmt, frame)

    def exec(self, stmt, frame):
        self.at(stmt, frame)
        handler = self._stmt_handlers.get(type(stmt))
        if handler is None:
            handler = getattr(self, f"exec_{type(stmt).__name__}", None)
            if handler is None:
                raise self.unsupported(stmt, frame, f"the `{_keyword(stmt)}` statement")
            self._stmt_handlers[type(stmt)] = handler
        try:
            handler(stmt, frame)
        except (_Return, _Break, _Continue):
            raise
        except (Exception, SystemExit) as error:  # the innermost user line, for messages
            if getattr(error, "yota_location", None) is None and self.user_code:
                error.yota_location = self.loc
            raise

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
            index = self.eval(target.slice, frame)
            current = self.subscript(container, index, target, frame)
        elif isinstance(target, gast.Attribute):
            owner = self.eval(target.value, frame)
            current = self.attribute(owner, frame.source.mangle(target.attr), target, frame)
        else:
            current = self.eval(target, frame)
        rhs = self.eval(stmt.value, frame)
        fn = BINARY[type(stmt.op)]
        if isinstance(current, (list, dict, set)):
            self.refuse_write(current, target, frame)
        if isinstance(current, (list, dict, set)) or _user_instance(current):
            fn = getattr(operator, f"i{fn.__name__.strip('_')}")  # `__iadd__` first, as Python
        new = self.binary(fn, current, rhs)
        element_of_array = isinstance(target, gast.Subscript) and isinstance(container, Traced)
        if isinstance(current, Traced) and isinstance(current.value, np.ndarray) \
                and not element_of_array:
            self.mutate(current, new, target, frame)
            if isinstance(target, gast.Name) and self.user_code:
                self.name(current, target.id)
            new = current  # the same object, stored back as Python does
        if isinstance(target, gast.Subscript):
            self.store_item(container, index, new, target, frame)
        elif isinstance(target, gast.Attribute):
            self.refuse_write(owner, target, frame)
            setattr(owner, frame.source.mangle(target.attr), new)
        else:
            self.bind(target, new, frame)

    def exec_Return(self, stmt, frame):
        value = None if stmt.value is None else self.eval(stmt.value, frame)
        if self.depth == 1 and self.user_code:  # the differentiated function's own return
            self.returned_at = self.location_of(stmt, frame)
        raise _Return(value)

    def exec_If(self, stmt, frame):
        taken = self.truth(self.eval(stmt.test, frame), stmt.test, frame)
        self.exec_block(stmt.body if taken else stmt.orelse, frame)

    def exec_For(self, stmt, frame):
        count = self.trip_count(stmt, frame)
        if count is not None and count.rows and isinstance(stmt.iter, gast.Name):
            iterable, use = self.eval(stmt.iter, frame), None  # for x in xs
            items = self.items(iterable, stmt.iter, frame, header=True)
        elif count is not None:
            iterable, use = range(count.value), count.counter
            items = iter(iterable)
        else:
            iterable = self.eval(stmt.iter, frame)
            # the counter of a range: rolled at trace time if it only indexes
            use = counts.Use() if isinstance(iterable, range) and iterable.step == 1 \
                and isinstance(stmt.target, gast.Name) else None
            items = self.items(iterable, stmt.iter, frame)
        first = iterable.start if isinstance(iterable, range) and iterable.step == 1 else None
        total = _length(iterable)
        if use is not None and isinstance(stmt.target, gast.Name):
            self.index_nodes |= counts.index_positions(stmt.body, stmt.target.id)
        starts = []  # where each iteration's ops begin
        with self.loop(stmt, frame, count, first) as (start, settle):
            for iteration in itertools.count():
                start(iteration)  # the next item (`xs[t]`, unpacking) is the `for` line's
                begin = len(self.ops)
                try:
                    item = next(items)
                except StopIteration:
                    break
                if use is not None:
                    item = counts.Counter(item, use)
                starts.append(begin)
                self.bind(stmt.target, item, frame)
                if self.iteration(stmt.body, frame):
                    return
                entry = settle()
                if total is not None and trace_roll.roll_rest(self, frame, entry, starts, total,
                                                              use):
                    self.bind_last(stmt.target, iterable, total, use, frame)
                    break
        self.at(stmt, frame)
        self.exec_block(stmt.orelse, frame)

    def bind_last(self, target, iterable, total: int, use, frame) -> None:
        """A loop rolled at trace time: its name holds the last item, as Python leaves it."""
        if not isinstance(target, gast.Name) or target.id not in frame.locals:
            return
        if isinstance(iterable, Traced):
            self.bind(target, self.subscript(iterable, total - 1, target, frame), frame)
        else:  # a range
            self.bind(target, counts.Counter(iterable[-1], use) if use is not None
                      else iterable[-1], frame)

    def exec_While(self, stmt, frame):
        with self.loop(stmt, frame) as (start, settle):
            for count in itertools.count():
                start(count)  # the test that starts iteration `count`
                if not self.truth(self.eval(stmt.test, frame), stmt.test, frame):
                    break
                if count >= MAX_LOOP:
                    raise UnsupportedSyntaxError(f"the loop ran more than {MAX_LOOP} times",
                                                 self.location_of(stmt, frame))
                if self.iteration(stmt.body, frame):
                    return
                settle()
        self.at(stmt, frame)
        self.exec_block(stmt.orelse, frame)

    def trip_count(self, stmt, frame) -> counts.LoopCount | None:
        """`for t in range(n):` over an int argument `n`, or a loop over the
        rows of an array argument: the loop's count, which may be read at run
        time if nothing else uses `n` or the array's length (counts.py)."""
        if not self.user_code:
            return None
        name = counts.range_of_count(stmt.iter)
        if name is not None:
            value = self.eval_Name(name, frame)  # read for the count: no other use of it
            if isinstance(value, counts.TripCount) and self.eval(stmt.iter.func, frame) is range:
                return counts.LoopCount.of(value)
        found = counts.rows_of_count(stmt.iter)
        if found is None:
            return None
        name, how, less = found
        value = self.eval_Name(name, frame)
        watch = self.lengths.get(value.op) if isinstance(value, Traced) else None
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
        header = frame.source.location(stmt) if self.user_code else None
        state = counts.LoopState(stmt.body)
        outer, entry = self.loops, LoopEntry(next(self.loop_entries), header, count,
                                             isinstance(stmt, gast.While), first, state)
        if count is not None:
            count.state = state
        calls = [self.opaque_calls]

        def start(iteration: int) -> None:
            self.loops = outer + ((entry, iteration),)
            self.at(stmt, frame)

        def settle() -> LoopEntry:
            """An iteration has run: note what it changed; the loop's entry."""
            state.after_iteration(frame.locals, self.opaque_calls != calls[0])
            calls[0] = self.opaque_calls
            return entry
        try:
            yield start, settle
        finally:
            self.loops = outer

    def iteration(self, body, frame) -> bool:
        """Run a loop body once; True where it breaks out of the loop."""
        try:
            self.exec_block(body, frame)
        except _Break:
            return True
        except _Continue:
            pass
        return False

    def at(self, stmt, frame) -> None:
        """Make `stmt` the current line of the user's code: each statement as
        it runs, and a loop's header again before each test or next item."""
        if self.user_code:
            self.loc = self.in_context(frame.source.location(stmt))

    def exec_Break(self, stmt, frame):
        raise _Break

    def exec_Continue(self, stmt, frame):
        raise _Continue

    def exec_FunctionDef(self, stmt, frame):
        frame.locals[stmt.name] = self.make_function(stmt, frame, stmt.name)

    def exec_Assert(self, stmt, frame):
        if not self.truth(self.eval(stmt.test, frame), stmt.test, frame):
            message = self.eval(stmt.msg, frame) if stmt.msg is not None else _text(stmt.test)
            raise AssertionError(f"{message} ({self.location_of(stmt, frame).short})")

    def exec_Raise(self, stmt, frame):
        raise self.eval(stmt.exc, frame)

    def exec_Delete(self, stmt, frame):
        for target in stmt.targets:
            if not isinstance(target, gast.Name):
                raise self.unsupported(target, frame, "`del` of anything but a name")
            frame.locals.pop(target.id, None)

    def exec_With(self, stmt, frame):
        """Known context managers (np.errstate, ...) wrap the unrolling itself.
        Ops recorded under np.errstate carry its settings in their location,
        so the generated code computes them (and their gradients) under it."""
        managers, outer = [], self.context
        try:
            for item in stmt.items:
                manager = self.eval(item.context_expr, frame)
                if not isinstance(manager, KNOWN_CONTEXTS):
                    raise UnsupportedSyntaxError(
                        f"`with` over {type(manager).__name__} is not supported",
                        self.location_of(item.context_expr, frame),
                        hint="Only np.errstate, contextlib.nullcontext and "
                             "warnings.catch_warnings run through; move other managers "
                             "outside the differentiated function.")
                where = self.location_of(item.context_expr, frame)
                if isinstance(manager, np.errstate):
                    self.context = contexts.errstate(self.context, manager, where)
                elif isinstance(manager, warnings.catch_warnings):
                    self.context = contexts.catch_warnings(self.context, manager, where)
                value = manager.__enter__()
                managers.append(manager)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value, frame)
            self.exec_block(stmt.body, frame)
        finally:
            self.context = outer
            for manager in reversed(managers):
                manager.__exit__(None, None, None)

    def in_context(self, loc: Location) -> Location:
        """`loc` with the blocks and loops the interpreter is in there."""
        if not (self.context or self.loops):
            return loc
        return replace(loc, context=self.context, loops=self.loops)

    def set_warning_filter(self, function, args: tuple, kwargs: dict, node, frame) -> None:
        """warnings.simplefilter(...) in the function: run, and kept in the
        catch_warnings block around it, which the generated code opens too."""
        self.context = contexts.with_filter(self.context, function, args, kwargs,
                                            self.location_of(node, frame))
        function(*args, **kwargs)

    def exec_Try(self, stmt, frame):
        """The body runs through; an exception while unrolling it cannot be
        turned into straight-line code, so it is an error, not a branch."""
        outer = self.context
        caught = tuple(kind for handler in stmt.handlers for kind in self.caught_by(handler, frame))
        if caught:  # the body's code refuses data on which it would raise one of these
            self.context = contexts.attempt(outer, caught, self.location_of(stmt, frame))
        try:
            try:
                self.exec_block(stmt.body, frame)
            except (_Return, _Break, _Continue, YotaError):
                raise
            except Exception as error:
                if not stmt.handlers:
                    raise
                raise UnsupportedSyntaxError(
                    f"the `try` body raised {type(error).__name__} while unrolling",
                    self.location_of(stmt, frame),
                    hint="Exception handlers are not unrolled: check the condition with "
                         "`if` instead of catching the error.") from error
            finally:
                self.context = outer
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
            frame.locals[name] = self.outside_value(module, name) if self.user_code else module

    def exec_ImportFrom(self, stmt, frame):
        """`from m import K` in the function reads K from outside, as a global
        would: a dependency, and an array read live."""
        module = __import__(stmt.module or "", frame.globals, None,
                            [a.name for a in stmt.names], stmt.level)
        if self.user_code:
            self.outside_value(module, None)
        for alias in stmt.names:
            frame.locals[alias.asname or alias.name] = self.attribute(module, alias.name,
                                                                      stmt, frame)

    # -- expressions --------------------------------------------------------------

    def eval(self, node, frame):
        handler = self._expr_handlers.get(type(node))
        if handler is None:
            handler = getattr(self, f"eval_{type(node).__name__}", None)
            if handler is None:
                raise self.unsupported(node, frame, f"the expression `{_text(node)}`")
            self._expr_handlers[type(node)] = handler
        value = handler(node, frame)
        if type(value) in _COUNTS:  # a trip count or a counter, used: no longer free
            if type(value) is not counts.Counter or id(node) not in self.index_nodes \
                    or self.python_index:  # indexing a Python value reads what no op shows
                value.use.used = True
            return int(value)
        return value

    def eval_Constant(self, node, frame):
        return node.value

    def eval_Name(self, node, frame):
        try:
            value, origin = frame.resolve(node.id)
        except NameError as error:
            raise NameError(f"{error} ({self.location_of(node, frame).short})") from None
        if origin is None or not self.user_code:
            return value
        return self.read_outside(node.id, value, origin, frame)

    def eval_Attribute(self, node, frame):
        return self.attribute(self.eval(node.value, frame), frame.source.mangle(node.attr),
                              node, frame)

    def eval_Subscript(self, node, frame):
        container = self.eval(node.value, frame)
        if isinstance(container, Traced) or not self.index_nodes:
            return self.subscript(container, self.eval(node.slice, frame), node, frame)
        saved, self.python_index = self.python_index, True  # `coeffs[t]`: the counter is used
        try:
            index = self.eval(node.slice, frame)
        finally:
            self.python_index = saved
        return self.subscript(container, index, node, frame)

    def eval_Slice(self, node, frame):
        bound = lambda part: None if part is None else self.concretize(  # noqa: E731
            self.eval(part, frame), operator.index, part, frame)
        return slice(bound(node.lower), bound(node.upper), bound(node.step))

    def eval_BinOp(self, node, frame):
        return self.binary(BINARY[type(node.op)], self.eval(node.left, frame),
                           self.eval(node.right, frame))

    def augmented(self, fn, current: Traced, other):
        """`current op= other` asked for by native code (see exec_AugAssign)."""
        new = self.binary(fn, current, other)
        if isinstance(current.value, np.ndarray):
            self.mutate(current, new, None, None)
            return current
        return new

    def binary(self, fn, left, right):
        if (_user_instance(left) or _user_instance(right)) and _holds_traced((left, right)):
            result = self.user_operator(fn, left, right)
            if result is not NotImplemented:
                return result
        if isinstance(left, Traced) or isinstance(right, Traced):
            return self.primitive(fn, (left, right), {})
        if fn is operator.mod and isinstance(left, str) and has_traced(right):
            return self.primitive(fn, (left, right), {})  # "%.3f %d" % (v, n): recorded text
        return fn(left, right)

    def user_operator(self, fn, left, right):
        """`layer @ x` where the user's class defines `__matmul__` (`x @ layer`
        and `__rmatmul__`, `v += x` and `__iadd__`, `a < b` and `b.__gt__`):
        its method, unrolled like any of its methods, tried in the order
        Python tries them; NotImplemented where none applies (the operator is
        then NumPy's, or Python's own, which raises as it would)."""
        name = getattr(fn, "__name__", "").strip("_")
        if name.startswith("i") and name[1:] in _OPERATOR_NAMES:  # `v += x`: __iadd__ first
            name = name[1:]
            result = self.operator_method(left, f"__i{name}__", right)
            if result is not NotImplemented:
                return result
        compare = name in _MIRRORED
        forward = f"__{name}__"
        reflected = f"__{_MIRRORED[name]}__" if compare else f"__r{name}__"
        left_type, right_type = type(left), type(right)
        # a subclass on the right that brings its own reflected method goes first
        right_first = left_type is not right_type and issubclass(right_type, left_type) and (
            compare or _special(right_type, reflected) is not _special(left_type, reflected))
        if right_first:
            result = self.operator_method(right, reflected, left)
            if result is not NotImplemented:
                return result
        result = self.operator_method(left, forward, right)
        if result is NotImplemented and not right_first \
                and (compare or left_type is not right_type) \
                and (_user_instance(left) or _defers(left, right)):
            result = self.operator_method(right, reflected, left)
        return result

    @staticmethod
    def compares_itself(value) -> bool:
        """An object of a user's class holding traced values: its comparison
        methods must be unrolled (builtin_calls.py, sorted/max/min)."""
        return _user_instance(value) and _holds_traced(value)

    def operator_method(self, obj, dunder: str, *others):
        """`obj.<dunder>(*others)` for an object of a user's class, looked up
        on its type as Python does and unrolled where its source can be read
        (a dataclass's generated `__eq__` cannot: it runs natively);
        NotImplemented where `obj` is no such object or has no such method."""
        if not _user_instance(obj):
            return NotImplemented
        method = _special(type(obj), dunder)
        if method is None:
            return NotImplemented
        if method is object.__ne__ and others:  # the default `!=`: the class's `__eq__`, negated
            equal = self.operator_method(obj, "__eq__", *others)
            if equal is NotImplemented:
                return NotImplemented
            return self.primitive(operator.not_, (equal,), {}) if isinstance(equal, Traced) \
                else not equal
        bound = method.__get__(obj, type(obj)) if hasattr(method, "__get__") else method
        function = getattr(bound, "__func__", None)
        if isinstance(bound, types.MethodType) and bound.__self__ is obj \
                and (inlinable(function) or _module_of(function) == "functools") \
                and _holds_traced((obj, *others)):  # a static object's runs as Python runs it
            # (functools: the comparisons @total_ordering derives call the class's own)
            try:
                function_source(function)
            except SourceUnavailableError:
                return bound(*others)
            return self.inline_function(function, (obj, *others), {}, None, None)
        return bound(*others)

    def eval_UnaryOp(self, node, frame):
        operand = self.eval(node.operand, frame)
        if isinstance(node.op, gast.Not):
            return not self.truth(operand, node.operand, frame)
        fn = UNARY[type(node.op)]
        if _holds_traced(operand):  # a static object's operator runs as Python runs it
            result = self.operator_method(operand, f"__{fn.__name__.strip('_')}__")
            if result is not NotImplemented:
                return result
        return self.primitive(fn, (operand,), {}) if isinstance(operand, Traced) else fn(operand)

    def eval_BoolOp(self, node, frame):
        stop_when = isinstance(node.op, gast.Or)
        for value_node in node.values:
            value = self.eval(value_node, frame)
            if self.truth(value, value_node, frame) == stop_when:
                return value
        return value

    def eval_Compare(self, node, frame):
        left = self.eval(node.left, frame)
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, frame)
            if isinstance(op, (gast.Is, gast.IsNot)):
                result = self.identical(left, right, node, frame) != isinstance(op, gast.IsNot)
            elif isinstance(op, (gast.In, gast.NotIn)):
                result = self.contains(right, left, node, frame) != isinstance(op, gast.NotIn)
            else:
                result = self.binary(COMPARE[type(op)], left, right)
            if len(node.ops) > 1 and not self.truth(result, node, frame):
                return result
            left = right
        return result

    def eval_IfExp(self, node, frame):
        taken = self.truth(self.eval(node.test, frame), node.test, frame)
        return self.eval(node.body if taken else node.orelse, frame)

    def eval_Call(self, node, frame):
        fn = self.eval(node.func, frame)
        args = []
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                args.extend(self.iterate(self.eval(arg.value, frame), arg, frame))
            else:
                args.append(self.eval(arg, frame))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.eval(keyword.value, frame))
            else:
                kwargs[keyword.arg] = self.eval(keyword.value, frame)
        saved = self.loc, self.native
        if self.user_code:
            self.loc = self.in_context(frame.source.location(node))  # errors point at the call
        self.native = (node, frame)  # what native code decides is named after the call
        try:
            return self.call(fn, tuple(args), kwargs, node, frame)
        finally:
            self.loc, self.native = saved

    def eval_Lambda(self, node, frame):
        return self.make_function(node, frame, "<lambda>")

    def eval_Tuple(self, node, frame):
        return tuple(self.elements(node.elts, frame))

    def eval_List(self, node, frame):
        return self.elements(node.elts, frame)

    def eval_Set(self, node, frame):
        return set(self.elements(node.elts, frame))

    def eval_Dict(self, node, frame):
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.update(self.eval(value, frame))
            else:
                out[self.eval(key, frame)] = self.eval(value, frame)
        return out

    def elements(self, nodes, frame) -> list:
        out = []
        for node in nodes:
            if isinstance(node, gast.Starred):
                out.extend(self.iterate(self.eval(node.value, frame), node, frame))
            else:
                out.append(self.eval(node, frame))
        return out

    def eval_ListComp(self, node, frame):
        return self.comprehension(node.generators, frame, lambda s: self.eval(node.elt, s))

    def eval_GeneratorExp(self, node, frame):
        """A generator expression is lazy, as in Python: its first iterable is
        evaluated now, each item when it is asked for (so names bound later
        are seen, a consumed generator is empty, and next() works)."""
        scope, generators = frame.child(), node.generators
        where = frame.source.location(node) if self.user_code else self.loc

        def produce(level: int, iterable):
            generator = generators[level]
            for item in iterable:
                self.bind(generator.target, item, scope)
                if not all(self.truth(self.eval(test, scope), test, scope)
                           for test in generator.ifs):
                    continue
                if level + 1 == len(generators):
                    yield self.eval(node.elt, scope)
                else:
                    inner = generators[level + 1]
                    yield from produce(level + 1, self.items(self.eval(inner.iter, scope),
                                                             inner.iter, scope))

        first = generators[0].iter
        items = self.items(self.eval(first, frame), first, frame)
        return self.located(produce(0, items), where)

    def located(self, generator, loc: Location | None):
        """Advance `generator` with its own source location as the current one
        (its items are computed when a later line consumes them)."""
        while True:
            saved = self.loc, self.native
            self.loc, self.native = loc, None
            try:
                item = next(generator)
            except StopIteration:
                return
            finally:
                self.loc, self.native = saved
            yield item

    def eval_SetComp(self, node, frame):
        return set(self.eval_ListComp(node, frame))

    def eval_DictComp(self, node, frame):
        pairs = self.comprehension(node.generators, frame, lambda s: (
            self.eval(node.key, s), self.eval(node.value, s)))
        return dict(pairs)

    def comprehension(self, generators, frame, element) -> list:
        scope, out = frame.child(), []

        def loop(level: int):
            if level == len(generators):
                out.append(element(scope))
                return
            generator = generators[level]
            iterable = self.eval(generator.iter, frame if level == 0 else scope)
            for item in self.iterate(iterable, generator.iter, frame):
                self.bind(generator.target, item, scope)
                if all(self.truth(self.eval(test, scope), test, scope) for test in generator.ifs):
                    loop(level + 1)

        loop(0)
        return out

    def eval_Yield(self, node, frame):
        if self.generator is None:
            raise self.unsupported(node, frame, f"the expression `{_text(node)}`")
        return self.generator.give(None if node.value is None else self.eval(node.value, frame))

    def eval_YieldFrom(self, node, frame):
        """PEP 380: items pass through, values sent in pass down to an
        unrolled generator, and its return value is the expression's value."""
        if self.generator is None:
            raise self.unsupported(node, frame, f"the expression `{_text(node)}`")
        inner = self.eval(node.value, frame)
        if not isinstance(inner, UnrolledGenerator):
            for item in self.items(inner, node.value, frame):
                self.generator.give(item)
            return None
        sent, thrown = None, None
        while True:
            try:
                item = inner.throw(thrown) if thrown is not None else inner.send(sent)
            except StopIteration as finished:
                return finished.value
            try:
                sent, thrown = self.generator.give(item), None
            except Exception as error:  # thrown in: passed down (closing is no Exception)
                sent, thrown = None, error

    def eval_NamedExpr(self, node, frame):
        value = self.eval(node.value, frame)
        self.bind(node.target, value, frame)
        return value

    def eval_JoinedStr(self, node, frame):
        """An f-string holding traced values is a recorded value of its own,
        printed as the same f-string: it shows the live values at every call."""
        pieces = tuple(self.format_piece(part, frame) for part in node.values)
        if not has_traced(pieces):
            return primitives.fstring(*pieces)
        return self.primitive(primitives.fstring, pieces, {})

    def format_piece(self, part, frame):
        """A literal string, or (value, conversion, spec) for `{value!r:spec}`."""
        if not isinstance(part, gast.FormattedValue):
            return self.eval(part, frame)
        spec = "" if part.format_spec is None else self.eval(part.format_spec, frame)
        if isinstance(spec, Traced):
            spec = self.concretize(spec, str, part.format_spec, frame)
        conversion = chr(part.conversion) if part.conversion > 0 else ""
        return self.eval(part.value, frame), conversion, spec

    # -- functions ------------------------------------------------------------

    def make_function(self, node, frame, name) -> UserFunction:
        args = node.args
        positional = args.posonlyargs + args.args
        defaults = [self.eval(d, frame) for d in args.defaults]
        params = []
        first_default = len(positional) - len(defaults)
        for i, arg in enumerate(positional):
            kind = (inspect.Parameter.POSITIONAL_ONLY if i < len(args.posonlyargs)
                    else inspect.Parameter.POSITIONAL_OR_KEYWORD)
            default = defaults[i - first_default] if i >= first_default else inspect.Parameter.empty
            params.append(inspect.Parameter(arg.id, kind, default=default))
        if args.vararg is not None:
            params.append(inspect.Parameter(args.vararg.id, inspect.Parameter.VAR_POSITIONAL))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            value = inspect.Parameter.empty if default is None else self.eval(default, frame)
            params.append(inspect.Parameter(arg.id, inspect.Parameter.KEYWORD_ONLY, default=value))
        if args.kwarg is not None:
            params.append(inspect.Parameter(args.kwarg.id, inspect.Parameter.VAR_KEYWORD))
        return UserFunction(self, replace(frame.source, node=node), frame,
                            inspect.Signature(params), name)

    # -- errors ---------------------------------------------------------------

    def location_of(self, node, frame) -> Location | None:
        if node is None or frame is None:
            return self.loc
        return self.in_context(frame.source.location(node)) if self.user_code else self.loc

    def unsupported(self, node, frame, what: str) -> UnsupportedSyntaxError:
        return UnsupportedSyntaxError(f"{what} is not supported", self.location_of(node, frame),
                                      hint=_REWRITES.get(type(node), ""))


_REWRITES = {
    gast.Yield: "`yield` outside a generator function called by the unrolled code (a "
                "lambda?): build and return a list instead.",
    gast.YieldFrom: "`yield from` outside a generator function called by the unrolled "
                    "code: build and return a list instead.",
    gast.Match: "Write it as if/elif over the cases.",
    gast.Await: "Differentiate a plain (synchronous) function.",
    gast.ClassDef: "Define the class at module level.",
}


def _random_state(generator):
    if isinstance(generator, np.random.RandomState):
        return generator.get_state()
    if isinstance(generator, random.Random):
        return generator.getstate()
    return generator.bit_generator.state


def random_states(generators) -> dict:
    """Where each generator stands, for `rewind`."""
    return {id(generator): (generator, _random_state(generator)) for generator in generators}


def rewind(random_states: dict) -> None:
    """Put every generator the trace drew from back where it was, so the
    generated code's first run draws what one call of the function would."""
    for generator, state in random_states.values():
        if isinstance(generator, np.random.RandomState):
            generator.set_state(state)
        elif isinstance(generator, random.Random):
            generator.setstate(state)
        else:
            generator.bit_generator.state = state


def _names_read(node) -> set:
    return {each.id for each in gast.walk(node)
            if isinstance(each, gast.Name) and isinstance(each.ctx, gast.Load)}


def _assigned_names(stmt: gast.Assign) -> set:
    return {t.id for t in stmt.targets if isinstance(t, gast.Name)} or {None}


NUMERIC_PACKAGES = {"numpy", "scipy", "math", "cmath", "cupy", "builtins", "jax", "torch"}


def _computes_on_arrays(fn) -> bool:
    """Functions of NumPy and its kind (and Python's numeric builtins): a call
    is one op of the tape, computed on values. Anything else (a container's
    method, the standard library, a library class's method) runs natively."""
    if isinstance(fn, np.ufunc):
        return True
    if getattr(fn, "__objclass__", str) is not str:  # list.append(l, v), dict.update(d, ...)
        return False
    module = _module_of(fn) or _module_of(type(fn))
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        module = _module_of(type(owner) if not isinstance(owner, type) else owner)
        if module == "builtins":  # a method of a list, a dict, a bytearray, dict.fromkeys
            return False
    return (module or "").split(".")[0] in NUMERIC_PACKAGES


def _succeeds_on_values(fn, args, kwargs) -> bool:
    """Would `fn` run on the example values where it failed on traced ones
    (struct.pack needs a real float)?"""
    try:
        fn(*values_of(args), **values_of(kwargs))
    except Exception:
        return False
    return True


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
             if not isinstance(item, Traced) or not item.op.depends]
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


def _callee_name(fn) -> str:
    """`heapq.heappush`, `Decimal`, `Encoder.encode`: never an address."""
    if isinstance(fn, type):
        return fn.__qualname__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return primitives.function_path(fn) or name or type(fn).__qualname__


def _contents(container):
    """A shallow copy of a mutable container (or of an object's attributes),
    to tell whether a native call changed it (None for other values)."""
    if isinstance(container, (list, deque, bytearray)) or type(container).__name__ == "array":
        return list(container)
    if isinstance(container, (dict, set)):
        return dict(container) if isinstance(container, dict) else set(container)
    if not isinstance(container, (type, types.ModuleType, types.FunctionType)) \
            and isinstance(getattr(container, "__dict__", None), dict):
        return ("attributes", dict(vars(container)))  # object.__setattr__(model, ...)
    return None


def _unchanged(container, before) -> bool:
    """Does `container` hold the very objects it held (compared by identity:
    `==` on traced values would record comparisons)?"""
    now = _contents(container)
    if isinstance(before, tuple):
        before, now = before[1], now[1]
    if isinstance(before, dict):
        return list(before) == list(now) and all(now[k] is v for k, v in before.items())
    if isinstance(before, set):
        return len(before) == len(now) and all(any(a is b for b in now) for a in before)
    return len(before) == len(now) and all(a is b for a, b in zip(before, now))


def _restore(container, before) -> None:
    if isinstance(before, tuple):  # an object's attributes
        vars(container).clear()
        vars(container).update(before[1])
    elif isinstance(container, (dict, set)):
        container.clear()
        container.update(before)
    elif isinstance(container, deque):
        container.clear()
        container.extend(before)
    else:
        container[:] = type(container)(before) if isinstance(container, bytearray) else before


def _routed_args(unroller, args, node, frame):
    return routed(unroller, args, node, frame, objects=False)


def _numpy_function(fn) -> bool:
    """A function of NumPy's own (np.sqrt, np.float64), not of SciPy or math."""
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy" \
        or isinstance(fn, np.ufunc)


def _nested(structure):
    """Every value inside nested tuples, lists, dicts and slices."""
    return nested.leaves(structure, lambda value: not isinstance(
        value, (tuple, list, dict, slice)))


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _index_text(index, show) -> str:
    items = index if isinstance(index, tuple) else (index,)
    parts = []
    for item in items:
        if isinstance(item, slice):
            bounds = ["" if p is None else show(p) for p in (item.start, item.stop, item.step)]
            parts.append(":".join(bounds[:2] if item.step is None else bounds))
        else:
            parts.append("..." if item is Ellipsis else show(item))
    return ", ".join(parts)


def _length(iterable) -> int | None:
    """How many items a `for` loop over a range or a traced array's rows has."""
    if isinstance(iterable, range):
        return len(iterable)
    if isinstance(iterable, Traced) and isinstance(iterable.value, np.ndarray) \
            and iterable.value.ndim:
        return iterable.value.shape[0]
    return None


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
    return any(t.op.depends and t.op.dtype is not None and not t.op.differentiable
               and (t.op.shape == () or fn in READS_COUNTS) for t in traced_in((args, kwargs)))


def _is_mask_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(item, Traced) and np.result_type(item.value) == np.bool_
               and np.ndim(item.value) > 0 for item in items)


def _text(node) -> str:
    """The source text of an expression, for messages."""
    try:
        return ast.unparse(gast.gast_to_ast(node))
    except Exception:  # pragma: no cover - text is only for messages
        return "<expression>"


def _keyword(stmt) -> str:
    return {"AsyncFunctionDef": "async def", "AsyncFor": "async for", "AsyncWith": "async with",
            "ClassDef": "class", "Global": "global", "Nonlocal": "nonlocal", "With": "with",
            "Try": "try", "TryStar": "try/except*", "Match": "match"}.get(
        type(stmt).__name__, type(stmt).__name__)


def _add_note(error: Exception, loc: Location | None) -> None:
    if loc is not None and hasattr(error, "add_note"):
        error.add_note(f"while unrolling {loc.filename}:{loc.lineno}: {loc.line.strip()}")
