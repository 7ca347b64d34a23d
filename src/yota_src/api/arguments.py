"""What a caller passes: the function, its arguments and the options, checked.

Every entry point takes `f` and `*args` alike: a bound method, a
functools.partial or a callable object is the function under it with its
bound arguments first (`target`). `wrt`, `loops` and `has_aux` mean the same
to each, and each mistake is refused here, before anything is traced, with a
message that says what to pass instead.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import types
import weakref
from collections.abc import Callable

import numpy as np

from yota_src.core.compiled_text import run_registered
from yota_src.core.values import DIFF, GENERATOR, flatten, kind_of
from yota_src.errors import NoDiffRuleError, place
from yota_src.tracing.source import unwrap


def target(f, args: tuple) -> tuple[Callable, tuple, int]:
    """(function to unroll, all its positional arguments, how many of them
    are bound by `f` itself): a bound method binds `self`, a
    functools.partial its arguments, a callable object itself."""
    if isinstance(f, types.MethodType):
        fn, bound, n = target(f.__func__, (f.__self__,) + args)
        return fn, bound, n + 1
    if isinstance(f, functools.partial):
        if f.keywords:  # a small `def` calling it, which the trace unrolls as it is
            return target(_calling(f, len(args)), args)
        fn, bound, n = target(f.func, tuple(f.args) + args)
        return fn, bound, n + len(f.args)
    if isinstance(f, (types.FunctionType, staticmethod, classmethod)) or \
            isinstance(unwrap(f), types.FunctionType):
        return f, args, 0
    call = vars(type(f)).get("__call__") or getattr(type(f), "__call__", None)  # noqa: B004
    if isinstance(call, types.FunctionType) and not isinstance(f, type):
        return call, (f,) + args, 1
    if not callable(f):
        raise TypeError(f"yota-src differentiates Python functions; got "
                        f"{type(f).__name__} {f!r:.60}")
    return f, args, 0


def refuse_keywords(api_name: str, keywords: dict) -> None:
    if keywords:
        names = ", ".join(f"{key}=..." for key in keywords)
        raise TypeError(
            f"ys.{api_name} takes the function's arguments positionally, and differentiates "
            f"each of them; got keyword arguments {names}. Pass them positionally "
            f"(ys.{api_name}(f, a, b)), and use wrt=... to choose which get gradients.")


_CALLING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _calling(f: functools.partial, count: int) -> Callable:
    """`def loss(x, y): return partial_loss(x, y)` for a partial with keyword
    arguments and `count` positional ones: its parameters are the partial's
    own, as the generated code names them. One per partial and count, so
    that `ys.grad`'s cache finds it again."""
    made = _CALLING.setdefault(f, {})
    if count not in made:
        try:
            params = [p.name for p in inspect.signature(f).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        names = params[:count] if len(params) >= count else \
            [f"arg{k}" for k in range(count)]
        name = getattr(f.func, "__name__", "function")
        name = name if name.isidentifier() and not keyword.iskeyword(name) else "function"
        source = f"def {name}({', '.join(names)}):\n    return partial({', '.join(names)})\n"
        made[count] = run_registered(source, f"partial_{name}", {"partial": f})[name]
    return made[count]


def wrt_indices(wrt, n_args: int, n_bound: int, fn: Callable | None = None,
                args: tuple | None = None) -> frozenset:
    """Indices into the full argument tuple (bound arguments first) to
    differentiate. `wrt` names arguments by position or by parameter name
    (`"W"`; `"args_1"` for the second of `*args`): one, or a sequence."""
    if wrt is None:
        return frozenset(range(n_bound, n_args + n_bound))
    items = [wrt] if isinstance(wrt, (int, np.integer, str)) else wrt
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"wrt must be an argument index or name, or a sequence of them, "
                        f"not {type(wrt).__name__}") from None
    named = fn is not None and any(isinstance(item, str) for item in items)
    names = parameter_names(fn, n_args + n_bound)[n_bound:] if named else []
    indices = []
    for item in items:
        if isinstance(item, str):
            if item not in names:
                known = ", ".join(names) or "none"
                raise ValueError(f"wrt={wrt!r}: the function has no argument named {item!r}; "
                                 f"its arguments are named: {known}")
            item = names.index(item)
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise TypeError(f"wrt must hold argument indices (ints) or names (strings), "
                            f"got {item!r}")
        if not 0 <= item < n_args:
            raise ValueError(f"wrt={wrt!r}: argument index {item} is out of range; the "
                             f"function was given {n_args} argument(s), indices 0 to "
                             f"{n_args - 1}")
        indices.append(int(item))
    if not indices:
        raise ValueError(f"wrt={wrt!r} chooses no argument: name at least one to differentiate")
    for index in indices if args is not None else ():
        value = args[index + n_bound]
        if not any(kind_of(leaf) == DIFF for _, leaf in flatten(value)):
            shown = names[index] if index < len(names) else f"argument {index}"
            what = f"an {value.dtype} array" if isinstance(value, np.ndarray) \
                else type(value).__name__
            raise TypeError(f"wrt={wrt!r} chooses {shown}, which holds no floats to "
                            f"differentiate (it is {what}); choose float arguments")
    return frozenset(index + n_bound for index in indices)


def loops_option(loops) -> str:
    if not isinstance(loops, str) or loops not in ("roll", "unroll"):
        raise ValueError(f"loops={loops!r}: use loops=\"roll\" (loops whose iterations do the "
                         "same work stay loops) or loops=\"unroll\" (straight-line code)")
    return loops


def has_aux_option(has_aux) -> bool:
    if has_aux is not True and has_aux is not False:
        raise TypeError(f"has_aux={has_aux!r}: pass True (f returns (loss, aux)) or False")
    return has_aux


def parameter_names(fn: Callable, count: int) -> list[str]:
    """The generated function's parameters: f's positional ones, and for
    `*args` one name per extra argument (`args_0`, `args_1`, skipping any
    name f already has)."""
    parameters = inspect.signature(fn).parameters
    names = []
    for parameter in parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            names.append(parameter.name)
        elif parameter.kind == parameter.VAR_POSITIONAL:
            index = 0
            while len(names) < count:
                name = f"{parameter.name}_{index}"
                if name not in parameters:
                    names.append(name)
                index += 1
    return names[:count]


def named_positional(fn: Callable) -> int:
    """How many leading parameters are named ones (not `*args`): an int passed
    to one may be a trip count read at run time (counts.py)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 0
    return sum(1 for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def check_call(fn: Callable, args: tuple, source) -> None:
    """The arguments must fit the function, as a call would check."""
    try:
        inspect.signature(fn, follow_wrapped=False).bind(*args)
    except TypeError as error:
        where = place(source.filename, source.first_line)
        hint = ""
        if not args:
            hint = (" ys.grad(f, *args) gives the value and gradient at args, not a "
                    "function (as jax.grad(f) would): call ys.grad(f, x), or "
                    "ys.simplegrad(f, x) for a reusable gradient function.")
        raise TypeError(f"{fn.__qualname__}() ({where}) cannot be called with "
                        f"{len(args)} argument(s): {error}.{hint}") from None


def refuse_unsupported(name: str, leaf) -> None:
    """Complex numbers (no single gradient convention), np.matrix (`*` is a
    matrix product), and arrays of Python objects or of records (no arithmetic
    to differentiate) are refused, naming the argument."""
    if isinstance(leaf, np.matrix):
        raise NoDiffRuleError(f"argument `{name}` is an np.matrix",
                              hint="Pass an np.ndarray (np.asarray(m)) and use `@`.")
    dtype = getattr(leaf, "dtype", None)
    if dtype is not None and dtype.hasobject:
        raise NoDiffRuleError(f"argument `{name}` is an array of Python objects (dtype object)",
                              hint="Pass a numeric array, e.g. `a.astype(float)`.")
    if dtype is not None and dtype.kind == "V":
        what = "a structured array" if dtype.names else "an array of raw bytes"
        raise NoDiffRuleError(f"argument `{name}` is {what} (dtype {dtype})",
                              hint="Pass each field as its own array (`a['x']`), or a dict of "
                                   "them, which yota-src differentiates field by field.")
    if np.iscomplexobj(leaf):
        raise NoDiffRuleError(f"argument `{name}` is complex ({np.result_type(leaf)})",
                              hint="yota-src differentiates real-valued code: pass the real "
                                   "and imaginary parts as separate float arguments.")


def generators_in(args: tuple) -> tuple:
    """The random generators the arguments hold (drawn from by the code)."""
    return tuple(leaf for arg in args for _, leaf in flatten(arg) if kind_of(leaf) == GENERATOR)
