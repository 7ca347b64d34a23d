"""Random draws, differentiated along the path NumPy draws them.

A sample is a fixed function of its parameters and of noise from the
generator: NumPy draws a normal as `loc + scale * standard_normal()`, a
uniform as `low + (high - low) * random()`. With the same noise (the same
seed, as in a reparameterised VAE) the derivative is exact, and the noise is
read back from the sample: `(y - loc) / scale`. Draws made by rejection or
by discrete steps (gamma, beta, poisson, choice, ...) have no such path and
stay refused.
"""

import numpy as np

from yota_src.rules import adjoint, primitives

from .helpers import unbroadcast

# Each pathwise draw's float parameters, in NumPy's order, with their defaults
# (the same for np.random.Generator, RandomState and the np.random functions)
LOCATION_SCALE = {"loc": 0.0, "scale": 1.0}
PATHWISE = {
    "normal": LOCATION_SCALE, "laplace": LOCATION_SCALE, "gumbel": LOCATION_SCALE,
    "logistic": LOCATION_SCALE, "lognormal": {"mean": 0.0, "sigma": 1.0},
    "uniform": {"low": 0.0, "high": 1.0}, "exponential": {"scale": 1.0},
    "rayleigh": {"scale": 1.0},
}


@adjoint(primitives.draw)
def draw(dy, y, generator, method, *args, **kwargs):
    """`rng.normal(mu, sigma)` and the other location-scale draws:
    d/dloc = 1, d/dscale = the noise; lognormal through its normal; uniform
    as low + (high - low) u; exponential and rayleigh as scale times noise."""
    dargs, dkwargs = draw_gradients(method, dy, y, args, kwargs)


def module_draw(method):
    """The rule for np.random.<method>, which draws from the global RandomState."""
    @adjoint(getattr(np.random, method))
    def global_draw(dy, y, *args, **kwargs):
        dargs, dkwargs = draw_gradients(method, dy, y, args, kwargs)
    return global_draw


for _method in PATHWISE:
    module_draw(_method)


def draw_gradients(method, dy, y, args, kwargs):
    """The gradients of a draw's positional and keyword parameters."""
    if method not in PATHWISE:
        raise NotImplementedError(
            f"the random draw {method}() has no pathwise derivative in its parameters "
            f"(those with one: {', '.join(PATHWISE)}); draw standard noise and transform it")
    defaults = PATHWISE[method]
    given = {**defaults, **dict(zip(defaults, args)),
             **{name: value for name, value in kwargs.items() if name in defaults}}
    grads = pathwise(method, dy, y, given)
    dargs = [unbroadcast(grads[name], value) if name in grads else None
             for name, value in zip([*defaults, *([None] * len(args))], args)]
    dkwargs = {name: unbroadcast(grads[name], value) if name in grads else None
               for name, value in kwargs.items()}
    return dargs, dkwargs


def pathwise(method, dy, y, p):
    """Each parameter's gradient, in the sample's shape. The noise is read
    back from the sample, which a spread of 0 makes impossible (refused, and
    checked where the generated code runs)."""
    spread = p["high"] - p["low"] if method == "uniform" else \
        p["sigma"] if method == "lognormal" else p["scale"]
    if np.any(np.asarray(spread) == 0):
        raise NotImplementedError(
            f"the gradient of a {method}() draw is read from the noise it drew, which a "
            "spread of 0 hides; draw standard noise and transform it (mu + sigma * noise)")
    if method == "lognormal":
        return {"mean": dy * y, "sigma": dy * y * (np.log(y) - p["mean"]) / p["sigma"]}
    if method == "uniform":
        u = (y - p["low"]) / (p["high"] - p["low"])
        return {"low": dy * (1.0 - u), "high": dy * u}
    if method in ("exponential", "rayleigh"):
        return {"scale": dy * y / p["scale"]}
    return {"loc": dy, "scale": dy * (y - p["loc"]) / p["scale"]}
