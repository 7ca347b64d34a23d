"""The small functions written around `f` whose gradient is a transform.

- the Hessian-vector product `H v` is the gradient in `x` of
  `sum(grad(f)(x) * v)` (reverse over reverse);
- the Jacobian-vector product `J t` is the gradient in `u` of
  `sum(pullback(u) * t)`, where `pullback(u) = J^T u` is linear in `u`: the
  transpose of the transpose (the derivative holds no `u`, so the generated
  function does not take it: transform_tapes.py).

The wrapper is plain Python, loaded with its source like generated code, so
the inner `grad`/`vjp` is unrolled into it (nested_derivatives.py) and
differentiated again by the same templates. Its lines are what the
generated module's comments name (`hvp_loss:3`).
"""

from __future__ import annotations

import keyword
import re
import textwrap
from collections.abc import Callable

import numpy as np

from yota_src.api.gradients import grad, vjp
from yota_src.codegen import loader

HVP = """
def {name}({x}, {v}):
    _, gradient = grad({f}, {x})
    return np.sum(gradient[0] * {v})
"""

JVP = """
def {name}({args}, {tangents}, {cotangent}):
    value, pullback = vjp({f}, {args})
    gradients = pullback({cotangent})
    return {products}, value
"""


def hvp_wrapper(f: Callable, param: str) -> Callable:
    """`(x, v) -> sum(grad(f)(x) * v)`, named like f."""
    v = _fresh("v", {param})
    return _load(f, "hvp", HVP.format(name=_name(f), f=_primal(f), x=param, v=v))


def jvp_wrapper(f: Callable, params: list[str], differentiable: list[int]) -> Callable:
    """`(*args, *tangents, u) -> sum(pullback(u)[i] * tangents[i])` over the
    differentiable arguments, named like f."""
    taken = set(params)
    tangents = []
    for index in differentiable:
        tangents.append(_fresh(f"t_{params[index]}", taken))
        taken.add(tangents[-1])
    cotangent = _fresh("u", taken)
    products = " + ".join(f"np.sum(gradients[{index}] * {tangent})"
                          for index, tangent in zip(differentiable, tangents))
    return _load(f, "jvp", JVP.format(name=_name(f), f=_primal(f), args=", ".join(params),
                               tangents=", ".join(tangents), cotangent=cotangent,
                               products=products))


def _load(f: Callable, kind: str, source: str) -> Callable:
    source = textwrap.dedent(source).lstrip()
    name = source.split("(", 1)[0].removeprefix("def ")
    wrapper = loader.run_registered(source, f"{kind}_{name}", {
        "__name__": f"{loader.GENERATED}.{name}", "np": np, _primal(f): f, "grad": grad,
        "vjp": vjp})[name]
    wrapper.__qualname__ = getattr(f, "__qualname__", name)
    wrapper.__module__ = getattr(f, "__module__", None)
    return wrapper


def _name(f: Callable) -> str:
    """f's name as an identifier (`lambda` for a lambda), for the wrapper."""
    name = re.sub(r"\W", "", getattr(f, "__name__", "")) or "function"
    return name if name.isidentifier() and not keyword.iskeyword(name) else "function"


def _primal(f: Callable) -> str:
    """The wrapper module's name for f: not f's own, which the wrapper takes."""
    return "primal" if _name(f) != "primal" else "primal_function"


def _fresh(base: str, taken: set) -> str:
    name, n = base, 1
    while name in taken or name in ("primal", "primal_function", "np", "grad", "vjp",
                                    "gradient", "gradients", "pullback", "value"):
        n += 1
        name = f"{base}_{n}"
    return name
