"""Numerical methods on sampled data: differences, finite-difference
derivatives, integrals, polynomials, convolutions and interpolation.

Each of them is linear in its samples, so their gradients are the transposed
operators: a difference's is a difference the other way round, a convolution's
a correlation.
"""

import numpy as np

from yota_src.rules import adjoint, is_static, primitives

from .helpers import along, as_array, cast, pieces_of, unbroadcast


@adjoint(np.diff)
def diff(dy, y, a, n=1, axis=-1, prepend=None, append=None):
    """The n-th difference of [prepend, a, append] along `axis`: its adjoint is
    (-1)^n times the n-th difference of the gradient padded with n zeros at both
    ends, split back into the three parts (a scalar prepend gets its column's sum)."""
    axis = axis % np.ndim(a)
    joined = difference_adjoint(dy, n, axis) if n else dy
    before = 0 if prepend is None or not n else difference_part_width(prepend, axis)
    da = joined[along(axis, slice(before, before + np.shape(a)[axis]))]
    dprepend = difference_part(joined, prepend, axis, slice(0, before), n)
    dappend = difference_part(joined, append, axis,
                              slice(before + np.shape(a)[axis], np.shape(joined)[axis]), n)


def difference_adjoint(g, n, axis):
    """The adjoint of np.diff(., n, axis): (-1)^n diff(g padded with n zeros each side)."""
    g = np.diff(np.pad(g, end_pads(g, axis, n, n)), n, axis=axis)
    return -g if n % 2 else g


def difference_part_width(part, axis):
    """How many samples `part` (np.diff's prepend or append) adds along `axis`."""
    return 1 if np.ndim(part) == 0 else np.shape(part)[axis]


def difference_part(joined, part, axis, piece, n):
    """The gradient of np.diff's prepend or append: its slice of the joined
    gradient, summed back to a scalar broadcast along the axis."""
    if part is None:
        return None
    if not n:  # np.diff(a, 0) returns a without reading them
        return 0
    return unbroadcast(joined[along(axis, piece)], part)


# --- finite-difference derivatives ------------------------------------------------


@adjoint(np.gradient)
def gradient(dy, y, f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside, one-sided ones of `edge_order`
    at the ends. Along each axis, with h the spacing (a scalar, or the
    differences of coordinates) and s = diff(f) / h the slopes between samples,
    sample i is s_(i-1) + w_i (s_i - s_(i-1)) with w_i = h_(i-1) / (h_(i-1) + h_i),
    and the ends are s_0, s_(n-2) (first order) or extrapolated slopes (second
    order). A scalar spacing h scales the result by 1 / h."""
    axes = gradient_axes(f, axis)
    spacings = gradient_spacings(varargs, len(axes))
    pieces = [(dy, y)] if len(axes) == 1 else list(zip(dy, y))
    results = [finite_difference_adjoint(g, out, f, axis_k, varargs[source] if varargs else 1.0,
                                         edge_order) if g is not None else None
               for (g, out), axis_k, source in zip(pieces, axes, spacings)]
    df = sum_of(result[0] for result in results if result is not None)
    dvarargs = [spacing_gradient([result[1] for result, source in zip(results, spacings)
                                  if result is not None and source == i], spacing)
                for i, spacing in enumerate(varargs)]


def gradient_axes(f, axis):
    """The axes np.gradient differentiates along, in its order."""
    if axis is None:
        return list(range(np.ndim(f)))
    return [a % np.ndim(f) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]


def gradient_spacings(varargs, count):
    """For each axis, which of np.gradient's spacing arguments it reads (one
    scalar may serve every axis); None where there are none (unit spacing)."""
    if not varargs:
        return [None] * count
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [0] * count
    return list(range(count))


def sum_of(terms):
    total = None
    for term in terms:
        total = term if total is None else total + term
    return total


def spacing_gradient(parts, spacing):
    """A spacing argument's gradient, from each axis that reads it."""
    if is_static(spacing) or not parts:
        return None
    return cast(sum_of(parts), spacing)


def finite_difference_adjoint(g, out, f, axis, spacing, edge_order):
    """(the gradient of f, the gradient of the spacing) for one axis of np.gradient."""
    n = np.shape(f)[axis]
    scalar = np.ndim(spacing) == 0
    h = spacing if scalar else aligned(np.diff(spacing), axis, np.ndim(f))
    weight = 0.5 if scalar else h[along(axis, slice(0, n - 2))] / (
        h[along(axis, slice(0, n - 2))] + h[along(axis, slice(1, n - 1))])
    start, end = edge_weights(h, axis, n, edge_order, scalar)
    ds = np.zeros(along_shape(f, axis, n - 1), np.result_type(f, 1.0))
    if n > 2:
        inner = g[along(axis, slice(1, n - 1))]
        ds = primitives.index_add(ds, along(axis, slice(0, n - 2)), inner * (1 - weight))
        ds = primitives.index_add(ds, along(axis, slice(1, n - 1)), inner * weight)
    first, last = g[along(axis, slice(0, 1))], g[along(axis, slice(n - 1, n))]
    if edge_order == 1:
        ds = primitives.index_add(ds, along(axis, slice(0, 1)), first)
        ds = primitives.index_add(ds, along(axis, slice(n - 2, n - 1)), last)
    else:
        ds = primitives.index_add(ds, along(axis, slice(0, 1)), first * (1 + start))
        ds = primitives.index_add(ds, along(axis, slice(1, 2)), -(first * start))
        ds = primitives.index_add(ds, along(axis, slice(n - 2, n - 1)), last * (1 + end))
        ds = primitives.index_add(ds, along(axis, slice(n - 3, n - 2)), -(last * end))
    unit = scalar and is_static(spacing) and spacing == 1
    df = -np.diff(np.pad(ds if unit else ds / h, end_pads(f, axis, 1, 1)), axis=axis)
    if is_static(spacing):
        return df, None
    if scalar:
        return df, -np.sum(g * out) / spacing
    return df, coordinate_gradient(g, f, axis, h, ds, weight, start, end, edge_order)


def along_shape(a, axis, length):
    """a's shape with `length` along `axis`."""
    shape = list(np.shape(a))
    shape[axis] = length
    return tuple(shape)


def aligned(v, axis, ndim):
    """A 1-D array shaped to lie along `axis` of an ndim-dimensional array."""
    shape = [1] * ndim
    shape[axis] = np.size(v)
    return v if ndim == 1 else np.reshape(v, tuple(shape))


def edge_weights(h, axis, n, edge_order, scalar):
    """u and v of second-order ends: sample 0 is s_0 - u (s_1 - s_0) and sample
    n-1 is s_(n-2) + v (s_(n-2) - s_(n-3)), u and v the end spacings' shares."""
    if edge_order == 1:
        return None, None
    if edge_order != 2:
        raise NotImplementedError("np.gradient's edge_order is 1 or 2")
    if scalar:
        return 0.5, 0.5
    h0, h1 = h[along(axis, slice(0, 1))], h[along(axis, slice(1, 2))]
    before, last = h[along(axis, slice(n - 3, n - 2))], h[along(axis, slice(n - 2, n - 1))]
    return h0 / (h0 + h1), last / (before + last)


def coordinate_gradient(g, f, axis, h, ds, weight, start, end, edge_order):
    """The gradient of np.gradient's coordinates along `axis`: through the
    slopes s = diff(f) / h, the weights of the interior samples and of the
    second-order ends, each a function of the spacings h = diff(coordinates)."""
    n = np.shape(f)[axis]
    others = tuple(i for i in range(np.ndim(f)) if i != axis)
    total = (lambda v: np.sum(v, axis=others, keepdims=True)) if others else (lambda v: v)
    s = np.diff(f, axis=axis) / h
    dh = -total(ds * s / h)
    if n > 2:
        left, right = h[along(axis, slice(0, n - 2))], h[along(axis, slice(1, n - 1))]
        dweight = total(g[along(axis, slice(1, n - 1))] * (
            s[along(axis, slice(1, n - 1))] - s[along(axis, slice(0, n - 2))]))
        squared = (left + right) ** 2
        dh = primitives.index_add(dh, along(axis, slice(0, n - 2)), dweight * right / squared)
        dh = primitives.index_add(dh, along(axis, slice(1, n - 1)), -dweight * left / squared)
    if edge_order == 2:
        dh = end_spacing_gradient(dh, -total(g[along(axis, slice(0, 1))] * (
            s[along(axis, slice(1, 2))] - s[along(axis, slice(0, 1))])), h, axis, 0, 1)
        dh = end_spacing_gradient(dh, total(g[along(axis, slice(n - 1, n))] * (
            s[along(axis, slice(n - 2, n - 1))] - s[along(axis, slice(n - 3, n - 2))])),
            h, axis, n - 2, n - 3)
    return np.ravel(-np.diff(np.pad(dh, end_pads(f, axis, 1, 1)), axis=axis))


def end_spacing_gradient(dh, dshare, h, axis, own, other):
    """dh plus the gradient through share = h_own / (h_own + h_other)."""
    h_own, h_other = h[along(axis, slice(own, own + 1))], h[along(axis, slice(other, other + 1))]
    squared = (h_own + h_other) ** 2
    dh = primitives.index_add(dh, along(axis, slice(own, own + 1)), dshare * h_other / squared)
    return primitives.index_add(dh, along(axis, slice(other, other + 1)),
                                -dshare * h_own / squared)


# --- integrals ---------------------------------------------------------------------


TRAPEZOID_FUNCTIONS = tuple(getattr(np, name) for name in ("trapezoid", "trapz")
                            if hasattr(np, name))


@adjoint(*TRAPEZOID_FUNCTIONS)
def trapezoid(dout, out, y, x=None, dx=1.0, axis=-1):
    """sum(d * (y[1:] + y[:-1]) / 2) along `axis`, d = diff(x) or dx: each
    sample gets half of the widths beside it; a width d_i gets the mean of
    its two samples, and coordinate i the difference of its two widths'.
    Also np.trapz, in the NumPy versions that have it.
    (The parameter `dx` is the spacing; the gradient of `x` is also `dx`,
    assigned last, and the spacing's is `ddx`.)"""
    samples = as_array(y)
    axis = axis % np.ndim(samples)
    n = np.shape(samples)[axis]
    g = dout if np.ndim(samples) == 1 else np.expand_dims(dout, axis)
    widths = dx if x is None else trapezoid_widths(x, axis, np.ndim(samples))
    half = to_shape(g * widths * 0.5, along_shape(samples, axis, n - 1))
    dy = pieces_of(cast(np.pad(half, end_pads(samples, axis, 1, 0))
                        + np.pad(half, end_pads(samples, axis, 0, 1)), samples), y)
    means = g * (samples[along(axis, slice(1, n))] + samples[along(axis, slice(0, n - 1))]) * 0.5
    ddx = cast(np.sum(means), dx) if x is None else 0  # unread when x is given
    dx = coordinates_back(means, x, axis)


def end_pads(a, axis, before, after):
    """np.pad's widths adding `before` and `after` zeros along `axis` only."""
    widths = [(0, 0)] * np.ndim(a)
    widths[axis] = (before, after)
    return widths


def to_shape(v, shape):
    """v broadcast to `shape`, where it is not that shape already."""
    return v if np.shape(v) == shape else np.broadcast_to(v, shape)


def trapezoid_widths(x, axis, ndim):
    """The widths between samples: diff(x) along `axis` (a 1-D x lies along it)."""
    if np.ndim(x) == 1:
        shape = [1] * ndim
        shape[axis] = np.size(x) - 1
        return np.reshape(np.diff(x), tuple(shape)) if ndim > 1 else np.diff(x)
    return np.diff(x, axis=axis)


def coordinates_back(means, x, axis):
    """The gradient of trapezoid's x from its widths' gradient `means`."""
    if x is None:
        return None
    if np.ndim(x) == 1:
        others = tuple(i for i in range(np.ndim(means)) if i != axis)
        dwidths = np.sum(means, axis=others) if others else means
        return cast(np.pad(dwidths, (1, 0)) - np.pad(dwidths, (0, 1)), x)
    return unbroadcast(np.pad(means, end_pads(means, axis, 1, 0))
                       - np.pad(means, end_pads(means, axis, 0, 1)), x)


# --- polynomials -------------------------------------------------------------------


@adjoint(np.polyval)
def polyval(dy, y, p, x):
    """p_0 x^(n-1) + ... + p_(n-1): coefficient i gets the sum of dy x^(n-1-i),
    x the derivative polynomial's value."""
    if np.ndim(p) != 1:
        raise NotImplementedError("the rule for np.polyval covers 1-D coefficients")
    n = np.shape(p)[0]
    g = np.broadcast_to(dy, np.shape(y))
    dp = pieces_of(cast(np.ravel(g) @ np.vander(np.ravel(np.broadcast_to(x, np.shape(y))), n), p),
                   p)
    dx = unbroadcast(dy * np.polyval(np.asarray(p)[:-1] * np.arange(n - 1, 0, -1), x), x)


@adjoint(np.vander)
def vander(dy, y, x, N=None, increasing=False):
    """Column j is x ** p_j, p_j = N - 1 - j (or j if `increasing`): x_i gets
    the sum of dy_ij p_j x_i ** (p_j - 1) over the columns with p_j >= 1, the
    powers themselves a Vandermonde matrix one column narrower."""
    columns = np.shape(y)[1]
    if columns < 2:
        dx = 0  # constant columns (or none)
    else:
        dx = pieces_of(cast(np.sum(vander_slopes(dy, x, columns, increasing), axis=1), x), x)


def vander_slopes(dy, x, columns, increasing):
    """dy_ij p_j x_i ** (p_j - 1) for the columns with p_j >= 1."""
    if increasing:
        return dy[:, 1:] * np.arange(1, columns) * np.vander(x, columns - 1, True)
    return dy[:, :-1] * np.arange(columns - 1, 0, -1) * np.vander(x, columns - 1)


# --- convolutions ------------------------------------------------------------------


@adjoint(np.convolve)
def convolve(dy, y, a, v, mode="full"):
    """The full convolution's gradient G (dy where `mode` cut it out, zeros
    around): da = correlate(G, v), dv = correlate(G, a), both 'valid'."""
    g = cut_back(dy, np.size(a), np.size(v), convolution_mode(mode), late=False)
    da = pieces_of(cast(np.correlate(g, np.ravel(v), "valid"), a), a)
    dv = pieces_of(cast(np.correlate(g, np.ravel(a), "valid"), v), v)


@adjoint(np.correlate)
def correlate(dy, y, a, v, mode="valid"):
    """convolve(a, flip(v)); its 'same' part starts one later when v is the longer."""
    g = cut_back(dy, np.size(a), np.size(v), convolution_mode(mode),
                 late=np.size(v) > np.size(a))
    da = pieces_of(cast(np.convolve(g, np.ravel(v), "valid"), a), a)
    dv = pieces_of(cast(np.flip(np.correlate(g, np.ravel(a), "valid")), v), v)


def convolution_mode(mode):
    """'full', 'same' or 'valid', from any spelling NumPy accepts ('f', 'Same', 2)."""
    if isinstance(mode, str):
        return {"v": "valid", "s": "same", "f": "full"}[mode.lower()[0]]
    return ("valid", "same", "full")[mode]


def cut_back(dy, n_a, n_v, mode, late):
    """dy where `mode` cut it from the full result (n_a + n_v - 1 long), zeros
    around: 'valid' starts where the shorter input first lies inside the
    longer, 'same' is centred (one later if `late`)."""
    if mode == "full":
        return dy
    extra = n_a + n_v - 1 - np.size(dy)
    if mode == "valid":
        start = min(n_a, n_v) - 1
    else:
        start = (extra + 1) // 2 if late else extra // 2
    return np.pad(dy, (start, extra - start))


# --- interpolation -----------------------------------------------------------------


@adjoint(np.interp)
def interp(dy, y, x, xp, fp, left=None, right=None, period=None):
    """On segment j, y = fp_j (1 - t) + fp_(j+1) t with t = (x - xp_j) / (xp_(j+1) - xp_j);
    outside, y is `left` or `right` (fp's ends by default). fp and the ends get
    the weights; x the segment's slope; xp_j and xp_(j+1) the slope times
    t - 1 and -t. At a knot, where x or xp moves onto another segment, x and xp
    get the mean of the two one-sided derivatives. Where the interpolant jumps
    (a repeated knot with two values, xp=[0, 1, 1, 2]; or left/right unlike
    fp's ends) it has no derivative in x or xp: a point exactly there is
    refused, and checked in the generated code. fp's gradient is the weight
    NumPy gives each value, there too."""
    if period is not None:
        raise NotImplementedError("the rule for np.interp covers period=None")
    g = np.ravel(np.broadcast_to(dy, np.shape(y)))
    points, knots, values = np.ravel(x), as_array(xp), as_array(fp)
    count = np.size(knots)
    below, above = points < knots[0], points > knots[-1]
    lower, t = interpolation_segment(points, knots, "right")
    inside = ~below & ~above
    share = ends_share(g, below, above, left, right, count)
    share = primitives.index_add(share, lower, np.where(inside, g * (1 - t), 0.0))
    share = primitives.index_add(share, lower + 1, np.where(inside, g * t, 0.0))
    dfp = pieces_of(cast(share, fp), fp)
    dleft = np.sum(np.where(below, g, 0.0))
    dright = np.sum(np.where(above, g, 0.0))
    ends = (values[0] if left is None else left, values[-1] if right is None else right)
    dx = shaped_as(cast(knot_mean(interpolation_slope_x, g, points, knots, values, ends), x), x)
    dxp = pieces_of(cast(knot_mean(interpolation_slope_xp, g, points, knots, values, ends), xp),
                    xp)


def shaped_as(g, x):
    """A flat gradient in x's shape; a number for a number."""
    return g[0] if np.ndim(x) == 0 else np.reshape(g, np.shape(x))


def interpolation_segment(points, xp, side):
    """The segment j each point lies on (a knot counts as the one to its `side`)
    and where on it, t. Knots that may repeat (traced ones, or constants that
    do) can give a segment of width 0, reached only at the ends: a point at a
    repeated last knot, where NumPy gives the last value (so t = 1), or one
    outside xp (masked later)."""
    j = np.clip(np.searchsorted(xp, points, side=side) - 1, 0, np.size(xp) - 2)
    width = xp[j + 1] - xp[j]
    if distinct_knots(xp):
        return j, (points - xp[j]) / width
    return j, np.where(width == 0, 1.0, (points - xp[j]) / np.where(width == 0, 1.0, width))


def distinct_knots(xp):
    """Knots known while generating, none repeated."""
    return is_static(xp) and bool(np.all(np.diff(xp) != 0))


def ends_share(g, below, above, left, right, count):
    """What fp's ends get from the points outside xp, where left and right
    are not given."""
    share = np.zeros(count)
    if left is None:
        share = primitives.index_add(share, 0, np.sum(np.where(below, g, 0.0)))
    if right is None:
        share = primitives.index_add(share, count - 1, np.sum(np.where(above, g, 0.0)))
    return share


def knot_mean(one_sided, g, points, xp, fp, ends):
    """The mean of the derivatives on the segment to the right of each point
    (where it lies inside [xp_0, xp_-1)) and to its left (inside (xp_0, xp_-1]):
    the same segment but at the knots. Refused where the interpolant jumps."""
    require_continuous(points, xp, fp, ends)
    right = one_sided(g, points, xp, fp, "right", (points >= xp[0]) & (points < xp[-1]))
    left = one_sided(g, points, xp, fp, "left", (points > xp[0]) & (points <= xp[-1]))
    return (right + left) * 0.5


def require_continuous(points, xp, fp, ends):
    """Refuse points on a knot where the interpolant's limits from the left
    and right differ: a repeated knot with two values, or an end of xp where
    `left` or `right` (`ends`) is not fp's value there. The check is kept in
    the generated code, which refuses such data."""
    first = np.searchsorted(xp, points, side="left")  # the run of knots equal to a point
    last = np.searchsorted(xp, points, side="right") - 1
    count = np.size(xp)
    from_left = np.where(first == 0, ends[0], fp[np.clip(first, 0, count - 1)])
    from_right = np.where(last == count - 1, ends[1], fp[np.clip(last, 0, count - 1)])
    if np.any((last >= first) & (from_left != from_right)):
        raise NotImplementedError(
            "np.interp has no derivative in x or xp at a point where the interpolant jumps "
            "(a repeated knot with two values, or an end of xp where left= or right= differs "
            "from fp); move the point off the knot, or stop differentiating x and xp")


def segment_slope(points, xp, fp, side):
    j, t = interpolation_segment(points, xp, side)
    width = xp[j + 1] - xp[j]
    return j, t, (fp[j + 1] - fp[j]) / (width if distinct_knots(xp) else
                                         np.where(width == 0, 1.0, width))


def interpolation_slope_x(g, points, xp, fp, side, on):
    j, t, slope = segment_slope(points, xp, fp, side)
    return np.where(on, g * slope, 0.0)


def interpolation_slope_xp(g, points, xp, fp, side, on):
    j, t, slope = segment_slope(points, xp, fp, side)
    share = primitives.index_add(np.zeros(np.size(xp)), j, np.where(on, g * slope * (t - 1), 0.0))
    return primitives.index_add(share, j + 1, np.where(on, -g * slope * t, 0.0))
