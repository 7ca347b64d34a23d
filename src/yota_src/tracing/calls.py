"""What a call means while unrolling.

A function of the user's (or a template's helper) is inlined: its body is
unrolled in a frame of its own. A primitive is applied (folded or recorded,
interpreter.py); a builtin that looks inside values has a handler
(builtin_calls.py); print, warnings and logging are recorded as output, not
run; a class of the user's is constructed by unrolling its `__init__`; what
only arranges values (a container's method, heapq, bisect) runs natively on
the traced values themselves.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import operator
import sys
import types
import weakref
from dataclasses import replace

import gast
import numpy as np

from yota_src.core import distributions, nested, primitives, registry
from yota_src.core.values import is_array
from yota_src.errors import UnsupportedSyntaxError, YotaError
from yota_src.ir.tape import Call
from yota_src.tracing import array_library
from yota_src.tracing.array_methods import ArrayMethod
from yota_src.tracing.builtin_calls import builtin_handler, routed
from yota_src.tracing.container_changes import contents, restore, unchanged
from yota_src.tracing.counts import plain_helper
from yota_src.tracing.frames import Frame, Return
from yota_src.tracing.generators import UnrolledGenerator, is_generator_function
from yota_src.tracing.ownership import inlinable, module_of, own_api, user_kernel
from yota_src.tracing.recorder import NotCarried
from yota_src.tracing.source import FunctionSource, closure_cells, function_source, unwrap
from yota_src.tracing.traced import Traced, give_name, has_traced, traced_in, values_of

# builtins that change no state when called (next(it) advances an iterator)
_PURE_BUILTINS = {len, range, float, int, abs, min, max, sum, isinstance, issubclass, zip,
                  enumerate, round, bool, type, tuple, list, dict, set, frozenset, sorted,
                  reversed, any, all, str, repr, format, hasattr, getattr, divmod, pow, map,
                  filter, iter, hash, id, callable, complex, slice, ord, chr}
CACHES = tuple(t for t in (getattr(functools, "_lru_cache_wrapper", None),) if t)
NUMERIC_PACKAGES = {"numpy", "scipy", "math", "cmath", "cupy", "builtins", "jax", "torch"}
MAX_DEPTH = 60


class UserFunction:
    """A `def` or `lambda` met while unrolling; calling it inlines its body."""

    def __init__(self, unroller, source: FunctionSource, frame: Frame, signature, name):
        self.unroller = unroller
        self.source = source
        self.frame = frame
        self.signature = signature
        self.__name__ = name

    def __call__(self, *args, **kwargs):  # from native callers such as map()
        return self.unroller.calls.inline(self.source, self.signature, args, kwargs,
                                          self.frame, {}, self.frame.globals)


class Calls:
    """Calls of functions and classes, and the functions the unrolled code
    defines (`def`, `lambda`)."""

    def __init__(self, unroller):
        self.unroller = unroller

    def call(self, fn, args: tuple, kwargs: dict, node, frame):
        unroller = self.unroller
        if array_library.is_device_function(fn):
            fn = array_library.host_function(fn, unroller.location_of(node, frame))
            if fn is array_library.host_array_module:
                return np
        if isinstance(fn, Traced):
            raise TypeError(f"'{type(fn.value).__name__}' object is not callable "
                            f"({unroller.location_of(node, frame).short})")
        if isinstance(fn, UserFunction):
            return self.inline(fn.source, fn.signature, args, kwargs, fn.frame, {},
                               fn.frame.globals)
        if isinstance(getattr(fn, "__self__", None), UnrolledGenerator):  # send, throw, close
            return fn(*args, **kwargs)  # as they are: an exception class is not a callback
        if isinstance(fn, ArrayMethod):
            return unroller.array_methods.call(fn, args, kwargs, node, frame)
        if isinstance(fn, functools.partial):
            return self.call(fn.func, fn.args + args, {**fn.keywords, **kwargs}, node, frame)
        if isinstance(fn, (operator.itemgetter, operator.attrgetter)):
            return unroller.natively(node, frame, fn, *args)  # indexing, on traced values
        if isinstance(fn, CACHES) and has_traced((args, kwargs)):
            raise UnsupportedSyntaxError(
                f"the cached function {getattr(fn, '__name__', '?')}() called with values "
                "computed from the arguments", unroller.location_of(node, frame),
                hint="What a cache returns depends on the calls before, which the generated "
                     "code cannot know: call the function undecorated (fn.__wrapped__).")
        if primitives.is_output(fn):
            return self.output(fn, args, kwargs, node, frame)
        handler = builtin_handler(fn)
        if handler is not None:
            if fn not in _PURE_BUILTINS:  # next(it), setattr(...): state the ops do not show
                unroller.opaque_calls += 1
            return handler(unroller, args, kwargs, node, frame)
        if distributions.is_distribution(fn):  # norm(mu, sigma): its methods take them
            return distributions.freeze(fn, args, kwargs)
        if registry.is_primitive(fn) or primitives.is_random_draw(fn):
            return unroller.primitive(fn, args, kwargs)
        if not unroller.user_code and user_kernel(fn):  # a user rule's kernel: called as it says
            try:
                return unroller.primitive(fn, args, kwargs)
            except NotCarried:  # make_vjp(y, x) gives a closure: unrolled, like user code
                return self.inline_function(fn, args, kwargs, node, frame)
        if own_api(fn) and unroller.user_code and unroller.nested_derivative is not None:
            result = unroller.nested_derivative(fn, args, kwargs, node, frame)
            if result is not NotImplemented:
                return result
        if own_api(fn):
            raise UnsupportedSyntaxError(
                f"{getattr(fn, '__name__', type(fn).__name__)}() of yota-src inside a "
                "differentiated function (a gradient of a gradient) is not supported yet",
                unroller.location_of(node, frame),
                hint="A saved gradient module is plain Python: import its grad_<name> and "
                     "call that instead, and it is differentiated like any code.")
        if inlinable(fn if not isinstance(fn, types.MethodType) else fn.__func__):
            return self.inline_function(fn, args, kwargs, node, frame)
        if isinstance(fn, type):
            unroller.opaque_calls += 1
            return self.construct(fn, args, kwargs, node, frame)
        method = unroller.access.python_method(fn, "__call__")
        if method is not None:  # a callable object of the user's: its __call__ is unrolled
            return self.inline_function(method, (fn,) + tuple(args), kwargs, node, frame)
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, str) and isinstance(fn, types.BuiltinMethodType):
            args = tuple(list(a) if isinstance(a, types.GeneratorType) else a for a in args)
            if has_traced((args, kwargs)):  # " ".join(f"{v}" for v in x): recorded text
                return unroller.primitive(getattr(str, fn.__name__), (owner, *args), kwargs)
            return fn(*args, **kwargs)
        if _computes_on_arrays(fn):
            return unroller.primitive(fn, args, kwargs)
        return self.native_call(fn, args, kwargs, node, frame)

    def native_call(self, fn, args: tuple, kwargs: dict, node, frame):
        """A function that only arranges values (a container's method, heapq,
        bisect, pickle, a library class's method): run natively on the traced
        values themselves, whose arithmetic is recorded and whose decisions are
        guarded (traced.py), so what it does to local containers happens as in
        a call. A container of the arguments or from outside that it changes
        is put back and refused: the generated code would not change it."""
        unroller = self.unroller
        outside = unroller.outside_reads
        unroller.opaque_calls += 1  # `lst.pop()`: state a loop's ops do not show
        protected = [(c, contents(c)) for c in (getattr(fn, "__self__", None), *args,
                                                *kwargs.values())
                     if outside.outside_or_held(c) and contents(c) is not None]
        try:
            result = unroller.natively(node, frame, fn,
                                       *routed(unroller, args, node, frame, objects=False),
                                       **kwargs)
        except YotaError:
            raise
        except Exception as error:
            if not has_traced((args, kwargs)) or not _succeeds_on_values(fn, args, kwargs):
                raise  # an error of the code itself, which it would raise natively too
            raise UnsupportedSyntaxError(
                f"{_callee_name(fn)}() cannot take a value computed from the arguments "
                f"({error})", unroller.location_of(node, frame),
                hint="It needs a concrete number or text, which would freeze the value: "
                     "compute with NumPy or Python arithmetic in the differentiated "
                     "function, or move the call outside it.") from None
        finally:
            changed = [(c, before) for c, before in protected if not unchanged(c, before)]
            for container, before in changed:
                restore(container, before)
        if changed:
            outside.refuse_write(changed[0][0], node, frame)
        outside.depend_on_call(fn, args, kwargs, result)
        return result

    def inline_function(self, fn, args, kwargs, node, frame):
        if isinstance(fn, types.MethodType):
            args, fn = (fn.__self__,) + tuple(args), fn.__func__
        fn = unwrap(fn)
        stops = registry.nodiff_args(fn) if self.unroller.user_code else set()
        if stops:
            args, kwargs = self._stopped(fn, args, kwargs, stops)
        source = function_source(fn)
        stored = _stores_of_plain(source.node)
        if stored is None:
            self.unroller.opaque_calls += 1  # it may change state a loop's trace cannot see
        self.unroller.outside_reads.depend_on_code(fn)
        return self.inline(source, signature_of(fn), args, kwargs, None,
                           closure_cells(fn), fn.__globals__, node, frame, stored)

    def _stopped(self, fn, args: tuple, kwargs: dict, names: set) -> tuple[tuple, dict]:
        """The arguments of `fn` with those of the parameters declared
        piecewise constant (`ys.nodiff(fn, ...)`) passing no gradient in."""
        try:
            bound = signature_of(fn).bind(*args, **kwargs)
        except TypeError:
            return args, kwargs  # said where the call is unrolled
        for name in names & set(bound.arguments):
            bound.arguments[name] = nested.map_leaves(
                bound.arguments[name], self._stop, lambda value: isinstance(value, Traced))
        return bound.args, bound.kwargs

    def _stop(self, value):
        if isinstance(value, Traced) and value.op.differentiable:
            return self.unroller.primitive(primitives.stop_gradient, (value,), {})
        return value

    def inline(self, source, signature, args, kwargs, parent, closure, globals_,
               node=None, frame=None, stored: set | None = None):
        """`source` run on the arguments; `stored`: the names a plain helper
        (counts.plain_helper) stores into, which must hold traced arrays when
        it returns (else it counts as a call whose effects no op shows)."""
        unroller = self.unroller
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            where = unroller.location_of(node, frame).short if node else "the top level"
            raise TypeError(f"{error} (in a call at {where})") from None
        passed = set(bound.arguments)
        bound.apply_defaults()
        if unroller.user_code:  # a value passed in unnamed takes the name the callee gives it
            for name, value in bound.arguments.items():
                if name not in passed:  # a default: from outside the call
                    bound.arguments[name] = value = \
                        unroller.outside_reads.outside_value(value, name)
                elif is_array(value):  # an array of a static structure
                    bound.arguments[name] = value = \
                        unroller.recorder.lift(value, name, unroller.loc)
                give_name(value, name)
        local = Frame(source, dict(bound.arguments), parent, closure, globals_)
        if _yields(source.node):  # a generator function: its body runs as it is consumed
            return UnrolledGenerator(unroller, lambda: self.run_body(source, local))
        if unroller.depth >= MAX_DEPTH:
            raise UnsupportedSyntaxError(
                f"calls nest deeper than {MAX_DEPTH} levels while unrolling",
                unroller.location_of(node, frame) if node else None,
                hint="yota-src unrolls recursion completely, so it must reach a base case "
                     "decided by static values within that depth: write deeper recursion as "
                     "a loop.")
        saved = unroller.loc, unroller.native
        unroller.depth, unroller.native = unroller.depth + 1, None
        try:
            if isinstance(source.node, gast.Lambda):
                return unroller.eval(source.node.body, local)
            unroller.exec_block(source.node.body, local)
        except Return as result:
            return result.value
        finally:
            (unroller.loc, unroller.native), unroller.depth = saved, unroller.depth - 1
            if stored and not all(isinstance(local.locals.get(name), Traced) for name in stored):
                unroller.opaque_calls += 1  # an item stored into a Python object
        return None

    def run_body(self, source, frame) -> None:
        """A generator function's body, in its generator's thread."""
        self.unroller.depth += 1
        try:
            self.unroller.exec_block(source.node.body, frame)
        except Return as returned:
            return returned.value
        return None

    def construct(self, cls, args, kwargs, node, frame):
        """Instantiate a class: inline a Python `__init__`, else call it natively."""
        init = cls.__init__
        if cls.__new__ is object.__new__ and inlinable(init):
            try:
                source = function_source(init)
            except YotaError:  # generated __init__ (dataclasses): stores values as given
                return cls(*args, **kwargs)
            obj = object.__new__(cls)
            self.inline(source, signature_of(init), (obj,) + tuple(args), kwargs, None,
                        closure_cells(init), init.__globals__, node, frame)
            return obj
        if has_traced((args, kwargs)) and cls.__module__.split(".")[0] in NUMERIC_PACKAGES \
                and cls.__module__ != "builtins":  # np.float32(x) is a primitive; zip(...) is not
            return self.unroller.primitive(cls, args, kwargs)
        if issubclass(cls, primitives.GENERATORS):  # np.random.RandomState(0): made by the code
            return self.unroller.primitive(cls, args, kwargs)
        if not has_traced((args, kwargs)):
            return cls(*args, **kwargs)
        return self.native_call(cls, args, kwargs, node, frame)  # Counter(labels), deque(xs)

    def make_function(self, node, frame, name) -> UserFunction:
        """A `def` or `lambda` of the unrolled code, its defaults evaluated now."""
        evaluate = self.unroller.eval
        args = node.args
        positional = args.posonlyargs + args.args
        defaults = [evaluate(d, frame) for d in args.defaults]
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
            value = inspect.Parameter.empty if default is None else evaluate(default, frame)
            params.append(inspect.Parameter(arg.id, inspect.Parameter.KEYWORD_ONLY, default=value))
        if args.kwarg is not None:
            params.append(inspect.Parameter(args.kwarg.id, inspect.Parameter.VAR_KEYWORD))
        return UserFunction(self.unroller, replace(frame.source, node=node), frame,
                            inspect.Signature(params), name)

    # -- output ---------------------------------------------------------------------

    def output(self, fn, args: tuple, kwargs: dict, node, frame) -> None:
        """print, warnings.warn, logging: recorded, not run. The generated code
        shows the output at every call, in order, with live values; tracing
        shows nothing (so the first call of ys.grad prints once, like f)."""
        if fn is print and kwargs.get("file") is not None:
            kwargs = {**kwargs, "file": self.stream(kwargs["file"], node, frame)}
        self.require_printable(fn, (args, kwargs), node, frame)
        depends = any(t.op.depends for t in traced_in((args, kwargs)))
        recorder, loc = self.unroller.recorder, self.unroller.loc
        recorder.ops.append(Call(fn, recorder.refs(args, loc), recorder.refs(kwargs, loc), None,
                                 None, self.unroller.location_of(node, frame), depends))

    def stream(self, file, node, frame) -> primitives.StandardStream:
        for name in ("stdout", "stderr"):
            if file is getattr(sys, name) or file is getattr(sys, f"__{name}__"):
                return primitives.StandardStream(name)
        raise UnsupportedSyntaxError(
            f"print(file=...) to a {type(file).__name__}", self.unroller.location_of(node, frame),
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
            self.unroller.location_of(node, frame),
            hint="The generated code repeats output at every call and can show numbers, "
                 "strings, arrays and lists, tuples and dicts of them: show the fields "
                 "you want to see (e.g. print(model.W)) or an f-string.")


# Weakly held: a function traced once (a closure over a model's arrays) is
# not kept alive by having been traced.
_signatures: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def signature_of(fn) -> inspect.Signature:
    """fn's own signature (not its __wrapped__'s), remade when its defaults
    are rebound or its keyword defaults changed (a dict, changed in place)."""
    defaults, kwdefaults = getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)
    try:
        cached = _signatures.get(fn)
    except TypeError:  # not weakly referable: worked out each time
        return inspect.signature(fn, follow_wrapped=False)
    if kwdefaults is not None:
        kwdefaults = tuple((name, id(value)) for name, value in kwdefaults.items())
    if cached is None or cached[0] is not defaults or cached[1] != kwdefaults:
        cached = _signatures[fn] = (defaults, kwdefaults,
                                    inspect.signature(fn, follow_wrapped=False))
    return cached[2]


_GENERATOR_FUNCTIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PLAIN_HELPERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _stores_of_plain(node) -> frozenset | None:
    """The names a plain helper (counts.plain_helper) stores items into, or
    None for any other function (cached per node)."""
    if node not in _PLAIN_HELPERS:
        stored: set[str] = set()
        _PLAIN_HELPERS[node] = None if isinstance(node, gast.Lambda) or _yields(node) \
            or not plain_helper(node.body, stored) else frozenset(stored)
    return _PLAIN_HELPERS[node]


def _yields(node) -> bool:
    """Is this parsed function a generator function (cached per node)?"""
    known = _GENERATOR_FUNCTIONS.get(node)
    if known is None:
        known = _GENERATOR_FUNCTIONS[node] = is_generator_function(node)
    return known


def _computes_on_arrays(fn) -> bool:
    """Functions of NumPy and its kind (and Python's numeric builtins): a call
    is one op of the tape, computed on values. Anything else (a container's
    method, the standard library, a library class's method) runs natively."""
    if isinstance(fn, np.ufunc):
        return True
    if getattr(fn, "__objclass__", str) is not str:  # list.append(l, v), dict.update(d, ...)
        return False
    module = module_of(fn) or module_of(type(fn))
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        module = module_of(type(owner) if not isinstance(owner, type) else owner)
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


def _callee_name(fn) -> str:
    """`heapq.heappush`, `Decimal`, `Encoder.encode`: never an address."""
    if isinstance(fn, type):
        return fn.__qualname__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return primitives.function_path(fn) or name or type(fn).__qualname__
