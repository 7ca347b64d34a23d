"""What the rule tests share: a rule checked against central finite
differences on every entry of its result, and reproducible inputs."""

import numpy as np

import yota_src as ys


def check(fn, *arrays, rtol=1e-5, atol=1e-7, **kwargs):
    """fn's result weighted by fixed random numbers, so every output entry
    counts; fn's keywords reach it as constants (a closure), as in user code."""
    w = np.random.default_rng(7).uniform(-1.0, 1.0, np.shape(fn(*arrays, **kwargs)))

    def weighted(w, *arrays):
        return np.sum(fn(*arrays, **kwargs) * w)

    ys.check_grad(weighted, w, *arrays, rtol=rtol, atol=atol)


def uniform(shape, low=-1.0, high=1.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def normal(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


# an array method's parameter named otherwise than its function's, at the same place
METHOD_ALIASES = {"min": "a_min", "max": "a_max", "other": "b"}


def method_positional(fn, name: str) -> tuple[int, int] | None:
    """How many of `x.name`'s positional parameters agree, place by place,
    with `fn`'s after its first, and how many it has; None where this NumPy
    gives no signature to read. `x.reshape(*shape)` takes its one tuple."""
    import inspect

    try:
        method = list(inspect.signature(getattr(np.ndarray, name)).parameters.values())[1:]
        function = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if method and method[0].kind == method[0].VAR_POSITIONAL:
        return 1, 1
    positional = [p for p in method if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    agreeing = 0
    for mine, theirs in zip(positional, function):
        if METHOD_ALIASES.get(mine.name, mine.name) != theirs.name:
            break
        agreeing += 1
    return agreeing, len(positional)
