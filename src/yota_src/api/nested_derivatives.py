"""Derivatives inside a function that is itself differentiated.

`ys.grad(inner, w)` called in `outer`, a `GradFunction` or a vjp pullback
called there: the inner derivative is generated for the example values the
trace has at that point, and its generated code (plain NumPy, registered
with its source) is unrolled into the outer trace like any helper of the
user's, so the outer derivative differentiates it again and its module holds
the inner gradient's code inlined, with no import of yota_src. The inner
code's guards hold at the outer example (it was generated there), its
decisions on data become the outer code's guards, and what the inner trace
read from outside (globals, closure cells) is part of the outer
specialisation.
"""

from __future__ import annotations

import copy
import types

from yota_src.api.gradients import grad, simplegrad, vjp
from yota_src.api.results import GradFunction, Pullback
from yota_src.core.values import kind_of
from yota_src.errors import UnsupportedSyntaxError
from yota_src.tracing import Unroller, UserFunction
from yota_src.tracing.traced import Traced


def install() -> None:
    """Make the interpreter hand yota-src's own functions here: the one way
    the trace stage reaches the API, which it cannot import."""
    Unroller.nested_derivative = call


def call(unroller, fn, args: tuple, kwargs: dict, node, frame):
    """The traced result of one of yota-src's own functions called while
    unrolling, or NotImplemented where it has no meaning inside a trace."""
    if fn in (grad, simplegrad, vjp) and args and isinstance(args[0], UserFunction):
        raise UnsupportedSyntaxError(
            f"ys.{fn.__name__}() of a function defined inside the function being differentiated",
            unroller.location_of(node, frame),
            hint=f"Define {args[0].__name__} outside it (at module level), taking what it "
                 "reads from the outer function as arguments.")
    if fn is grad:
        f, *rest = args
        options = {key: value for key, value in kwargs.items() if key != "dynamic"}
        inner = simplegrad(f, *_concrete(tuple(rest)), **options)
        value, gradients = _inline(unroller, inner, inner._bound + tuple(rest), node, frame)
        return value, gradients[len(inner._bound):]
    if fn is simplegrad:
        f, *rest = args
        return simplegrad(f, *_concrete(tuple(rest)), **kwargs)
    if fn is vjp:
        f, *rest = args
        _, pullback = vjp(f, *_concrete(tuple(rest)), **kwargs)
        value = unroller.calls.inline_function(f, tuple(rest), {}, node, frame)
        # the pullback reads the traced arguments, not the example values it was made at
        pullback._bound = pullback._bound[:pullback._n_bound] + tuple(rest)
        return value, pullback
    if isinstance(fn, Pullback):
        if kwargs or len(args) != 1:
            return NotImplemented
        _, gradients = _inline(unroller, fn, fn._bound + tuple(args), node, frame)
        return gradients[fn._n_bound:]
    if isinstance(fn, GradFunction):
        if kwargs:
            return NotImplemented
        value, gradients = _inline(unroller, fn, fn._bound + tuple(args), node, frame)
        return (value, *gradients[len(fn._bound):])
    return NotImplemented


def _inline(unroller, inner, full: tuple, node, frame) -> tuple:
    """`(value, gradients)`: the generated code of `inner` unrolled on all its
    arguments; what the inner trace read from outside joins the outer one's."""
    inner.require_fresh()
    for index, dependency in enumerate(inner._dependencies):  # the outer code folds them too
        unroller.outside_reads.dependencies.setdefault(("inner", id(inner), index), dependency)
    value, *gradients = unroller.calls.inline_function(inner._function, full, {}, node, frame)
    return value, tuple(gradients)


def _concrete(value):
    """The example values inside arguments that hold traced ones, objects
    of the user's copied with their fields' values."""
    if isinstance(value, Traced):
        return value.value
    if type(value) in (tuple, list):
        return type(value)(_concrete(item) for item in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)._make(_concrete(item) for item in value)
    if type(value) is dict:
        return {key: _concrete(item) for key, item in value.items()}
    if isinstance(value, (type, types.ModuleType, types.FunctionType)) \
            or not hasattr(value, "__dict__") or kind_of(value) != "struct":
        return value
    clone = copy.copy(value)
    clone.__dict__.update({key: _concrete(item) for key, item in vars(value).items()})
    return clone
