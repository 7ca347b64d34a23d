"""Finite differences, the independent referee: `check_grad` compares a
generated gradient with them, and the tests use `numerical_gradient` alone.

Central differences with the step that balances truncation and rounding in
each leaf's precision; random generators among the arguments are put back
before every evaluation, so that each sees the same draws.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from yota_src.api.arguments import generators_in
from yota_src.api.gradients import grad
from yota_src.api.user_facing import user_facing as _user_facing  # "_": pdoc hides it
from yota_src.core.values import DIFF, flatten, get_path, is_array, kind_of, rebuild, user_path
from yota_src.tracing import array_library, random_states, rewind


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
    array_library.refuse_dask("ys.check_grad", args)  # (finite differences read every element)
    start = random_states(generators_in(args))
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
    start = random_states(generators_in(args))
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
