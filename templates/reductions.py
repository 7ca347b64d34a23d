"""Reductions over axes, with `axis` (an int, a tuple or None) and `keepdims`."""

import numpy as np

from yota_src.rules import adjoint, is_static

from .helpers import (
    aligned_weights,
    as_array,
    axes_argument,
    cast,
    cumprod_gradient,
    expand,
    indistinct,
    masked,
    product_of_others,
    reverse_cumsum,
    spread,
    unbroadcast,
    zeros_like_input,
)


@adjoint(np.sum)
def sum(dy, y, a, axis=None, dtype=None, keepdims=False, initial=None):
    da = spread(dy, a, axis, keepdims)
    dinitial = np.sum(dy)  # added to every sum


@adjoint(np.mean)
def mean(dy, y, a, axis=None, dtype=None, keepdims=False):
    da = spread(dy / (np.size(a) // np.size(y)), a, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin)
def extreme(dy, y, a, axis=None, keepdims=False):
    """The gradient goes to the elements equal to the extreme; ties share it evenly."""
    mask = a == expand(y, a, axis, keepdims)
    da = masked(expand(dy, a, axis, keepdims) / np.sum(mask, axis=axis, keepdims=True), mask)


@adjoint(np.ptp)
def ptp(dy, y, a, axis=None, keepdims=False):
    """max - min: the extremes' gradients, ties shared evenly."""
    top = a == np.max(a, axis=axis, keepdims=True)
    bottom = a == np.min(a, axis=axis, keepdims=True)
    g = expand(dy, a, axis, keepdims)
    da = (masked(g / np.sum(top, axis=axis, keepdims=True), top)
          - masked(g / np.sum(bottom, axis=axis, keepdims=True), bottom))


@adjoint(np.prod)
def prod(dy, y, a, axis=None, dtype=None, keepdims=False):
    """Each element's gradient is the product of the others: exact with zeros too."""
    da = expand(dy, a, axis, keepdims) * product_of_others(a, axis)


@adjoint(np.var)
def var(dy, y, a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    count = np.size(a) // np.size(y) - (ddof if correction is None else correction)
    da = expand(dy, a, axis, keepdims) * (2.0 / count) * (a - np.mean(a, axis=axis, keepdims=True))


@adjoint(np.std)
def std(dy, y, a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
    count = np.size(a) // np.size(y) - (ddof if correction is None else correction)
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
    """Each element's gradient is a sum of products of the others: exact with zeros too."""
    if axis is None:
        da = np.reshape(cumprod_gradient(dy, y, np.ravel(a), 0), np.shape(a))
    else:
        da = cumprod_gradient(dy, y, a, axis)


# --- NaN-aware reductions: NaNs are left out, and get no gradient ----------------


@adjoint(np.nansum)
def nansum(dy, y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """np.sum with NaNs counted as 0."""
    da = masked(spread(dy, a, axis, keepdims), ~np.isnan(a))
    dinitial = np.sum(dy)  # added to every sum


@adjoint(np.nanmean)
def nanmean(dy, y, a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean of the numbers: each gets 1 / their count (an all-NaN slice none)."""
    numbers = ~np.isnan(a)
    count = np.sum(numbers, axis=axis, keepdims=True)
    da = masked(expand(dy, a, axis, keepdims) / np.maximum(count, 1), numbers)


@adjoint(np.nanvar)
def nanvar(dy, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    """np.var of the numbers in each slice, their count less ddof dividing."""
    numbers, centred, count = nan_centred(a, axis, ddof if correction is None else correction)
    da = masked(expand(dy, a, axis, keepdims) * (2.0 / count) * centred, numbers)


@adjoint(np.nanstd)
def nanstd(dy, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    """np.std of the numbers in each slice, their count less ddof dividing."""
    numbers, centred, count = nan_centred(a, axis, ddof if correction is None else correction)
    da = masked(expand(dy / y, a, axis, keepdims) * centred / count, numbers)


def nan_centred(a, axis, ddof):
    """Where a holds numbers, a less the mean of its slice's numbers (NaN at a
    NaN, to be masked), and the count of numbers less ddof in each slice (axes
    kept)."""
    numbers = ~np.isnan(a)
    centred = a - np.nanmean(a, axis=axis, keepdims=True)
    return numbers, centred, np.sum(numbers, axis=axis, keepdims=True) - ddof


@adjoint(np.nanmax, np.nanmin)
def nan_extreme(dy, y, a, axis=None, out=None, keepdims=False):
    """As np.max: the elements equal to the extreme share its gradient evenly
    (a NaN equals nothing, so gets none)."""
    mask = a == expand(y, a, axis, keepdims)
    da = masked(expand(dy, a, axis, keepdims) / np.maximum(np.sum(mask, axis=axis, keepdims=True),
                                                           1), mask)


@adjoint(np.nanprod)
def nanprod(dy, y, a, axis=None, dtype=None, out=None, keepdims=False):
    """np.prod with NaNs counted as 1: each number gets the product of the others."""
    numbers = ~np.isnan(a)
    da = masked(expand(dy, a, axis, keepdims) * product_of_others(np.where(numbers, a, 1.0), axis),
                numbers)


@adjoint(np.nancumsum)
def nancumsum(dy, y, a, axis=None, dtype=None, out=None):
    """np.cumsum with NaNs counted as 0."""
    if axis is None:
        da = masked(np.reshape(reverse_cumsum(dy, 0), np.shape(a)), ~np.isnan(a))
    else:
        da = masked(reverse_cumsum(dy, axis), ~np.isnan(a))


@adjoint(np.nancumprod)
def nancumprod(dy, y, a, axis=None, dtype=None, out=None):
    """np.cumprod with NaNs counted as 1."""
    numbers = ~np.isnan(a)
    ones = np.where(numbers, a, 1.0)
    if axis is None:
        da = masked(np.reshape(cumprod_gradient(dy, y, np.ravel(ones), 0), np.shape(a)), numbers)
    else:
        da = masked(cumprod_gradient(dy, y, ones, axis), numbers)


# --- reductions written as ufunc methods: axis 0 unless told ---------------------


@adjoint(np.add.reduce)
def add_reduce(dy, y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=True):
    """np.sum; an initial value is added to every result."""
    refuse_where(where, "np.add.reduce")
    darray = spread(dy, array, axis, keepdims)
    dinitial = np.sum(dy)


@adjoint(np.multiply.reduce)
def multiply_reduce(dy, y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                    where=True):
    """np.prod; an initial value multiplies every result."""
    refuse_where(where, "np.multiply.reduce")
    g = expand(dy, array, axis, keepdims)
    others = product_of_others(array, axis)
    darray = g * others if initial is None else g * others * initial
    dinitial = np.sum(g * np.prod(array, axis=axis, keepdims=True))


@adjoint(np.maximum.reduce, np.minimum.reduce)
def extreme_reduce(dy, y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                   where=True):
    """As np.max and np.min: ties share the gradient evenly."""
    refuse_where(where, "np.maximum.reduce and np.minimum.reduce")
    if initial is not None:
        raise NotImplementedError("the gradient of np.maximum.reduce and np.minimum.reduce "
                                  "with initial= is not provided; write "
                                  "np.maximum(initial, np.max(array, axis)) instead")
    mask = array == expand(y, array, axis, keepdims)
    darray = masked(expand(dy, array, axis, keepdims) / np.sum(mask, axis=axis, keepdims=True),
                    mask)


def refuse_where(where, name):
    if where is not True:
        raise NotImplementedError(f"the gradient of {name} with where= is not provided; "
                                  "mask the array first (np.where(mask, array, identity))")


@adjoint(np.add.accumulate)
def add_accumulate(dy, y, array, axis=0, dtype=None, out=None):
    """np.cumsum along one axis."""
    darray = reverse_cumsum(dy, axis)


@adjoint(np.multiply.accumulate)
def multiply_accumulate(dy, y, array, axis=0, dtype=None, out=None):
    """np.cumprod along one axis: exact with zeros too."""
    darray = cumprod_gradient(dy, y, array, axis)


@adjoint(np.linalg.norm)
def norm(dy, y, x, ord=None, axis=None, keepdims=False):
    """Vector norms of any order p; the Frobenius, spectral (2), smallest
    singular value (-2) and nuclear norms of matrices."""
    matrix = (axis is None and np.ndim(x) == 2) or (isinstance(axis, tuple) and len(axis) == 2)
    if matrix and ord not in (None, "fro", 2, -2, "nuc"):
        raise NotImplementedError(f"the gradient of the matrix norm ord={ord!r} is not provided; "
                                  "ord=None, 'fro', 2, -2 and 'nuc' are")
    p = 2 if ord in (None, "fro") else ord
    g = expand(dy, x, axis, keepdims)
    n = expand(y, x, axis, keepdims)
    if matrix and ord in (2, -2, "nuc"):
        dx = singular_value_norm_gradient(g, x, ord, axis)
    elif p == 0:  # the count of non-zero entries: piecewise constant
        dx = zeros_like_input(x)
    elif p == 2:
        dx = g * x / n
    elif p == 1:
        dx = g * np.sign(x)
    elif p in (np.inf, -np.inf):
        hit = np.abs(x) == n
        dx = masked(g * np.sign(x) / np.sum(hit, axis=axis, keepdims=True), hit)
    else:
        dx = g * np.sign(x) * np.abs(x) ** (p - 1) / n ** (p - 1)


def singular_value_norm_gradient(g, x, ord, axis):
    """The nuclear norm, the sum of the singular values, moves with U Vt; the
    largest (ord=2) or smallest (-2) singular value with its own u v^T. Not
    differentiable, so refused, where that singular value repeats, or, for
    -2 and 'nuc', is 0. `g` has the matrix axes kept (as size 1)."""
    rows, cols = (0, 1) if axis is None else (axis[0] % np.ndim(x), axis[1] % np.ndim(x))
    last = (rows, cols) == (np.ndim(x) - 2, np.ndim(x) - 1)
    u, s, vt = np.linalg.svd(x if last else np.moveaxis(x, (rows, cols), (-2, -1)),
                             full_matrices=False)
    k = np.shape(s)[-1]
    if ord == "nuc":
        if np.any(indistinct(s, 0.0, s)):
            raise NotImplementedError("the nuclear norm is not differentiable at a matrix with a "
                                      "singular value 0 (below full rank)")
        direction = u @ vt
    else:
        pick, beside = (0, 1) if ord == 2 else (k - 1, k - 2)
        if (k > 1 and np.any(indistinct(s[..., pick], s[..., beside], s))) \
                or (ord == -2 and np.any(indistinct(s, 0.0, s))):
            raise NotImplementedError(
                f"the matrix norm ord={ord} is not differentiable where its singular value "
                "repeats" + (" or is 0" if ord == -2 else ""))
        direction = u[..., :, pick:pick + 1] @ vt[..., pick:pick + 1, :]
    d = direction if last else np.moveaxis(direction, (-2, -1), (rows, cols))
    return g * d


# --- order statistics: quantiles, percentiles, medians ----------------------------


QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint")


@adjoint(np.quantile)
def quantile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """Between the sorted samples at ranks floor(q (n - 1)) and the next, by `method`."""
    method = quantile_method(method, interpolation, weights)
    da, dq = order_statistic_gradient(dy, a, q, 1, axis, method, skip_nan=False)


@adjoint(np.nanquantile)
def nanquantile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """np.quantile of the samples that are not NaN (NaNs sort last)."""
    method = quantile_method(method, interpolation, weights)
    da, dq = order_statistic_gradient(dy, a, q, 1, axis, method, skip_nan=True)


@adjoint(np.percentile)
def percentile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """np.quantile of q / 100."""
    method = quantile_method(method, interpolation, weights)
    da, dq = order_statistic_gradient(dy, a, q, 100, axis, method, skip_nan=False)


@adjoint(np.nanpercentile)
def nanpercentile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    method = quantile_method(method, interpolation, weights)
    da, dq = order_statistic_gradient(dy, a, q, 100, axis, method, skip_nan=True)


@adjoint(np.median)
def median(dy, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """np.quantile of 0.5."""
    da = order_statistic_gradient(dy, a, 0.5, 1, axis, "linear", skip_nan=False)[0]


@adjoint(np.nanmedian)
def nanmedian(dy, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    da = order_statistic_gradient(dy, a, 0.5, 1, axis, "linear", skip_nan=True)[0]


def quantile_method(method, interpolation, weights):
    """The interpolation method, where the rule covers it. (overwrite_input=True
    is refused before: it lets NumPy reorder its argument in place.)"""
    method = method if interpolation is None else interpolation
    if weights is not None or method not in QUANTILE_METHODS:
        raise NotImplementedError(
            "the gradient of quantiles covers method='linear', 'lower', 'higher' and "
            "'midpoint', without weights")
    return method


def order_statistic_gradient(dy, a, q, scale, axis, method, skip_nan):
    """(da, dq) for quantiles q / scale of a along `axis`. Each result mixes
    two sorted samples: its gradient goes to the ranks it mixes, and back
    through the sort. Ties in a are ranked as np.argsort ranks them (a tie is a
    kink, as for np.sort). q moves the mix along the slope between the two
    samples ('linear' only; the other methods are piecewise constant in q),
    at a rank itself by the mean of the slopes on either side."""
    q = as_array(q)
    samples = samples_last(a, axis)
    order = np.argsort(samples, axis=-1)
    ranked = np.take_along_axis(samples, order, axis=-1)
    n = np.shape(samples)[-1]
    count = np.sum(~np.isnan(samples), axis=-1) if skip_nan else n
    position = np.reshape(q, np.shape(q) + (1,) * (np.ndim(samples) - 1)) / scale * (count - 1)
    below = np.floor(position)
    above = np.ceil(position)
    ranks = np.arange(n)
    if method == "linear":
        share = np.expand_dims(position - below, -1)
        weights = (ranks == np.expand_dims(below, -1)) * (1 - share) \
            + (ranks == np.expand_dims(below, -1) + 1) * share
    elif method == "midpoint":
        weights = (ranks == np.expand_dims(below, -1)) * 0.5 \
            + (ranks == np.expand_dims(above, -1)) * 0.5
    else:
        weights = ranks == np.expand_dims(below if method == "lower" else above, -1)
    g = np.reshape(dy, np.shape(q) + np.shape(samples)[:-1])
    dranked = np.expand_dims(g, -1) * weights
    if np.ndim(q):
        dranked = np.sum(dranked, axis=tuple(range(np.ndim(q))))
    da = samples_back(np.take_along_axis(dranked, np.argsort(order, axis=-1), axis=-1), a, axis)
    if is_static(q) or method != "linear":
        return da, 0
    before = np.where(position == below, np.maximum(below - 1, 0), below)
    after = np.minimum(below + 1, count - 1)
    slope = (at_rank(ranked, after) - at_rank(ranked, before)) / np.maximum(after - before, 1)
    dq = g * slope * (count - 1) / scale
    rest = tuple(range(np.ndim(q), np.ndim(dq)))
    return da, np.sum(dq, axis=axes_argument(rest)) if rest else dq


def samples_last(a, axis):
    """a with the reduced axes merged into one, last (axis=None: all of them)."""
    if axis is None:
        return np.ravel(a)
    axes = tuple(i % np.ndim(a) for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    last = tuple(range(np.ndim(a) - len(axes), np.ndim(a)))
    moved = a if axes == last else np.moveaxis(a, axes, last)
    if len(axes) == 1:
        return moved
    return np.reshape(moved, np.shape(moved)[:np.ndim(a) - len(axes)] + (-1,))


def samples_back(g, a, axis):
    """The gradient of samples_last(a, axis), for a."""
    if axis is None:
        return np.reshape(g, np.shape(a))
    axes = tuple(i % np.ndim(a) for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    last = tuple(range(np.ndim(a) - len(axes), np.ndim(a)))
    moved_shape = tuple(n for i, n in enumerate(np.shape(a)) if i not in axes) + tuple(
        np.shape(a)[i] for i in axes)
    if len(axes) > 1:
        g = np.reshape(g, moved_shape)
    return g if axes == last else np.moveaxis(g, last, axes)


def at_rank(ranked, rank):
    """ranked[..., rank], for ranks with q's axes in front of ranked's own."""
    lead = np.ndim(rank) - np.ndim(ranked) + 1
    ranked = np.reshape(ranked, (1,) * lead + np.shape(ranked)) if lead else ranked
    return np.take_along_axis(ranked, np.expand_dims(rank, -1).astype(int), axis=-1)[..., 0]


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


@adjoint(np.bincount)
def bincount(dy, y, x, weights=None, minlength=0):
    """Bin k sums the weights of the entries equal to k (x is piecewise constant)."""
    dweights = cast(dy[x], weights)


@adjoint(np.histogram)
def histogram(dy, y, a, bins=10, range=None, density=None, weights=None):
    """The counts are piecewise constant in the samples and the edges; the
    edges are bins given as an array, or spaced over `range` or over the data's
    extent. Weights pass their bin's gradient back unless `density` normalises
    them; what depends on the data's extent or the bins' widths is refused."""
    dhist, dedges = dy
    da = histogram_sample_gradient(dedges, a, bins, range, density)
    dbins = histogram_bins_gradient(dedges, bins, density)
    drange = [histogram_range_gradient(dedges, y[1], density, i) for i in (0, 1)]
    dweights = histogram_weight_gradient(dhist, a, y[1], weights, density)


def histogram_sample_gradient(dedges, a, bins, range, density):
    if range is None and np.ndim(bins) == 0 and (dedges is not None or density):
        raise NotImplementedError("np.histogram's edges follow the data's extent; pass "
                                  "range= or an array of bins to differentiate it")
    return zeros_like_input(a)


def histogram_bins_gradient(dedges, bins, density):
    if density:
        raise NotImplementedError("np.histogram(..., density=True) divides by bin widths; "
                                  "its gradient in the bins is not provided")
    return zeros_like_input(bins) if dedges is None else cast(dedges, bins)


def histogram_range_gradient(dedges, edges, density, end):
    """Edge i is range[0] + (range[1] - range[0]) * i / bins."""
    if density:
        raise NotImplementedError("np.histogram(..., density=True) divides by bin widths; "
                                  "its gradient in range= is not provided")
    if dedges is None:
        return 0.0
    t = np.linspace(0.0, 1.0, np.size(edges))
    return np.sum(dedges * (t if end else 1.0 - t))


def histogram_weight_gradient(dhist, a, edges, weights, density):
    """Each weight gets the gradient of the bin its sample falls in (the last
    bin is closed); samples outside the edges get none."""
    if density:
        raise NotImplementedError("np.histogram(..., density=True) normalises the weights; "
                                  "its gradient in them is not provided")
    if dhist is None:
        return zeros_like_input(weights)
    count = np.size(edges) - 1
    samples = np.ravel(a)
    bins = np.clip(np.searchsorted(edges, samples, side="right") - 1, 0, count - 1)
    inside = (samples >= edges[0]) & (samples <= edges[count])
    return cast(np.reshape(np.where(inside, dhist[bins], 0.0), np.shape(weights)), weights)
