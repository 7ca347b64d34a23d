"""The public API: grad, simplegrad, trace, update, check_grad.

Caching lives here and nowhere below: every other stage is a pure function
of its inputs.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import codegen, loader, rules
from .adjoint import backward, gradient_outputs
from .errors import ControlFlowChanged, NoDiffRuleError, SourceUnavailableError
from .passes import eliminate_dead_code, optimize
from .source import function_source, unwrap
from .structs import (
    ATTR,
    DATA,
    DIFF,
    ITEM,
    Signature,
    flatten,
    get_path,
    kind_of,
    rebuild,
    set_path,
    signature_key,
    user_path,
)
from .tape import Tape
from .traced import Traced, values_of
from .unroll import Unroller, inlinable


class GradientResult(Sequence):
    """`g[i]`: the gradient for positional argument i (array, float, path dict
    or None); `g.tape`: the forward Tape; `g.source`: the gradient's module."""

    def __init__(self, gradients: tuple, tape: Tape, source: str):
        self._gradients = tuple(gradients)
        self.tape = tape
        self.source = source

    def __getitem__(self, index):
        return self._gradients[index]

    def __len__(self) -> int:
        return len(self._gradients)

    def __repr__(self) -> str:
        return f"GradientResult({list(self._gradients)!r})"


class GradFunction:
    """A generated gradient: call it like the primal to get (value, d0, d1, ...)."""

    def __init__(self, function: Callable, source: str, bound_self=None, has_self=False):
        self._function = function
        self.source = source
        self._bound_self = bound_self
        self._has_self = has_self
        self.__name__ = function.__name__

    def __call__(self, *args):
        if not self._has_self:
            return self._function(*args)
        value, _, *gradients = self._function(self._bound_self, *args)
        return (value, *gradients)

    def save(self, path) -> None:
        """Write the module; importing it gives `grad_<name>`, needing only NumPy."""
        loader.write_atomic(path, self.source)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"<GradFunction {self.__name__}>"


@dataclass
class _Compiled:
    function: Callable
    source: str
    tape: Tape  # the forward tape


_cache: dict[Any, list[_Compiled]] = {}


def grad(f: Callable, *args, dynamic: bool = False, wrt=None) -> tuple[Any, GradientResult]:
    """The value of `f(*args)` and its gradient for every positional argument."""
    fn, full_args, has_self = _unbind(f, args)
    wrt_args = _wrt_indices(wrt, len(args), has_self)
    key = (fn, signature_key(full_args), wrt_args)
    variants = _cache.setdefault(key, [])
    for compiled in variants:
        try:
            result = compiled.function(*full_args)
            break
        except ControlFlowChanged:
            if not dynamic:
                raise
    else:
        compiled = _build(fn, full_args, wrt_args)
        variants.append(compiled)
        result = compiled.function(*full_args)
    value, *gradients = result
    return value, GradientResult(gradients[has_self:], compiled.tape, compiled.source)


def simplegrad(f: Callable, *args) -> GradFunction:
    """A gradient function for arguments like `args`, with readable source."""
    fn, full_args, has_self = _unbind(f, args)
    compiled = _build(fn, full_args, frozenset(range(len(full_args))))
    return GradFunction(compiled.function, compiled.source,
                        f.__self__ if has_self else None, has_self)


def trace(f: Callable, *args) -> tuple[Any, Tape]:
    """The value of `f(*args)` and the tape of primitive operations behind it."""
    fn, full_args, _ = _unbind(f, args)
    with _errors_at_user_lines():
        unroller, value, signature = _unroll(fn, full_args)
    tape = Tape(list(unroller.ops), unroller.refs(value), signature)
    return values_of(value), eliminate_dead_code(tape)


def diffrule(fn: Callable, wrt: str | None = None, expr: str | None = None):
    """Register the derivative of `fn`.

    `ys.diffrule(fn, "x", "y * (1 - y) * dy")`: the expression form, in which
    `y` is fn's result, `dy` the incoming gradient and fn's parameters its
    inputs. `@ys.diffrule(fn)` on a function `(dy, y, <fn's parameters>)`
    that assigns `d<param>`: the template form, as in `templates/`; a
    template with `**kw` receives the call's keyword arguments. Either way
    `fn` becomes a primitive: calls to it are recorded, not inlined.
    """
    if wrt is None and expr is None:
        return rules.adjoint(fn)
    if wrt is None or expr is None:
        raise TypeError("diffrule(fn, wrt, expr) needs both the parameter name and the expression")
    rules.expression_rule(fn, wrt, expr)
    return None


def update(m, gm, fn: Callable):
    """Apply `fn(old, grad)` at every path of `gm` (or to the array `m`)."""
    if not isinstance(gm, dict):
        new = fn(m, gm)
        if isinstance(m, np.ndarray) and m.flags.writeable and np.shape(new) == m.shape:
            m[...] = new
            return m
        return new
    for path, g in gm.items():
        steps = _steps(m, path)
        m = set_path(m, steps, fn(get_path(m, steps), g))
    return m


def check_grad(f: Callable, *args, rtol: float = 1e-5, atol: float = 1e-7) -> None:
    """Compare `grad(f, *args)` with central finite differences.

    Raises AssertionError with a report per argument where they disagree.
    """
    _, g = grad(f, *args, dynamic=True)
    problems = []
    for index, arg in enumerate(args):
        for path, leaf in flatten(arg):
            if kind_of(leaf) != DIFF:
                continue
            numeric = numerical_gradient(f, args, index, path)
            analytic = g[index] if not path and kind_of(arg) != "struct" else \
                (g[index] or {}).get(user_path(path), np.zeros_like(numeric))
            if not np.allclose(analytic, numeric, rtol=rtol, atol=atol):
                error = np.abs(np.asarray(analytic) - numeric)
                worst = np.unravel_index(np.argmax(error), np.shape(error)) if error.ndim else ()
                problems.append(
                    f"argument {index}{' path ' + str(user_path(path)) if path else ''}: "
                    f"max abs error {error.max():.3g} at {worst} "
                    f"(analytic {np.asarray(analytic)[worst]!r}, numeric {numeric[worst]!r})")
    if problems:
        raise AssertionError("gradient check failed:\n  " + "\n  ".join(problems))


def numerical_gradient(f: Callable, args: tuple, index: int, path: tuple = ()) -> np.ndarray:
    """Central finite differences of a scalar `f` for one leaf of one argument."""
    leaf = get_path(args[index], path)
    base = np.array(leaf, dtype=np.float64)
    out = np.zeros_like(base)
    step_scale = np.finfo(np.result_type(leaf)).eps ** (1 / 3)
    for position in np.ndindex(base.shape):
        step = step_scale * max(1.0, abs(base[position]))
        values = []
        for sign in (1, -1):
            moved = base.copy()
            moved[position] += sign * step
            new_leaf = _like(leaf, moved)
            new_arg = rebuild(args[index], lambda p, v: new_leaf if p == path else v)
            values.append(float(f(*args[:index], new_arg, *args[index + 1:])))
        out[position] = (values[0] - values[1]) / (2 * step)
    return out


def _like(leaf, values: np.ndarray):
    if isinstance(leaf, np.ndarray):
        return values.astype(leaf.dtype)
    return type(leaf)(values[()])


# --- building ---------------------------------------------------------------

def _unbind(f: Callable, args: tuple) -> tuple[Callable, tuple, bool]:
    """A bound method differentiates its function with `self` as argument 0."""
    if isinstance(f, types.MethodType):
        return f.__func__, (f.__self__,) + args, True
    return f, args, False


def _wrt_indices(wrt, n_args: int, has_self: bool) -> frozenset:
    if wrt is None:
        return frozenset(range(n_args + has_self))
    indices = [wrt] if isinstance(wrt, int) else list(wrt)
    return frozenset(i + has_self for i in indices) | ({0} if has_self else set())


def _unroll(fn: Callable, args: tuple):
    plain = unwrap(fn)
    if rules.is_primitive(plain) or not inlinable(plain):
        raise SourceUnavailableError(
            f"{getattr(plain, '__name__', plain)!s} is a primitive, not a Python function "
            "of yours with source to unroll",
            hint="Differentiate a function of your own that calls it, e.g. "
                 "`def f(x): return np.sum(x)`.")
    source = function_source(plain)
    signature = Signature.of(plain.__name__, _parameter_names(plain, len(args)), args,
                             module=getattr(plain, "__module__", "") or "",
                             qualname=plain.__qualname__, source_hash=source.source_hash)
    unroller = Unroller()

    def leaf_value(index):
        def traced(path, leaf):
            if kind_of(leaf) not in (DIFF, DATA):
                return leaf
            _refuse_unsupported(signature.leaf_expression(index, path), leaf)
            return unroller.input(index, path, leaf)
        return traced

    traced = tuple(rebuild(arg, leaf_value(i)) for i, arg in enumerate(args))
    return unroller, unroller.call_function(plain, traced, {}), signature


def _refuse_unsupported(name: str, leaf) -> None:
    """Complex numbers (no single gradient convention) and np.matrix (`*` is a
    matrix product) are refused, naming the argument."""
    if isinstance(leaf, np.matrix):
        raise NoDiffRuleError(f"argument `{name}` is an np.matrix",
                              hint="Pass an np.ndarray (np.asarray(m)) and use `@`.")
    if np.iscomplexobj(leaf):
        raise NoDiffRuleError(f"argument `{name}` is complex ({np.result_type(leaf)})",
                              hint="yota-src differentiates real-valued code: pass the real "
                                   "and imaginary parts as separate float arguments.")


def _parameter_names(fn: Callable, count: int) -> list[str]:
    names = []
    for parameter in inspect.signature(fn).parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            names.append(parameter.name)
        elif parameter.kind == parameter.VAR_POSITIONAL:
            names += [f"{parameter.name}_{i}" for i in range(count - len(names))]
    if len(names) < count:
        raise TypeError(f"{fn.__name__}() takes {len(names)} positional arguments "
                        f"but {count} were given")
    return names[:count]


def _build(fn: Callable, args: tuple, wrt_args: frozenset) -> _Compiled:
    with _errors_at_user_lines():
        unroller, value, signature = _unroll(fn, args)
        _require_scalar(value, signature)
        output = unroller.refs(value)
        forward = Tape(list(unroller.ops), output, signature)
        wrt = {op for op in forward.inputs if op.index in wrt_args and op.differentiable}
        grads = backward(unroller, value, wrt)
        gradients = gradient_outputs(unroller, signature, grads, wrt_args)
    tape = optimize(Tape(unroller.ops, (output,) + gradients, signature, len(forward.ops)))
    source, constants = codegen.generate(tape)
    function = loader.load(source, codegen.function_name(tape, "gradient"), constants)
    return _Compiled(function, source, eliminate_dead_code(forward))


class _errors_at_user_lines:  # noqa: N801 - used as a `with` statement
    """Re-raise errors from unrolling at the user's line, without unroller frames.

    A class rather than contextlib.contextmanager: that restores the original
    traceback when the same exception object is re-raised.
    """

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if not isinstance(error, Exception):
            return False
        location = getattr(error, "location", None) or getattr(error, "yota_location", None)
        if location is None:
            return False
        raise _at_line(error.with_traceback(None), location) from None


def _at_line(error: Exception, location) -> Exception:
    """`error` with a traceback whose one frame is the user's source line.

    The `raise` is compiled at that line, indented like it and exactly as
    wide (the name is underscores), so the traceback shows the line cleanly.
    """
    indent = len(location.line) - len(location.line.lstrip())
    name = "_" * max(len(location.line.strip()) - len("raise "), 1)
    if indent and location.lineno >= 2:
        text = "\n" * (location.lineno - 2) + "if 1:\n" + " " * indent + f"raise {name}"
    else:
        text = "\n" * (location.lineno - 1) + f"raise {name}"
    code = compile(text, location.filename, "exec")
    try:
        exec(code.replace(co_name="<unrolled by yota-src>"), {name: error})
    except Exception as raised:
        return error.with_traceback(raised.__traceback__.tb_next)
    return error  # pragma: no cover - the exec always raises


def _require_scalar(value, signature: Signature) -> None:
    shape = value.op.shape if isinstance(value, Traced) else np.shape(value)
    if shape != () or not np.issubdtype(np.result_type(values_of(value)), np.number):
        raise ValueError(f"{signature.function_name}() must return a scalar to be "
                         f"differentiated; it returned {type(values_of(value)).__name__} "
                         f"of shape {shape}")


def _steps(root, path: tuple) -> tuple:
    """A user path (keys only) -> steps that say attribute or item."""
    steps, node = [], root
    for key in path:
        is_item = isinstance(node, (dict, list)) or (
            isinstance(node, tuple) and not (hasattr(node, "_fields") and isinstance(key, str)))
        steps.append((ITEM if is_item else ATTR, key))
        node = node[key] if is_item else getattr(node, key)
    return tuple(steps)


__all__ = ["grad", "simplegrad", "trace", "update", "check_grad", "diffrule", "GradientResult",
           "GradFunction", "numerical_gradient"]
