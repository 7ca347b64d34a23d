"""Arrays built from values: fills, ranges and grids.

Their shape arguments are integers (or declared piecewise constant in
templates/nondiff.py); the values they spread out have gradients.
"""

import numpy as np

from yota_src.rules import adjoint

from .helpers import cast, power_base_gradient, unbroadcast


@adjoint(np.full)
def full(dy, y, shape, fill_value, dtype=None, order="C", **kw):
    dfill_value = unbroadcast(dy, fill_value)


@adjoint(np.full_like)
def full_like(dy, y, a, fill_value, dtype=None, order="K", subok=True, shape=None, **kw):
    dfill_value = unbroadcast(dy, fill_value)


@adjoint(np.arange)
def arange(dy, y, start_or_stop, stop=None, step=1, **kw):
    """Element i is start + i * step; the length, all that the stop decides,
    is piecewise constant."""
    dstart_or_stop = cast(np.sum(dy), start_or_stop) if stop is not None else 0.0
    dstep = cast(np.sum(dy * np.arange(np.size(y))), step)


@adjoint(np.linspace)
def linspace(dy, y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             **kw):
    """Sample i is start * (1 - t_i) + stop * t_i, t_i = i / (num - 1)."""
    if retstep:
        raise NotImplementedError("the rule for np.linspace(..., retstep=True) is not provided")
    t = interpolation_weights(y, num, endpoint, axis)
    dstart = unbroadcast(np.sum(dy * (1.0 - t), axis=axis), start)
    dstop = unbroadcast(np.sum(dy * t, axis=axis), stop)


@adjoint(np.logspace)
def logspace(dy, y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop): the linspace rule after the power's."""
    t = interpolation_weights(y, num, endpoint, axis)
    dexponent = dy * y * np.log(base)
    dstart = unbroadcast(np.sum(dexponent * (1.0 - t), axis=axis), start)
    dstop = unbroadcast(np.sum(dexponent * t, axis=axis), stop)
    dbase = logspace_base_gradient(dy, base, np.linspace(start, stop, num, endpoint, axis=axis))


@adjoint(np.geomspace)
def geomspace(dy, y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Sample i is start * (stop / start) ** t_i."""
    t = interpolation_weights(y, num, endpoint, axis)
    dstart = unbroadcast(np.sum(dy * y * (1.0 - t), axis=axis) / start, start)
    dstop = unbroadcast(np.sum(dy * y * t, axis=axis) / stop, stop)


@adjoint(np.meshgrid)
def meshgrid(dy, y, *xi, copy=True, sparse=False, indexing="xy"):
    """Each grid repeats one (flattened) input along one axis: sum the others."""
    dxi = [grid_back(dy[i], x, grid_axis(i, len(xi), indexing)) for i, x in enumerate(xi)]


# --- helpers ---------------------------------------------------------------------


def interpolation_weights(y, num, endpoint, axis):
    """t_i of each sample, shaped to broadcast against the samples `y`."""
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    shape = [1] * np.ndim(y)
    shape[axis % np.ndim(y)] = num
    return t if np.ndim(y) == 1 else np.reshape(t, tuple(shape))


def logspace_base_gradient(dy, base, exponent):
    """d(base ** u) / d base = u * base ** (u - 1), summed over the samples."""
    if np.ndim(base) != 0:
        raise NotImplementedError("the rule for np.logspace covers a scalar base")
    return cast(np.sum(power_base_gradient(dy, base, exponent)), base)


def grid_axis(i, count, indexing):
    """The axis along which grid i varies: 'xy' swaps the first two."""
    if indexing == "xy" and count >= 2 and i < 2:
        return 1 - i
    return i


def grid_back(g, x, axis):
    """The gradient of one meshgrid input: its grid's gradient summed over the
    other axes; zeros when that grid is not used."""
    if g is None:
        return np.zeros(np.shape(x), np.result_type(x))
    others = tuple(a for a in range(np.ndim(g)) if a != axis)
    return cast(np.reshape(np.sum(g, axis=others) if others else g, np.shape(x)), x)
