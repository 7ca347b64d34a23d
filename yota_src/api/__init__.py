"""The public API: grad, simplegrad, trace, update, check_grad.

Caching lives here and nowhere below: every other stage is a pure function
of its inputs.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import os
import sys
import threading
import types
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from yota_src import codegen, passes
from yota_src.api import nested_derivatives, transforms
from yota_src.api.cache import GradientCache
from yota_src.codegen import loader
from yota_src.core import registry
from yota_src.core.primitives import display_name, is_output
from yota_src.core.values import (
    ATTR,
    DATA,
    DIFF,
    GENERATOR,
    ITEM,
    flatten,
    get_path,
    is_array,
    kind_of,
    rebuild,
    set_path,
    user_path,
)
from yota_src.differentiate import cotangents
from yota_src.differentiate.sweep import differentiate
from yota_src.errors import (
    AT_USER_LINE,
    ControlFlowChanged,
    NoDiffRuleError,
    SignatureMismatch,
    SourceUnavailableError,
    meant_for_user,
    without_internal_frames,
)
from yota_src.ir import display
from yota_src.ir.signature import Signature, signature_key
from yota_src.ir.specialisation import all_hold, describe_outside, first_stale
from yota_src.ir.tape import Call, Tape
from yota_src.passes import eliminate_dead_code, optimize, optimize_forward
from yota_src.trace import Unroller, array_library, counts, inlinable, random_states, rewind
from yota_src.trace.source import function_source, unwrap
from yota_src.trace.traced import Traced, values_of


def _user_facing(function: Callable) -> Callable:
    """The public entry point `function`, raising the errors meant for the
    user (errors.meant_for_user) without yota-src's frames: what they read is
    their call, their line where the error has one, and what to do. Its one
    frame is named after `function` (`in simplegrad`); IPython and pytest
    hide even that (`__tracebackhide__`)."""

    def entry(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841 - read by IPython and pytest
        try:
            return function(*args, **kwargs)
        except Exception as error:
            if not meant_for_user(error):
                raise
            raise without_internal_frames(error) from error.__cause__  # yota-src's frames left out
    names = {"co_name": function.__name__}
    if sys.version_info >= (3, 11):
        names["co_qualname"] = function.__qualname__
    entry.__code__ = entry.__code__.replace(**names)
    return functools.wraps(function)(entry)


class GradientResult(Sequence):
    """The gradients `grad` returns, one per positional argument of `f`.

    `g[i]` is the gradient for argument `i`: an array or float shaped like
    it; a dict `{path: gradient}` for a struct (an object with attributes, a
    dataclass, namedtuple, dict, list or tuple), a path being a tuple of
    attribute names, keys and indices such as `('layers', 0, 'W')`; None for
    arguments with nothing to differentiate (ints, bools, strings, None,
    integer arrays) and for those left out of `wrt`. It unpacks like a tuple
    (`dW, db = g`) and is a `collections.abc.Sequence`.

    Holds references only: the gradients of this call, and the cached code
    they came from (`tape`, `source`). Nothing is computed on access; `g[i]`
    raises IndexError past the last argument, as a tuple does.
    In Jupyter it shows what each gradient is over the highlighted source.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(params, x):
        ...     return np.sum(params["w"] * x)
        >>> _, g = ys.grad(loss, {"w": np.ones(2)}, np.array([3.0, 4.0]))
        >>> g[0]
        {('w',): array([3., 4.])}
        >>> print(g[1])
        [1. 1.]
    """

    __slots__ = ("_gradients", "_compiled")  # made on every ys.grad call: kept cheap

    def __init__(self, gradients: tuple, compiled: _Compiled):
        self._gradients = gradients
        self._compiled = compiled

    @property
    def tape(self) -> Tape:
        """The forward `Tape` the gradient was generated from: one primitive
        operation per line (`print(g.tape)`); shared with the cache."""
        return self._compiled.tape

    @property
    def source(self) -> str:
        """The generated gradient module's Python source, as `simplegrad`
        would write it for these arguments."""
        return self._compiled.source

    def __getitem__(self, index):
        return self._gradients[index]

    def __len__(self) -> int:
        return len(self._gradients)

    def __iter__(self):  # unpacking, without Sequence's __getitem__ until IndexError
        return iter(self._gradients)

    def __repr__(self) -> str:
        return f"GradientResult({list(self._gradients)!r})"

    def _caption(self) -> str:
        return "GradientResult: " + "; ".join(
            f"g[{index}] {display.described(gradient)}"
            for index, gradient in enumerate(self._gradients))

    def _repr_html_(self) -> str:
        """Jupyter: what each gradient is, over the gradient module's source."""
        return display.source_html(self.source, self._caption())

    def _repr_markdown_(self) -> str:
        return display.source_markdown(self.source, self._caption())


@dataclass
class _Compiled:
    function: Callable
    source: str
    tape: Tape  # the forward tape
    dependencies: tuple  # what was read from outside the arguments (specialisation.py)
    # the random generators it draws from, but those passed in (each call's own)
    generators: tuple = ()
    draws: bool = False  # does it draw at all (then each call's generators are found)
    # it prints or warns, and logs nothing: its output can be held back while it
    # may turn out not to apply (a logging handler's stream cannot, and holding
    # the rest back would reorder the two)
    holds_output: bool = False
    value: Any = None  # the example's value (vjp returns it)
    generated_from: Tape | None = None  # the optimised tape the code was written from

    def __post_init__(self):
        self.fresh = all_hold(self.dependencies)  # asked on every cache hit


class GradFunction:
    """A generated gradient function, as `simplegrad` and `derivative` return.

    `df(*args)`, called like the primal, returns `(value, d0, d1, ...)`: one
    gradient per positional argument, with `grad`'s conventions (arrays,
    path dicts for structs, None). `df.source` and `str(df)` are the module's
    Python source; `df.save(path)` writes it as a module that needs only
    NumPy. In Jupyter it shows as highlighted source.

    It caches nothing: the code was generated once, when it was made, and
    every call runs it. Calls raise `errors.SignatureMismatch` for
    arguments of other shapes, dtypes or non-array values than it was
    generated for, and once something it folded from outside its arguments
    (a global, a closure variable, a default) has changed;
    `errors.ControlFlowChanged` where a data-dependent branch goes the other
    way. Both are ValueErrors.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, x):
        ...     return np.sum((w * x) ** 2)
        >>> df = ys.simplegrad(loss, np.ones(2), np.ones(2))
        >>> value, dw, dx = df(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        >>> print(value, dw, dx)
        13.0 [18.  4.] [6. 8.]
        >>> df(np.ones(3), np.ones(3))
        Traceback (most recent call last):
        ...
        yota_src.errors.SignatureMismatch: grad_loss was generated for ...
    """

    def __init__(self, compiled: _Compiled, bound: tuple = ()):
        self._function = compiled.function
        self._dependencies = compiled.dependencies
        self._fresh = compiled.fresh
        self.source = compiled.source
        self.gradient_tape = compiled.generated_from
        """The tape the module was generated from: the forward ops, then the
        reverse pass's, optimised (`print(df.gradient_tape)`, `.to_dot()`)."""
        self._bound = bound
        self.__name__ = compiled.function.__name__
        signature = compiled.tape.signature
        # The generated code knows a class of the user's by its qualified name;
        # in-process, the very class is checked (a class redefined or reloaded
        # under the same name has other methods).
        self._classes = [(node.index, node.path, node.type, signature.leaf_expression(
            node.index, node.path)) for node in signature.containers
            if node.type.__module__ not in ("builtins", "collections")]

    def __call__(self, *args) -> tuple:
        """`(value, d0, d1, ...)` at `args` (see the class)."""
        if not self._bound:
            return self._run(args)
        value, *gradients = self._run(self._bound + args)
        return (value, *gradients[len(self._bound):])

    def _run(self, full: tuple):
        """The generated function on all its arguments, once nothing it
        folded from outside has changed and its classes are the very ones."""
        self.require_fresh()
        for index, path, cls, expression in self._classes:
            try:
                found = type(full[index] if not path else get_path(full[index], path))
            except (AttributeError, LookupError, TypeError, IndexError):
                continue  # the generated code's own guards name what is missing
            if found is not cls and found.__qualname__ == cls.__qualname__:
                raise SignatureMismatch(
                    f"{self.__name__} was generated for {expression} of the class "
                    f"{cls.__module__}.{cls.__qualname__}; this one is another class of the "
                    "same name (redefined or reloaded?). Generate the gradient again.")
        return self._function(*full)

    def require_fresh(self) -> None:
        """Raise SignatureMismatch where something the code folded from outside
        its arguments (a global, a closure variable, a default) has changed."""
        stale = None if self._fresh() else first_stale(self._dependencies)
        if stale is not None:
            raise SignatureMismatch(
                f"{self.__name__} was generated when {stale.what} was {stale.shown}; it has "
                "changed since. Generate the gradient again (ys.simplegrad, or `yota-src gen`).")

    def save(self, path: str | os.PathLike) -> None:
        """Write the module to `path`, atomically (a reader never sees half a
        file; a symlink is written through). Importing it gives
        `grad_<name>`, with the primal's parameters, needing only NumPy.

        Raises `errors.UnsaveableError` where the code compares an argument
        with a live object (a lambda, a local function) that no file can hold.

        Example: `df.save("grad_loss.py")`, then `from grad_loss import grad_loss`.
        """
        loader.require_saveable(self._function)
        loader.write_atomic(path, self.source)

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"<GradFunction {self.__name__}>"

    def _repr_html_(self) -> str:
        """Jupyter: the module's source, highlighted (display.py)."""
        return display.source_html(self.source)

    def _repr_markdown_(self) -> str:
        return display.source_markdown(self.source)


class Pullback(GradFunction):
    """The pullback `vjp` returns: `pullback(dvalue)` is the gradient of
    `sum(value * dvalue)` for each positional argument of f, at the arguments
    vjp was given (conventions as `grad`), as a tuple. `dvalue` is shaped like
    the value: a float array or float for each of its float leaves, None for
    the others (integers, strings).

    `.source` is a module whose `vjp_<name>(<f's parameters>, dout)` returns
    `(value, gradient per argument...)`; `.save(path)` writes it. It caches
    nothing and keeps the arguments vjp was given; calls raise as a
    `GradFunction`'s do.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> value, pullback = ys.vjp(lambda x: x ** 2, np.array([1.0, 2.0]))
        >>> pullback(np.array([1.0, 10.0]))
        (array([ 2., 40.]),)
    """

    def __init__(self, compiled: _Compiled, args: tuple, n_bound: int):
        super().__init__(compiled, args)
        self._n_bound = n_bound

    def __call__(self, dvalue) -> tuple:
        """One gradient per positional argument of f (see the class)."""
        _, *gradients = self._run(self._bound + (dvalue,))
        return tuple(gradients[self._n_bound:])

    def __repr__(self) -> str:
        return f"<Pullback {self.__name__}>"


@_user_facing
def vjp(f: Callable, *args, wrt: int | str | Sequence[int | str] | None = None,
        loops: str = "roll", **keywords) -> tuple[Any, Pullback]:
    """The value of `f(*args)` and its vector-Jacobian product at `args`.

    Returns `(value, pullback)`: the value may be an array, a float, or
    tuples, lists and dicts of them; `pullback(dvalue)` (a `Pullback`) gives
    one gradient per positional argument. `wrt` and `loops` are as for
    `simplegrad`.

    Caches nothing: each call generates the code again (keep the pullback
    to reuse it).

    Raises:

    - `errors.SourceUnavailableError`, `errors.UnsupportedSyntaxError`,
      `errors.NoDiffRuleError`, `errors.MutationError`: as `grad`;
    - ValueError where the value holds no float that depends on the
      arguments, or holds an object the generated code cannot return;
    - TypeError for keyword arguments meant for `f`, or a `wrt` of the
      wrong type; ValueError for a `wrt` naming no argument of `f`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return {"sq": x ** 2, "sum": np.sum(x)}
        >>> value, pullback = ys.vjp(f, np.array([1.0, 2.0]))
        >>> pullback({"sq": np.array([1.0, 1.0]), "sum": 1.0})
        (array([3., 5.]),)
    """
    _refuse_keywords("vjp", keywords)
    fn, full_args, n_bound = _target(f, args)
    compiled = _build(fn, full_args, _wrt_indices(wrt, len(args), n_bound, fn, full_args),
                      _loops_option(loops), pullback=True)
    return compiled.value, Pullback(compiled, full_args, n_bound)


@_user_facing
def hvp(f: Callable, x, v, loops: str = "roll") -> Any:
    """The Hessian of the scalar `f` at `x` times `v`, without forming the
    Hessian: the gradient of `sum(grad(f)(x) * v)` (reverse over reverse).

    Returns an array or float shaped like `x`. Caches nothing: each call
    generates the product's code again; `derivative(f, x, v,
    transform="hvp")` gives it to keep.

    Raises `errors.NoDiffRuleError` naming a primitive whose template is not
    itself differentiable, ValueError where `v` is not a real array or float
    of `x`'s shape, and the errors `grad` raises for `f`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return np.sum(x ** 3)
        >>> ys.hvp(f, np.array([1.0, 2.0]), np.array([1.0, 0.0]))
        array([6., 0.])
    """
    v = _shaped_like(x, v, "v")
    return derivative(f, x, v, transform="hvp", loops=loops)(x, v)


def _shaped_like(arg, tangent, what: str):
    """`tangent` as a value of `arg`'s type, shape and dtype: a vector for H v
    or a tangent must be shaped as its argument (broadcasting would give
    another product), and the generated code is specialised to its type."""
    tangent = array_library.to_host(tangent)
    if np.shape(tangent) != np.shape(arg) or not isinstance(
            tangent, (int, float, np.number, np.ndarray)) or np.iscomplexobj(tangent):
        raise ValueError(f"{what} must be a real array or float of the shape of its argument, "
                         f"{np.shape(arg)}; got {type(tangent).__name__} of shape "
                         f"{np.shape(tangent)}")
    if array_library.is_ndarray(arg):
        return array_library.like(arg, np.asarray(tangent, dtype=arg.dtype))
    if isinstance(arg, np.generic):
        return arg.dtype.type(tangent)
    return float(tangent)


@_user_facing
def hessian(f: Callable, x, loops: str = "roll") -> np.ndarray:
    """The dense Hessian of the scalar `f` at the array or float `x`.

    Returns an array of shape `x.shape + x.shape`: one generated
    Hessian-vector product, run on each unit vector (for small sizes, as
    autograd and JAX do). Caches nothing. Raises as `hvp`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return x[0] * x[1] + x[0] ** 2
        >>> ys.hessian(f, np.array([1.0, 2.0]))
        array([[2., 1.],
               [1., 0.]])
    """
    product = derivative(f, x, x, transform="hvp", loops=loops)
    return _stacked([product(x, unit) for unit in _units(x)], np.shape(x), np.shape(x), x)


@_user_facing
def jvp(f: Callable, args: Sequence, tangents: Sequence,
        loops: str = "roll") -> tuple[Any, Any]:
    """Forward mode: `f(*args)` and its Jacobian times `tangents`.

    Returns `(value, tangent_out)`. `tangents` holds one array or float per
    float argument of `f`, in order. It is exact, from the same adjoint
    templates as `grad`: the pullback transposed. Caches nothing: each call
    generates the code again; `derivative(f, *args, *tangents,
    transform="jvp")` gives it to keep.

    Raises TypeError for a wrong number of tangents, ValueError for a
    tangent not shaped like its argument or a value that is not one array
    or float (`vjp` takes structured values), and the errors `grad` raises.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> value, tangent = ys.jvp(lambda x: x ** 2, (np.array([1.0, 2.0]),),
        ...                         (np.array([1.0, 1.0]),))
        >>> tangent
        array([2., 4.])
    """
    args, tangents = tuple(args), tuple(tangents)
    floats = [arg for arg in args if cotangents.is_float(arg)]
    if len(tangents) != len(floats):
        raise TypeError(f"ys.jvp takes one tangent per float argument ({len(floats)} here); "
                        f"got {len(tangents)}")
    tangents = tuple(_shaped_like(arg, tangent, f"the tangent of argument {index}")
                     for index, (arg, tangent) in enumerate(zip(floats, tangents)))
    return derivative(f, *args, *tangents, transform="jvp", loops=loops)(*args, *tangents)


@_user_facing
def jacobian(f: Callable, x, mode: str = "auto", loops: str = "roll") -> np.ndarray:
    """The dense Jacobian of `f` (array or float valued) at the array or float `x`.

    Returns an array of shape `value.shape + x.shape`: by rows from one
    pullback (`mode="rev"`), by columns from one Jacobian-vector product
    (`"fwd"`), or whichever runs fewer times (`"auto"`). Both are exact and
    agree. Caches nothing.

    Raises ValueError for another `mode` or a value that is not one array or
    float, and the errors `vjp` raises.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> ys.jacobian(lambda x: x[::-1] * 2, np.array([1.0, 2.0]))
        array([[0., 2.],
               [2., 0.]])
    """
    if mode not in ("auto", "rev", "fwd"):
        raise ValueError(f"mode={mode!r}: use \"rev\", \"fwd\" or \"auto\"")
    value, pullback = vjp(f, x, loops=loops)
    _require_single(value, "ys.jacobian needs f")
    if mode == "auto":
        mode = "rev" if np.size(value) <= np.size(x) else "fwd"
    if mode == "rev":
        rows = [pullback(unit)[0] for unit in _units(value)]
        return _stacked(rows, np.shape(value), np.shape(x), x)
    product = derivative(f, x, x, transform="jvp", loops=loops)
    columns = [product(x, unit)[1] for unit in _units(x)]
    jac = _stacked(columns, np.shape(x), np.shape(value))  # x.shape + value.shape
    n_in = np.ndim(x)
    return array_library.like(x, np.transpose(jac, tuple(range(n_in, jac.ndim))
                                              + tuple(range(n_in))))


def _require_single(value, who: str) -> None:
    """A Jacobian is of one array or float; vjp takes structured values."""
    if not array_library.is_ndarray(value) and not cotangents.is_float(value):
        raise ValueError(f"{who} to return one array or float; it returned a "
                         f"{type(value).__name__} (ys.vjp takes structured values)")


def _units(x):
    """Each unit vector of x's shape, dtype and library (a float for a float)."""
    size = np.size(x)
    for index in range(size):
        dtype = x.dtype if array_library.is_ndarray(x) or isinstance(x, np.generic) \
            else np.float64
        unit = np.zeros(size, dtype=dtype)
        unit[index] = 1
        yield array_library.like(x, unit.reshape(np.shape(x))) if array_library.is_ndarray(x) else \
            _shaped_like(x, unit[0], "x")


def _stacked(items: list, outer: tuple, inner: tuple, like=None):
    """The items as one array of shape `outer + inner`, in `like`'s library."""
    items = [array_library.to_host(item) for item in items]
    stacked = np.asarray(items, dtype=np.result_type(*items) if items else float).reshape(
        outer + inner)
    return array_library.like(like, stacked)


@_user_facing
def derivative(f: Callable, *args, transform: str = "grad",
               wrt: int | str | Sequence[int | str] | None = None,
               loops: str = "roll") -> GradFunction:
    """The generated code of a derivative of `f`, as a `GradFunction` with
    `.source` and `.save(path)` like `simplegrad`'s:

    - `"grad"`: `simplegrad(f, *args, wrt=wrt)`;
    - `"hvp"`: `args` are `(x, v)`; `hvp_<name>(x, v)` returns `H v`;
    - `"jvp"`: `args` are f's arguments, then one tangent per float argument;
      `jvp_<name>(*args, *tangents)` returns `(value, tangent_out)`.

    Caches nothing: each call generates the code.

    Raises `errors.NoDiffRuleError` where a template on the way is not
    differentiable (second order), ValueError for an unknown `transform` or
    `wrt` with another transform than `"grad"`, TypeError for arguments that
    do not fit the transform or a callable that is not a plain function,
    and the errors `grad` raises.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return np.sum(x ** 3)
        >>> product = ys.derivative(f, np.ones(2), np.ones(2), transform="hvp")
        >>> product(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
        array([6., 0.])
    """
    if transform == "grad":
        return simplegrad(f, *args, wrt=wrt, loops=loops)
    if transform not in ("hvp", "jvp"):
        raise ValueError(f"transform={transform!r}: use \"grad\", \"hvp\" or \"jvp\" "
                         "(ys.vjp gives the vector-Jacobian product)")
    if wrt is not None:
        raise ValueError(f"wrt is for transform=\"grad\"; {transform} takes the arguments "
                         "it differentiates")
    fn, full_args, n_bound = _target(f, args)
    if n_bound or not isinstance(fn, types.FunctionType):
        raise TypeError(f"ys.derivative(transform={transform!r}) takes a plain function "
                        f"(def or lambda) of the user's; got {display_name(f)}")
    params = _parameter_names(fn, _named_positional(fn))
    if transform == "hvp":
        if len(args) != 2:
            raise TypeError("transform=\"hvp\" takes (x, v): the point and the vector")
        wrapper = transforms.hvp_wrapper(fn, params[0] if params else "x")
        compiled = _build(wrapper, args, frozenset({0}), _loops_option(loops), kind="hvp")
        return GradFunction(compiled)
    floats = [index for index, arg in enumerate(args[:len(params)]) if cotangents.is_float(arg)]
    primals = args[:len(args) - len(floats)]
    if len(primals) != len(params) or not floats:
        raise TypeError(f"transform=\"jvp\" takes f's {len(params)} arguments, then one "
                        "tangent per float argument among them")
    value = vjp(fn, *primals, loops=loops)[0]
    _require_single(value, f"ys.jvp needs {display_name(f)}")
    wrapper = transforms.jvp_wrapper(fn, params, floats)
    compiled = _build(wrapper, (*args, cotangents.one_like(value)), frozenset({len(args)}),
                      _loops_option(loops), kind="jvp")
    return GradFunction(compiled)


_cache = GradientCache()
_checks = _cache.checks  # what every call reads, bound once
_FUNCTION = types.FunctionType
_building: dict[Any, threading.Lock] = {}  # one build at a time per cache key


@_user_facing
def grad(f: Callable, *args, dynamic: bool = False,
         wrt: int | str | Sequence[int | str] | None = None, loops: str = "roll",
         has_aux: bool = False, **keywords) -> tuple[Any, GradientResult]:
    """The value of the scalar `f(*args)` and its gradient for every
    positional argument.

    Returns `(value, g)`, `g` a `GradientResult`: `g[i]` is the gradient for
    argument `i` (an array or float shaped like it, a `{path: gradient}`
    dict for a struct, None where there is nothing to differentiate). `wrt`
    picks the arguments to differentiate, by position or parameter name;
    `loops` is as for `simplegrad`. With `has_aux`, `f` returns `(loss,
    aux)`, the value is that pair and `aux` comes back as computed. With
    `dynamic=True` a decision taken from the data (a branch, a shape, a
    random draw) may go another way than when the code was generated: that
    path is generated and cached too.

    Caches the generated gradient for the life of the process, per function
    and specialisation: the arguments' types, shapes and dtypes, the values
    of non-array arguments, `wrt`, `loops` and `has_aux`, and what the trace
    read from outside the arguments (globals, closure variables, defaults,
    class attributes, imported modules). A later call with the same kind of
    arguments runs the cached code only; rebinding something it read
    generates again, never answering from stale code. Its large
    temporaries are kept in work arrays between calls. A rule registered
    with `diffrule` after a gradient was cached does not change it.

    Raises:

    - `errors.SourceUnavailableError` where `f` has no readable source (a
      builtin, `exec`, `python -c`, the interactive prompt before Python 3.13);
    - `errors.UnsupportedSyntaxError`, `errors.NoDiffRuleError`,
      `errors.MutationError` for what cannot be differentiated, naming the
      user's file and line;
    - `errors.ControlFlowChanged` where the data takes a decision the other
      way than when the code was generated (without `dynamic`);
    - ValueError where `f` returns no scalar (a float or a size-1 array), or
      no `(loss, aux)` pair with `has_aux`;
    - TypeError for keyword arguments meant for `f`, a `wrt` of the wrong
      type or choosing an argument without floats, or arguments `f` cannot
      be called with; ValueError for a `wrt` naming no argument of `f`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, x):
        ...     return np.sum((w * x) ** 2)
        >>> value, g = ys.grad(loss, np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        >>> print(value, g[0], g[1])
        13.0 [18.  4.] [6. 8.]
    """
    if keywords:
        _refuse_keywords("grad", keywords)
    if type(f) is _FUNCTION:
        fn, full_args, n_bound = f, args, 0
    else:
        fn, full_args, n_bound = _target(f, args)
    options = _DEFAULT_OPTIONS if n_bound == 0 and wrt is None and loops == "roll" \
        and has_aux is False else (n_bound, _hashable_wrt(wrt), loops, _has_aux(has_aux))
    variants = None
    for check, found in _checks.get(fn, ()):  # the first check the arguments pass
        if check(options, full_args):
            variants = found
            break
    skipped = None
    if variants is not None and len(variants) == 1:  # the common hit, checked as _from_cache does
        compiled = variants[0]
        if not compiled.draws and not (dynamic and compiled.holds_output) and compiled.fresh():
            try:
                result = compiled.function(*full_args)
                return result[0], GradientResult(result[n_bound + 1:], compiled)
            except ControlFlowChanged as error:
                if not dynamic:
                    raise _other_path(error) from None
                skipped = id(compiled)
    tried = {skipped} if skipped is not None else set()
    wrt_args = _wrt_indices(wrt, len(args), n_bound, fn, full_args)
    loops = _loops_option(loops)
    has_aux = _has_aux(has_aux)
    key = (fn, signature_key(full_args), wrt_args, loops, has_aux)
    compiled, result = _from_cache(key, full_args, dynamic, tried)
    if compiled is None:
        with _cache.lock:
            building = _building.setdefault(key, threading.RLock())
        with building:  # concurrent first calls: one traces, the others use its result
            compiled, result = _from_cache(key, full_args, dynamic, tried)
            if compiled is None:
                compiled = _build_once(key, fn, full_args, wrt_args, loops, has_aux)
                with _cache.lock:  # first: a rule the code calls may ask for it again
                    _cache.variants.setdefault(key, []).append(compiled)
                result = compiled.function(*full_args)
    if variants is None and options[1] is not _NO_KEY:
        _cache.remember(fn, options, full_args, key)
    return result[0], GradientResult(result[n_bound + 1:], compiled)


_tracing = threading.local()  # the cache keys this thread is generating code for


def _build_once(key, fn: Callable, args: tuple, wrt_args, loops: str, has_aux: bool):
    """`_build` for ys.grad, refusing a request for the very gradient being
    generated (a rule that calls ys.grad of the function it is used in runs
    while that function is traced), which would trace it again without end."""
    keys = _tracing.__dict__.setdefault("keys", set())
    if key in keys:
        raise RecursionError(
            f"ys.grad({display_name(fn)}, ...) was called while its gradient for these "
            "arguments was being generated (from a rule or a function it calls): call it "
            "once before, so that the code is ready, or differentiate a function that does "
            "not call itself this way")
    keys.add(key)
    try:
        return _build(fn, args, wrt_args, loops, work_arrays=True, has_aux=has_aux)
    finally:
        keys.discard(key)


_NO_KEY = object()
_DEFAULT_OPTIONS = (0, None, "roll", False)  # one object, so that checks test identity first


def _hashable_wrt(wrt):
    """`wrt` as part of a cache check (a list of names is as good as a tuple),
    or _NO_KEY for one that is not made of indices and names."""
    if wrt is None or type(wrt) in (int, str):
        return wrt
    if type(wrt) in (list, tuple) and all(type(item) in (int, str) for item in wrt):
        return tuple(wrt)
    return _NO_KEY


def _other_path(error: ControlFlowChanged) -> ControlFlowChanged:
    return ControlFlowChanged(f"{error}. ys.grad(..., dynamic=True) traces and caches each "
                              "path instead.")


def _from_cache(key, args: tuple, dynamic: bool, tried: set):
    """(compiled, result) from a cached variant that still applies, or (None, None).

    A variant whose outside facts (globals, closure cells, defaults) changed
    is dropped; one whose data-dependent branch went the other way is skipped
    when `dynamic`, and raises otherwise. `tried` holds the variants already
    run for this call, which are not run again.
    """
    with _cache.lock:
        variants = [each for each in _cache.variants.get(key, ()) if id(each) not in tried]
    for compiled in variants:
        tried.add(id(compiled))
        if not compiled.fresh():
            with _cache.lock:
                if compiled in _cache.variants.get(key, ()):
                    _cache.variants[key].remove(compiled)
            continue
        states = random_states(compiled.generators + _generators_in(args)) \
            if compiled.draws else {}
        try:
            if dynamic and compiled.holds_output:
                return compiled, _held_output(compiled.function, args)
            return compiled, compiled.function(*args)
        except ControlFlowChanged as error:
            if not dynamic:
                raise _other_path(error) from None
            rewind(states)  # the variant that applies draws what one call of f would
    return None, None


def _generators_in(args: tuple) -> tuple:
    """The random generators the arguments hold (drawn from by the code)."""
    return tuple(leaf for arg in args for _, leaf in flatten(arg) if kind_of(leaf) == GENERATOR)


def _holds_output(tape: Tape) -> bool:
    shown = [op.fn for op in tape.ops if isinstance(op, Call) and is_output(op.fn)]
    return bool(shown) and all(fn is print or fn is warnings.warn for fn in shown)


def _held_output(function: Callable, args: tuple):
    """Run a variant that may turn out not to apply, holding back what it
    prints or warns until it has: a call whose data goes another way shows
    its output once, from the variant that applies. (Logging handlers keep
    their own streams, which cannot be held back.)"""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            return function(*args)
    except ControlFlowChanged:
        stdout, stderr = io.StringIO(), io.StringIO()  # the output of a path not taken
        raise
    finally:
        sys.stdout.write(stdout.getvalue())
        sys.stderr.write(stderr.getvalue())


@_user_facing
def simplegrad(f: Callable, *args, wrt: int | str | Sequence[int | str] | None = None,
               loops: str = "roll", has_aux: bool = False, **keywords) -> GradFunction:
    """A gradient function for arguments like `args`, with readable source.

    Returns a `GradFunction` `df`: `df(*args)` gives `(value, d0, d1, ...)`
    (`((loss, aux), d0, ...)` with `has_aux`), `df.source` the module and
    `df.save(path)` writes it. `wrt` picks the arguments that get gradient
    code, by position or parameter name; the others give None.
    `loops="roll"` writes a run of iterations that do the same work as a
    loop (and its reversed loop in the backward pass); `"unroll"` writes
    straight-line code.

    Caches nothing: each call generates the code (`grad` is the cached
    form). The code is specialised to the shapes, dtypes and non-array
    values of `args`; calling it with others raises
    `errors.SignatureMismatch`.

    Raises what `grad` raises while generating, and ValueError for another
    `loops`.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def loss(w, x):
        ...     return np.sum((w * x) ** 2)
        >>> df = ys.simplegrad(loss, np.ones(2), np.ones(2), wrt="w")
        >>> value, dw, dx = df(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
        >>> print(value, dw, dx)
        13.0 [18.  4.] None
        >>> "def grad_loss(w, x):" in df.source
        True
    """
    _refuse_keywords("simplegrad", keywords)
    fn, full_args, n_bound = _target(f, args)
    compiled = _build(fn, full_args, _wrt_indices(wrt, len(args), n_bound, fn, full_args),
                      _loops_option(loops), has_aux=_has_aux(has_aux))
    return GradFunction(compiled, full_args[:n_bound])


@_user_facing
def trace(f: Callable, *args) -> tuple[Any, Tape]:
    """The value of `f(*args)` and the tape of primitive operations behind it.

    Returns `(value, tape)`, `tape` a `Tape`: `print(tape)` lists one
    operation per line, `tape.play(*args)` runs it again and
    `tape.compile()` makes it a Python function. Random draws are those of
    one call of `f` (they are not put back). Caches nothing.

    Raises `errors.SourceUnavailableError`, `errors.UnsupportedSyntaxError`
    and `errors.MutationError` as `grad` does; nothing needs a rule.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return np.sum(np.tanh(x))
        >>> value, tape = ys.trace(f, np.zeros(3))
        >>> print(str(tape).splitlines()[0])
        %1 = input x  :: float64 (3,)
    """
    fn, full_args, _ = _target(f, args)
    with _errors_at_user_lines():
        unroller, value, signature = _unroll(fn, full_args, rewind_draws=False)
    output = unroller.refs(value, unroller.loc)  # first: a static array returned becomes an op
    tape = Tape(list(unroller.ops), output, signature)
    tape = eliminate_dead_code(tape)
    tape.dependencies = tuple(unroller.dependencies.values())
    return values_of(value), tape


def diffrule(fn: Callable, wrt: str | None = None,
             expr: str | None = None) -> Callable[[Callable], Callable] | None:
    """Register the derivative of `fn`, which becomes a primitive: calls to
    it are recorded, not inlined, and the generated code calls it.

    `diffrule(fn, "x", "y * (1 - y) * dy")` is the expression form, in which
    `y` is fn's result, `dy` the incoming gradient and fn's parameters its
    inputs; it returns None. `@diffrule(fn)` on a function `(dy, y, <fn's
    parameters>)` that assigns `d<param>` is the template form, as in
    `templates/`: it returns the decorator, which returns the template
    unchanged. A template with `**kw` receives the call's keyword arguments.

    Caches: the rule goes into the process-wide registry, replacing an
    earlier rule for the same parameter; gradients `grad` cached before keep
    the code they were generated with.

    Raises TypeError where only one of `wrt` and `expr` is given, `fn` has no
    parameter `wrt` or no inspectable signature, or a parameter is named `y`
    or `dy`; SyntaxError for an expression that does not parse. A rule that
    leaves out an input it receives data for raises
    `errors.NoDiffRuleError` when it is used.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def logistic(x):
        ...     return 1.0 / (1.0 + np.exp(-x))
        >>> ys.diffrule(logistic, "x", "y * (1 - y) * dy")
        >>> @ys.diffrule(logistic)  # the same rule, as a template
        ... def logistic_rule(dy, y, x):
        ...     dx = y * (1 - y) * dy

    Code that calls `logistic` then differentiates through the rule, and
    its generated module calls `logistic` once (a module-level function of
    an importable module, which the generated code imports).
    """
    if wrt is None and expr is None:
        return registry.adjoint(fn)
    if wrt is None or expr is None:
        raise TypeError("diffrule(fn, wrt, expr) needs both the parameter name and the expression")
    registry.expression_rule(fn, wrt, expr)
    return None


def update(m: Any, gm: Any, fn: Callable[[Any, Any], Any]) -> Any:
    """Apply `fn(old, grad)` at every path of the gradient dict `gm` (or to
    the array `m` itself, where `gm` is an array): Yota's `update!`.

    Returns `m`, changed in place where the container allows it (arrays,
    dicts, lists, objects); where an immutable container (a tuple,
    namedtuple or frozen dataclass) is on a path, a rebuilt one: use the
    value it returns. Caches nothing.

    Raises what `fn` raises, and KeyError, IndexError or AttributeError for a
    path `m` does not have.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> params = {"W": np.ones(2), "b": 0.5}
        >>> ys.update(params, {("W",): np.array([1.0, 2.0])}, lambda old, g: old - 0.1 * g)
        {'W': array([0.9, 0.8]), 'b': 0.5}
    """
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


@_user_facing
def check_grad(f: Callable, *args, rtol: float = 1e-5, atol: float = 1e-7) -> None:
    """Compare `grad(f, *args)` with central finite differences.

    Returns None when they agree; raises AssertionError with a report per
    argument where they do not. The tolerances are at least what central
    differences reach in a leaf's precision (about 2e-4 for float32). Random
    generators among the arguments are put back before every evaluation, so
    each sees the same draws, and are left where they stood.

    Caches: it calls `grad(f, *args, dynamic=True)`, whose cache keeps the
    gradient. Raises the errors `grad` raises besides.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def f(x):
        ...     return np.sum(np.sin(x) * x)
        >>> ys.check_grad(f, np.array([0.5, 1.5]))
    """
    start = random_states(_generators_in(args))
    _, g = grad(f, *args, dynamic=True)
    problems = []
    for index, arg in enumerate(args):
        for path, leaf in flatten(arg):
            if kind_of(leaf) != DIFF:
                continue
            rewind(start)
            numeric = numerical_gradient(f, args, index, path)
            analytic = array_library.to_host(
                g[index] if not path and kind_of(arg) != "struct" else
                (g[index] or {}).get(user_path(path), np.zeros_like(numeric)))
            # central differences in float32 are good to about eps ** (2/3), not 1e-5
            floor = 10 * np.finfo(leaf.dtype if is_array(leaf) else np.result_type(leaf)).eps \
                ** (2 / 3)
            close = functools.partial(np.isclose, rtol=max(rtol, floor), atol=max(atol, floor))
            if not close(analytic, numeric).all():
                numeric = _refined(f, args, index, path, numeric)
                rewind(start)
            if not close(analytic, numeric).all():
                error = np.abs(np.asarray(analytic) - numeric)
                worst = np.unravel_index(np.argmax(error), np.shape(error)) if error.ndim else ()
                problems.append(
                    f"argument {index}{' path ' + str(user_path(path)) if path else ''}: "
                    f"max abs error {error.max():.3g} at {worst} "
                    f"(analytic {np.asarray(analytic)[worst]!r}, numeric {numeric[worst]!r})")
    rewind(start)
    if problems:
        raise AssertionError("gradient check failed:\n  " + "\n  ".join(problems))


def _refined(f: Callable, args: tuple, index: int, path: tuple, numeric: np.ndarray) -> np.ndarray:
    """A steep function (sin of a large value) makes the usual step too long:
    look again with steps 10 and 100 times shorter, and keep the shorter
    step's answer wherever the estimates converge towards it (where rounding
    dominates instead, they stop converging and the first answer stands)."""
    finer = numerical_gradient(f, args, index, path, shorter=10.0)
    finest = numerical_gradient(f, args, index, path, shorter=100.0)
    converging = np.abs(finest - finer) < np.abs(finer - numeric)
    return np.where(converging, finest, numeric)


def numerical_gradient(f: Callable, args: tuple, index: int, path: tuple = (),
                       shorter: float = 1.0) -> np.ndarray:
    """Central finite differences of a scalar `f` for one leaf of one argument,
    with the step that balances truncation and rounding, divided by `shorter`."""
    leaf = get_path(args[index], path)
    base = np.array(array_library.to_host(leaf), dtype=np.float64)
    out = np.zeros_like(base)
    step_scale = np.finfo(leaf.dtype if is_array(leaf) else np.result_type(leaf)).eps \
        ** (1 / 3) / shorter
    start = random_states(_generators_in(args))
    for position in np.ndindex(base.shape):
        step = step_scale * max(1.0, abs(base[position]))
        values = []
        for sign in (1, -1):
            moved = base.copy()
            moved[position] += sign * step
            new_leaf = _like(leaf, moved)
            new_arg = rebuild(args[index], lambda p, v: new_leaf if p == path else v)
            rewind(start)  # the same draws at every evaluation
            result = f(*args[:index], new_arg, *args[index + 1:])
            values.append(float(np.asarray(array_library.to_host(result),
                                           dtype=np.float64).reshape(())))
        out[position] = (values[0] - values[1]) / (2 * step)
    rewind(start)
    return out


def _like(leaf, values: np.ndarray):
    if array_library.is_ndarray(leaf):
        return array_library.like(leaf, values.astype(leaf.dtype))
    return type(leaf)(values[()])


# --- building ---------------------------------------------------------------

def _target(f, args: tuple) -> tuple[Callable, tuple, int]:
    """(function to unroll, all its positional arguments, how many of them
    are bound by `f` itself): a bound method binds `self`, a
    functools.partial its arguments, a callable object itself."""
    if isinstance(f, types.MethodType):
        fn, bound, n = _target(f.__func__, (f.__self__,) + args)
        return fn, bound, n + 1
    if isinstance(f, functools.partial):
        if f.keywords:
            raise TypeError(f"yota-src cannot differentiate a functools.partial with keyword "
                            f"arguments ({', '.join(f.keywords)}): write a small `def` that "
                            "calls the function instead")
        fn, bound, n = _target(f.func, tuple(f.args) + args)
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


def _refuse_keywords(api_name: str, keywords: dict) -> None:
    if keywords:
        names = ", ".join(f"{key}=..." for key in keywords)
        raise TypeError(
            f"ys.{api_name} takes the function's arguments positionally, and differentiates "
            f"each of them; got keyword arguments {names}. Pass them positionally "
            f"(ys.{api_name}(f, a, b)), and use wrt=... to choose which get gradients.")


def _wrt_indices(wrt, n_args: int, n_bound: int, fn: Callable | None = None,
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
    names = _parameter_names(fn, n_args + n_bound)[n_bound:] if named else []
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


def _unroll(fn: Callable, args: tuple, rewind_draws: bool = True, loops: str = "roll"):
    """Run `fn` on traced arguments. Random generators it drew from are put
    back (`rewind_draws`) when the generated code is what will draw for the
    caller; `trace` returns the traced value itself, so it keeps the draws."""
    plain = unwrap(fn)
    name = getattr(plain, "__qualname__", None) or getattr(plain, "__name__", None) \
        or type(plain).__name__
    if registry.is_primitive(plain):
        raise SourceUnavailableError(
            f"{display_name(plain)} is a primitive (yota-src has a rule for it), not a Python "
            "function of yours with source to unroll",
            hint="Differentiate a function of your own that calls it, e.g. "
                 "`def f(x): return np.sum(x)`.")
    if not inlinable(plain):
        module = getattr(plain, "__module__", None)
        kind = "a class" if isinstance(plain, type) else \
            f"a function of {module}" if callable(plain) and module else f"a {type(plain).__name__}"
        raise SourceUnavailableError(
            f"{name} is {kind}, not a Python function with source yota-src can unroll",
            hint="Differentiate a Python function (`def` or `lambda`) that calls it.")
    source = function_source(plain)
    _check_call(plain, args, source)
    params = _parameter_names(plain, len(args))
    library = array_library.library_of(params, args)
    passed = args  # what the code takes: device arrays, for CuPy
    if library != array_library.NUMPY:
        args = array_library.on_host(args)  # traced on the host; the code runs on the device
    signature = Signature.of(plain.__name__, params, args,
                             module=getattr(plain, "__module__", "") or "",
                             qualname=plain.__qualname__, source_hash=source.source_hash,
                             library=library)
    if passed is not args:
        signature.key = signature_key(passed)
    unroller = Unroller()
    unroller.roll = loops == "roll"  # a loop may become a loop op while traced

    def leaf_value(index):
        def traced(path, leaf):
            if kind_of(leaf) not in (DIFF, DATA, GENERATOR):
                return leaf
            _refuse_unsupported(signature.leaf_expression(index, path), leaf)
            return unroller.input(index, path, leaf, signature.leaf_expression(index, path))
        return traced

    named = _named_positional(plain)
    traced = tuple(counts.TripCount(arg, i) if type(arg) is int and i < named
                   else rebuild(arg, leaf_value(i)) for i, arg in enumerate(args))
    unroller.lengths = {value.op: (i, counts.Use()) for i, value in enumerate(traced[:named])
                        if isinstance(value, Traced) and np.ndim(value.value) >= 1}
    unroller.hold(traced)
    try:
        value = unroller.call_function(plain, traced, {})
    except BaseException:
        rewind(unroller.random_states)  # a failed attempt draws nothing
        raise
    finally:
        unroller.close_generators()  # generators left unfinished, as Python closes them
    if rewind_draws:
        rewind(unroller.random_states)
    signature.outside = describe_outside(unroller.dependencies.values())
    return unroller, value, signature


def _named_positional(fn: Callable) -> int:
    """How many leading parameters are named ones (not `*args`): an int passed
    to one may be a trip count read at run time (counts.py)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 0
    return sum(1 for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _check_call(fn: Callable, args: tuple, source) -> None:
    """The arguments must fit the function, as a call would check."""
    try:
        inspect.signature(fn, follow_wrapped=False).bind(*args)
    except TypeError as error:
        where = f"{os.path.basename(source.filename)}:{source.first_line}"
        hint = ""
        if not args:
            hint = (" ys.grad(f, *args) gives the value and gradient at args, not a "
                    "function (as jax.grad(f) would): call ys.grad(f, x), or "
                    "ys.simplegrad(f, x) for a reusable gradient function.")
        raise TypeError(f"{fn.__qualname__}() ({where}) cannot be called with "
                        f"{len(args)} argument(s): {error}.{hint}") from None


def _refuse_unsupported(name: str, leaf) -> None:
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


def _parameter_names(fn: Callable, count: int) -> list[str]:
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


def _loops_option(loops) -> str:
    if loops not in ("roll", "unroll"):
        raise ValueError(f"loops={loops!r}: use loops=\"roll\" (loops whose iterations do the "
                         "same work stay loops) or loops=\"unroll\" (straight-line code)")
    return loops


def _build(fn: Callable, args: tuple, wrt_args: frozenset, loops: str = "roll",
           work_arrays: bool = False, has_aux: bool = False,
           pullback: bool = False, kind: str = "gradient") -> _Compiled:
    """Trace, differentiate, optimise and load: the gradient (`pullback`: the
    vector-Jacobian product, taking a cotangent as its last argument; `kind`
    "hvp" or "jvp": a transform's wrapper, transforms.py, whose one
    differentiated argument's gradient is the result)."""
    has_aux = has_aux or kind == "jvp"
    with _errors_at_user_lines():
        unroller, value, signature = _unroll(fn, args, loops=loops)
        if pullback:
            try:
                signature, output = cotangents.attach(unroller, signature, value)
            except ValueError as error:
                error.location = unroller.returned_at
                raise
        else:
            if has_aux:
                _require_aux(value, signature, unroller.returned_at)
            _require_scalar(value[0] if has_aux else value, signature, unroller.returned_at)
            output = unroller.refs(value, unroller.loc)  # first: a static array returned is an op
        recorded = Tape(list(unroller.ops), output, signature)
        if passes.VERIFY:
            recorded.verify(unroller.values)
        forward = optimize_forward(recorded, loops)
        tape = differentiate(forward, unroller.values, wrt_args, unroller.input_names, has_aux,
                             pullback)
        if kind in ("hvp", "jvp"):
            tape = transforms.result_only(tape, kind, min(wrt_args))
        if passes.VERIFY:
            tape.verify()
    tape = optimize(tape, work_arrays)
    if kind == "jvp":
        tape = transforms.without_cotangent(tape)
    kind = "vjp" if pullback else kind
    source, constants = codegen.generate(tape, kind)
    constants, copied = array_library.device_constants(constants, signature.library)
    function = loader.load(source, codegen.function_name(tape, kind), constants)
    passed = _generators_in(args)
    if pullback:
        forward = forward.replace(output=forward.output[0])
    return _Compiled(function, source, eliminate_dead_code(forward),
                     tuple(unroller.dependencies.values()) + copied,
                     generators=tuple(generator for generator, _ in unroller.random_states.values()
                                      if not any(generator is each for each in passed)),
                     draws=bool(unroller.random_states), holds_output=_holds_output(forward),
                     value=array_library.in_library(values_of(value), signature.library)
                     if pullback else None, generated_from=tape)


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
        exec(code.replace(co_name=AT_USER_LINE), {name: error})
    except Exception as raised:
        return error.with_traceback(raised.__traceback__.tb_next)
    return error  # pragma: no cover - the exec always raises


def _has_aux(has_aux) -> bool:
    if has_aux is not True and has_aux is not False:
        raise TypeError(f"has_aux={has_aux!r}: pass True (f returns (loss, aux)) or False")
    return has_aux


def _require_aux(value, signature: Signature, returned_at) -> None:
    """With has_aux, `f` returns `(loss, aux)`: aux made of arrays, numbers,
    strings and None, in tuples, lists and dicts, which the generated code
    can return as they are."""
    problem = None
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        problem = "it returned " + (f"a {type(value).__name__} of {len(value)}"
                                    if isinstance(value, (tuple, list)) else
                                    type(values_of(value)).__name__)
    else:
        odd = next(cotangents.odd_leaves(value[1]), None)
        if odd is not None:
            problem = (f"its aux holds a {type(odd).__module__}.{type(odd).__qualname__}, which "
                       "the generated code cannot return as it is; return its arrays in a "
                       "tuple or dict instead")
    if problem is None:
        return
    error = ValueError(f"{signature.function_name}() must return a pair (loss, aux) with "
                       f"has_aux=True; {problem}.")
    if returned_at is not None:
        error.location = returned_at
    raise error


def _require_scalar(value, signature: Signature, returned_at) -> None:
    plain = values_of(value)
    if _is_scalar_loss(plain):
        return
    shape = np.shape(plain) if is_array(plain) or isinstance(plain, (float, int)) else None
    described = "None" if plain is None else (
        f"a {type(plain).__name__} of {len(plain)}" if isinstance(plain, (tuple, list, dict))
        else f"{type(plain).__name__} of shape {shape}")
    hint = ""
    if plain is None:
        hint = " Did it forget to `return` the loss?"
    elif isinstance(plain, (tuple, list, dict)):
        hint = " Return the loss alone, or pass has_aux=True to return (loss, aux)."
    elif shape:
        hint = " Reduce it to a scalar, e.g. with np.sum or np.mean."
    error = ValueError(f"{signature.function_name}() must return a scalar (a float or a size-1 "
                       f"array) to be differentiated; it returned {described}.{hint}")
    if returned_at is not None:
        error.location = returned_at
    raise error


def _is_scalar_loss(value) -> bool:
    """A real number, or a real array of size 1."""
    if isinstance(value, (bool, str, tuple, list, dict)) or value is None:
        return False
    try:
        dtype = np.result_type(value)
    except TypeError:
        return False
    return np.size(value) == 1 and np.issubdtype(dtype, np.number) \
        and not np.issubdtype(dtype, np.complexfloating)


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


nested_derivatives.install()  # ys.grad inside a traced function: the interpreter asks here
