"""The sizes of library routines past shapes.py's families: random draws,
identity matrices, flattening, repeating, joining, einsum and tensordot,
norms, sorting, differences, padding, triangles, logsumexp and linear
solves, each as an expression of its arguments' sizes (ir/dims.py).

Without a rule a routine pins the sizes it reads, and the module is made for
the example's sizes. A rule is checked against the example's shape where it
is applied (shapes.result_dims) and again at the probe sizes, where the
module is made a second time (api/sizes.py): a rule that followed the
example only by chance makes the two modules differ, and the module is made
for the example's sizes instead.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from yota_src.core import primitives
from yota_src.ir.dims import Dim
from yota_src.ir.shapes import (
    NoRule,
    add_rules,
    broadcast,
    concatenated,
    dims_of_value,
    op_of,
    selected,
)


def _shape(size) -> tuple:
    shape = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    if not all(isinstance(d, (int, Dim)) and not isinstance(d, bool) for d in shape):
        raise NoRule
    return shape


# where each generator method takes `size` by position
_SIZE_AT = {"standard_normal": 0, "random": 0, "random_sample": 0, "standard_exponential": 0,
            "standard_cauchy": 0, "poisson": 1, "exponential": 1, "rayleigh": 1,
            "standard_gamma": 1, "chisquare": 1, "standard_t": 1, "geometric": 1,
            "normal": 2, "uniform": 2, "integers": 2, "randint": 2, "binomial": 2,
            "gamma": 2, "beta": 2, "laplace": 2, "logistic": 2, "lognormal": 2, "gumbel": 2,
            "wald": 2, "negative_binomial": 2, "f": 2}


def _draw(facts, generator, method, *args, **kwargs):
    """`rng.normal(0, 1, size=(N, D))`: the size asked for; `randn(N, D)`: its arguments."""
    if method in ("randn", "rand"):
        return _shape(args) if args and not kwargs else _no_rule()
    if "size" in kwargs:
        size = kwargs["size"]
    elif method in _SIZE_AT and len(args) > _SIZE_AT[method]:
        size = args[_SIZE_AT[method]]
    else:
        raise NoRule  # sized by its parameters' shapes
    if size is None or method not in _SIZE_AT:
        raise NoRule
    return _shape(size)


def _no_rule():
    raise NoRule


def _eye(facts, N, M=None, k=0, dtype=None, order="C", **kwargs):
    if kwargs:
        raise NoRule
    return _shape((N, N if M is None else M))


def _identity(facts, n, dtype=None, **kwargs):
    return _shape((n, n))


def _ravel(facts, a, order="C"):
    return (functools.reduce(operator.mul, dims_of_value(a), 1),)


def _repeat(facts, a, repeats, axis=None):
    if not isinstance(repeats, (int, Dim)) or isinstance(repeats, bool):
        raise NoRule  # counts per element: a size the data decide
    dims = dims_of_value(a)
    if axis is None:
        return (functools.reduce(operator.mul, dims, 1) * repeats,)
    axis %= len(dims)
    return tuple(d * repeats if i == axis else d for i, d in enumerate(dims))


def _joined(tup, kwargs: dict) -> list:
    """The dims of each array hstack or vstack joins (none 0-d)."""
    if kwargs or not isinstance(tup, (list, tuple)) or not tup:
        raise NoRule
    shapes = [dims_of_value(a) for a in tup]
    if any(not shape for shape in shapes):
        raise NoRule
    return shapes


def _hstack(facts, tup, **kwargs):
    shapes = _joined(tup, kwargs)
    return concatenated(facts, shapes, 0 if len(shapes[0]) == 1 else 1)


def _vstack(facts, tup, **kwargs):
    return concatenated(facts, [(1, *shape) if len(shape) == 1 else shape
                                for shape in _joined(tup, kwargs)], 0)


def _einsum(facts, subscripts, *operands, **kwargs):
    """Explicit or implicit subscripts, no ellipsis: each letter one size."""
    if set(kwargs) - {"optimize"} or not isinstance(subscripts, str) or "..." in subscripts:
        raise NoRule
    given, arrow, wanted = subscripts.replace(" ", "").partition("->")
    terms = given.split(",")
    if len(terms) != len(operands):
        raise NoRule
    sizes: dict = {}
    for term, operand in zip(terms, operands):
        dims = dims_of_value(operand)
        if len(term) != len(dims):
            raise NoRule
        for letter, size in zip(term, dims):
            if letter not in sizes:
                sizes[letter] = size
            elif not facts.decide(size, operator.eq, sizes[letter]):
                raise NoRule  # (NumPy stretches a size of 1)
    if not arrow:
        letters = "".join(terms)
        wanted = "".join(sorted(letter for letter in set(letters) if letters.count(letter) == 1))
    if any(letter not in sizes for letter in wanted):
        raise NoRule
    return tuple(sizes[letter] for letter in wanted)


def _tensordot(facts, a, b, axes=2):
    x, y = dims_of_value(a), dims_of_value(b)
    if isinstance(axes, int):
        first, second = list(range(len(x) - axes, len(x))), list(range(axes))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        first, second = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                         [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    else:
        raise NoRule
    if len(first) != len(second):
        raise NoRule
    first, second = [i % len(x) for i in first], [i % len(y) for i in second]
    for i, j in zip(first, second):
        facts.decide(x[i], operator.eq, y[j])
    return tuple(d for i, d in enumerate(x) if i not in first) + \
        tuple(d for j, d in enumerate(y) if j not in second)


def _norm(facts, x, ord=None, axis=None, keepdims=False):
    dims = dims_of_value(x)
    if axis is None:
        return (1,) * len(dims) if keepdims else ()
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in axes):
        raise NoRule
    axes = {i % len(dims) for i in axes}
    return tuple(1 if i in axes else d for i, d in enumerate(dims) if keepdims or i not in axes)


def _sorted(facts, a, axis=-1, kind=None, order=None, **kwargs):
    if order is not None or kwargs:
        raise NoRule
    dims = dims_of_value(a)
    return (functools.reduce(operator.mul, dims, 1),) if axis is None else dims


def _diff(facts, a, n=1, axis=-1, **kwargs):
    if kwargs or not isinstance(n, int) or n < 0:
        raise NoRule  # (prepend=, append=: their sizes join in)
    dims = list(dims_of_value(a))
    axis %= len(dims)
    if not facts.decide(dims[axis], operator.ge, n):
        raise NoRule  # (NumPy gives no rows)
    dims[axis] = dims[axis] - n
    return tuple(dims)


def _pad(facts, array, pad_width, mode="constant", **kwargs):
    dims = dims_of_value(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (len(dims), 2)) \
        if _integers(pad_width) else None
    if widths is None:
        raise NoRule
    return tuple(d + int(before) + int(after) for d, (before, after) in zip(dims, widths))


def _at_least(rank: int):
    """np.atleast_1d/2d/3d of one array: 1s where NumPy adds axes."""
    def rule(facts, a):
        dims = tuple(dims_of_value(a))
        if len(dims) >= rank:
            return dims
        if rank == 3 and len(dims) == 2:
            return (*dims, 1)
        if rank == 3 and len(dims) == 1:
            return (1, *dims, 1)
        return (1,) * (rank - len(dims)) + dims
    return rule


def _take_along(facts, arr, indices, axis=-1):
    """np.take_along_axis: the indices' sizes (the others broadcast with the array's)."""
    x, i = dims_of_value(arr), dims_of_value(indices)
    if axis is None:
        return (functools.reduce(operator.mul, i, 1),)
    if len(x) != len(i) or not isinstance(axis, int):
        raise NoRule
    axis %= len(x)
    others = broadcast(facts, *(tuple(d for k, d in enumerate(s) if k != axis) for s in (x, i)))
    return (*others[:axis], i[axis], *others[axis:])


def _flatnonzero(facts, a):
    """The positions a mask selects: as many as it selects (a Count)."""
    mask = op_of(a)
    if mask is None or not mask.shape:
        raise NoRule
    return (selected(facts, mask, a),)


def _integers(value) -> bool:
    flat = np.ravel(np.asarray(value, dtype=object))
    return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in flat)


def _triangle(facts, m, k=0):
    dims = dims_of_value(m)
    if len(dims) < 2 or not isinstance(k, int):
        raise NoRule
    return dims


def _logsumexp(facts, a, axis=None, b=None, keepdims=False, return_sign=False):
    if b is not None or return_sign:
        raise NoRule
    return _norm(facts, a, axis=axis, keepdims=keepdims)


def _solve(facts, a, b, *rest, **kwargs):
    """A 2-D system: the solution is shaped as the right-hand side."""
    x, y = dims_of_value(a), dims_of_value(b)
    if len(x) != 2 or len(y) not in (1, 2):
        raise NoRule
    facts.decide(x[0], operator.eq, x[1])
    facts.decide(y[0], operator.eq, x[1])
    return y


def _elementwise(facts, *args, **kwargs):
    """scipy.stats' densities: their arguments broadcast."""
    return broadcast(facts, *(dims_of_value(v) for v in (*args, *kwargs.values())))


def _scipy_rules() -> dict:
    """By name: the core never imports SciPy (its functions are known once used)."""
    rules = {"scipy.special.logsumexp": _logsumexp, "scipy.linalg.solve_triangular": _solve}
    for name in ("norm", "t", "beta", "gamma", "chi2", "poisson"):  # (their parameters
        for method in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf",
                       "logpmf", "pmf"):  # broadcast with x, whatever they are)
            rules[f"scipy.stats.{name}.{method}"] = _elementwise
    return rules


def _legacy(method: str):
    """np.random.normal(0, 1, (N, D)), np.random.randn(N, D): the global state's draws."""
    return lambda facts, *args, **kwargs: _draw(facts, None, method, *args, **kwargs)


_LEGACY = {getattr(np.random, name): _legacy(name) for name in (*_SIZE_AT, "randn", "rand")
           if hasattr(np.random, name)}


add_rules({**_LEGACY,
    primitives.draw: _draw, np.eye: _eye, np.identity: _identity, np.ravel: _ravel,
    np.repeat: _repeat, np.hstack: _hstack, np.vstack: _vstack, np.einsum: _einsum,
    np.tensordot: _tensordot, np.linalg.norm: _norm, np.sort: _sorted, np.argsort: _sorted,
    np.diff: _diff, np.pad: _pad, np.tril: _triangle, np.triu: _triangle,
    np.linalg.solve: _solve, np.atleast_1d: _at_least(1), np.atleast_2d: _at_least(2),
    np.atleast_3d: _at_least(3), np.take_along_axis: _take_along,
    np.flatnonzero: _flatnonzero}, by_name=_scipy_rules())
