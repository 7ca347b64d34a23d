"""Second derivatives and forward mode, built from the reverse pass: `hvp`,
`hessian`, `jvp`, `jacobian`, and `derivative`, which gives their code.

Each transform is the gradient of a small function written around `f`
(transform_wrappers.py): no tangent rules beside the adjoint templates to
keep in step, and every template that is itself differentiable serves
both. A template that is not raises NoDiffRuleError naming the primitive.
The generated module reads like a gradient module; its comments name the
wrapper's lines (`hvp_loss:3`) and the inner gradient's (`grad_loss:24`).
A dense Hessian or Jacobian is one generated product run on each unit
vector (for small sizes, as autograd and JAX do).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from yota_src.api import transform_wrappers
from yota_src.api.arguments import loops_option, named_positional, parameter_names, target
from yota_src.api.gradients import simplegrad, vjp
from yota_src.api.pipeline import build
from yota_src.api.results import GradFunction
from yota_src.api.user_facing import user_facing as _user_facing  # "_": pdoc hides it
from yota_src.core.primitives import display_name
from yota_src.differentiate import cotangents
from yota_src.tracing import array_library


@_user_facing
def hvp(f: Callable, x, v, *, loops: str = "roll") -> Any:
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
    array_library.refuse_dask("ys.hvp", x, v)
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
def hessian(f: Callable, x, *, loops: str = "roll") -> np.ndarray:
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
    array_library.refuse_dask("ys.hessian", x)
    product = derivative(f, x, x, transform="hvp", loops=loops)
    return _stacked([product(x, unit) for unit in _units(x)], np.shape(x), np.shape(x), x)


@_user_facing
def jvp(f: Callable, args: Sequence, tangents: Sequence, *,
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
    array_library.refuse_dask("ys.jvp", args, tangents)
    floats = [arg for arg in args if cotangents.is_float(arg)]
    if len(tangents) != len(floats):
        raise TypeError(f"ys.jvp takes one tangent per float argument ({len(floats)} here); "
                        f"got {len(tangents)}")
    tangents = tuple(_shaped_like(arg, tangent, f"the tangent of argument {index}")
                     for index, (arg, tangent) in enumerate(zip(floats, tangents)))
    return derivative(f, *args, *tangents, transform="jvp", loops=loops)(*args, *tangents)


@_user_facing
def jacobian(f: Callable, x, *, mode: str = "auto", loops: str = "roll") -> np.ndarray:
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
    array_library.refuse_dask("ys.jacobian", x)
    if not isinstance(mode, str) or mode not in ("auto", "rev", "fwd"):
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
    if transform != "grad":
        array_library.refuse_dask(f"ys.derivative(transform={transform!r})", args)
    if transform == "grad":
        return simplegrad(f, *args, wrt=wrt, loops=loops)
    if transform not in ("hvp", "jvp"):
        raise ValueError(f"transform={transform!r}: use \"grad\", \"hvp\" or \"jvp\" "
                         "(ys.vjp gives the vector-Jacobian product)")
    if wrt is not None:
        raise ValueError(f"wrt is for transform=\"grad\"; {transform} takes the arguments "
                         "it differentiates")
    fn, full_args, n_bound = target(f, args)
    if n_bound or not isinstance(fn, types.FunctionType):
        raise TypeError(f"ys.derivative(transform={transform!r}) takes a plain function "
                        f"(def or lambda) of the user's; got {display_name(f)}")
    params = parameter_names(fn, named_positional(fn))
    if transform == "hvp":
        if len(args) != 2:
            raise TypeError("transform=\"hvp\" takes (x, v): the point and the vector")
        wrapper = transform_wrappers.hvp_wrapper(fn, params[0] if params else "x")
        compiled = build(wrapper, args, frozenset({0}), loops_option(loops), kind="hvp")
        return GradFunction(compiled)
    floats = [index for index, arg in enumerate(args[:len(params)]) if cotangents.is_float(arg)]
    primals = args[:len(args) - len(floats)]
    if len(primals) != len(params) or not floats:
        raise TypeError(f"transform=\"jvp\" takes f's {len(params)} arguments, then one "
                        "tangent per float argument among them")
    value = vjp(fn, *primals, loops=loops)[0]
    _require_single(value, f"ys.jvp needs {display_name(f)}")
    wrapper = transform_wrappers.jvp_wrapper(fn, params, floats)
    compiled = build(wrapper, (*args, cotangents.one_like(value)), frozenset({len(args)}),
                     loops_option(loops), kind="jvp")
    return GradFunction(compiled)
