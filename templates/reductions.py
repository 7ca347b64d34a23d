"""Reductions over axes, with `axis` (an int, a tuple or None) and `keepdims`."""

import numpy as np

from yota_src.rules import adjoint

from .helpers import aligned_weights, expand, product_of_others, reverse_cumsum, spread, unbroadcast


@adjoint(np.sum)
def sum(dy, y, a, axis=None, dtype=None, keepdims=False):
    da = spread(dy, a, axis, keepdims)


@adjoint(np.mean)
def mean(dy, y, a, axis=None, dtype=None, keepdims=False):
    da = spread(dy / (np.size(a) // np.size(y)), a, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin)
def extreme(dy, y, a, axis=None, keepdims=False):
    """The gradient goes to the elements equal to the extreme; ties share it evenly."""
    mask = a == expand(y, a, axis, keepdims)
    da = mask * expand(dy, a, axis, keepdims) / np.sum(mask, axis=axis, keepdims=True)


@adjoint(np.ptp)
def ptp(dy, y, a, axis=None, keepdims=False):
    """max - min: the extremes' gradients, ties shared evenly."""
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    g = expand(dy, a, axis, keepdims)
    da = g * (top / np.sum(top, axis=axis, keepdims=True)
              - bottom / np.sum(bottom, axis=axis, keepdims=True))


@adjoint(np.prod)
def prod(dy, y, a, axis=None, dtype=None, keepdims=False):
    """Each element's gradient is the product of the others: exact with zeros too."""
    da = expand(dy, a, axis, keepdims) * product_of_others(a, axis)


@adjoint(np.var)
def var(dy, y, a, axis=None, dtype=None, ddof=0, keepdims=False):
    count = np.size(a) // np.size(y) - ddof
    da = expand(dy, a, axis, keepdims) * (2.0 / count) * (a - np.mean(a, axis=axis, keepdims=True))


@adjoint(np.std)
def std(dy, y, a, axis=None, dtype=None, ddof=0, keepdims=False):
    count = np.size(a) // np.size(y) - ddof
    centred = a - np.mean(a, axis=axis, keepdims=True)
    da = expand(dy / y, a, axis, keepdims) * centred / count


@adjoint(np.cumsum)
def cumsum(dy, y, a, axis=None, dtype=None):
    if axis is None:
        da = np.reshape(reverse_cumsum(dy, 0), np.shape(a))
    else:
        da = reverse_cumsum(dy, axis)


@adjoint(np.cumprod)
def cumprod(dy, y, a, axis=None, dtype=None):
    """Through y / a: defined where `a` has no zeros (as in HIPS autograd)."""
    if axis is None:
        da = np.reshape(reverse_cumsum(dy * y, 0), np.shape(a)) / a
    else:
        da = reverse_cumsum(dy * y, axis) / a


@adjoint(np.linalg.norm)
def norm(dy, y, x, ord=None, axis=None, keepdims=False):
    """Vector norms of any order p, and the Frobenius norm of matrices; the
    spectral and nuclear matrix norms are left out."""
    matrix = (axis is None and np.ndim(x) == 2) or (isinstance(axis, tuple) and len(axis) == 2)
    if matrix and ord not in (None, "fro"):
        raise NotImplementedError(f"the gradient of the matrix norm ord={ord!r} is not provided")
    p = 2 if ord in (None, "fro") else ord
    g = expand(dy, x, axis, keepdims)
    n = expand(y, x, axis, keepdims)
    if p == 2:
        dx = g * x / n
    elif p == 1:
        dx = g * np.sign(x)
    elif p in (np.inf, -np.inf):
        hit = np.abs(x) == n
        dx = g * np.sign(x) * hit / np.sum(hit, axis=axis, keepdims=True)
    else:
        dx = g * np.sign(x) * np.abs(x) ** (p - 1) / n ** (p - 1)


@adjoint(np.average)
def average(dy, y, a, axis=None, weights=None, returned=False, keepdims=False):
    if returned:
        raise NotImplementedError("np.average(..., returned=True) returns a pair")
    if weights is None:
        da = spread(dy / (np.size(a) // np.size(y)), a, axis, keepdims)
    else:
        w = aligned_weights(weights, a, axis)
        g = expand(dy, a, axis, keepdims) / np.sum(w, axis=axis, keepdims=True)
        da = g * w
        dweights = np.reshape(unbroadcast(g * (a - expand(y, a, axis, keepdims)), w),
                              np.shape(weights))
