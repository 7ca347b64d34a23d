"""Static helpers for templates.

The unroller runs these at instantiation with the op's shapes known, so their
branches fold away: the generated code holds exactly the reduction needed,
or nothing when the shapes already match.
"""

import numpy as np

from yota_src.rules import is_static, primitives


def axes_argument(axes):
    """An `axis=` argument as a reader would write it: `1` rather than `(1,)`."""
    axes = tuple(axes)
    return axes[0] if len(axes) == 1 else axes


def normalize_axes(axis, ndim):
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return axis % ndim


def unbroadcast(g, x):
    """Sum the gradient `g` down to the shape of `x`, undoing broadcasting."""
    return cast(sum_to_shape(g, np.shape(x)), x)


def sum_to_shape(g, shape):
    """Sum `g` down to `shape`, undoing broadcasting to g's shape."""
    if np.shape(g) != shape:
        lead = np.ndim(g) - len(shape)
        if lead == np.ndim(g):
            g = np.sum(g)
        elif lead:
            g = np.sum(g, axis=axes_argument(range(lead)))
        kept = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
        if kept:
            g = np.sum(g, axis=axes_argument(kept), keepdims=True)
    return g


def cast(g, like):
    """`g` in the dtype of `like`, so float32 inputs get float32 gradients."""
    if not isinstance(like, np.ndarray):
        return g
    dtype = np.result_type(like)
    if np.result_type(g) == dtype:
        return g
    if isinstance(g, (np.ndarray, np.generic)):
        return g.astype(dtype)
    return dtype.type(g)


def python_numbers(*values):
    """True when every value is a Python int or float (not a NumPy scalar):
    their arithmetic raises ZeroDivisionError where NumPy's gives inf or nan."""
    return all(type(value) in (int, float) for value in values)


def divide(a, b):
    """a / b in NumPy's arithmetic: where b is 0 the result is inf or nan, with
    NumPy's warning, also for Python floats (`math.sqrt` at 0)."""
    return np.divide(a, b) if python_numbers(a, b) else a / b


def power_base_gradient(dy, a, b):
    """dy * d(a ** b)/da = dy * b * a ** (b - 1), exactly 0 where b == 0 (a ** 0
    is 1 for every a, 0 included), so no 0 * inf is formed; where it is infinite
    (0 ** 0.5) it is inf, in NumPy's arithmetic also for Python floats."""
    if is_static(b):
        if b == 1:
            return dy
        if b > 1 or not python_numbers(a):
            return dy * b * a ** (b - 1)
        return dy * b * np.power(a, b - 1)  # a Python float: 0.0 ** -0.5 would raise
    return dy * b * np.power(a, np.where(b == 0, 1, b - 1))


def log_of_base(a):
    """log a, for d(a ** b)/db = a ** b * log a; taken as 0 where a == 0, since
    0 ** b is 0 for every b > 0 (so no 0 * -inf is formed)."""
    if is_static(a):
        return float(np.log(a))  # a number in the generated code, not a constant array
    return np.log(np.where(a == 0, 1, a))


def masked(g, mask):
    """g where `mask` holds, exactly 0 elsewhere: there the result does not
    depend on this argument, so an infinite g (sqrt at 0 downstream) must not
    make 0 * inf = nan. Scalars are multiplied, so a float's gradient stays a
    number."""
    if is_static(mask):
        return g if mask else 0
    if np.ndim(g) == 0 and np.ndim(mask) == 0:
        return g * mask
    return np.where(mask, g, 0)


def tie_share(g, wins, ties):
    """g where `wins`, half of it at `ties`, exactly 0 elsewhere (see masked)."""
    if np.ndim(g) == 0 and np.ndim(wins) == 0:
        return g * np.where(ties, 0.5, wins)
    return np.where(wins, g, np.where(ties, 0.5 * g, 0))


def expand(g, a, axis, keepdims):
    """Re-insert the axes a reduction over `axis` removed, for broadcasting."""
    if axis is None or keepdims:
        return g
    return np.expand_dims(g, normalize_axes(axis, np.ndim(a)))


def spread(g, a, axis, keepdims):
    """A reduction's gradient broadcast back over the whole of `a`."""
    return np.broadcast_to(expand(g, a, axis, keepdims), np.shape(a))


def as_array(a):
    """A list of values as one array (np.array records it, so a list holding
    traced values can be indexed); an array, or a number, as itself."""
    return np.asarray(a) if isinstance(a, (list, tuple)) else a


def zeros_like_input(a):
    """A fresh zero array shaped like `a`; the dtype is written only if not float64."""
    dtype = np.result_type(a)
    if dtype == np.float64:
        return np.zeros(np.shape(a))
    return np.zeros(np.shape(a), dtype)


def index_order(a, order):
    """The index order, "C" or "F", in which np.ravel or np.reshape reads `a`
    for `order`. "A" and "K" follow a's memory layout, which the gradient is
    not otherwise specialised to: the layout read is guarded. "K" of an array
    laid out in neither order (a strided or permuted view) is refused."""
    order = "C" if order is None else order.upper()
    if order in ("C", "F"):
        return order
    if sum(n > 1 for n in np.shape(a)) < 2:
        return "C"  # at most one axis longer than 1: every order reads alike
    if np.isfortran(a):  # Fortran-contiguous, so not C-contiguous: guarded
        return "F"
    if order == "A" or np.isfortran(np.transpose(a)):  # "K": C-contiguous, guarded
        return "C"
    raise NotImplementedError("np.ravel(..., order='K') of an array that is neither C- nor "
                              "Fortran-contiguous reads it in the order of its strides; "
                              "copy it first (np.ascontiguousarray) or pass order='C'")


def reshape_back(dy, a, order):
    """`dy` reshaped to a's shape, written in `order`."""
    if order == "F":
        return np.reshape(dy, np.shape(a), order="F")
    return np.reshape(dy, np.shape(a))


def selects_everything(index):
    """True for indices made only of `:`, `None` and `...`: they reshape, not select."""
    items = index if isinstance(index, tuple) else (index,)
    return all(item is None or item is Ellipsis
               or (isinstance(item, slice) and item == slice(None)) for item in items)


def aligned_weights(weights, a, axis):
    """1-D weights along `axis`, shaped to broadcast against `a`."""
    if np.ndim(weights) == np.ndim(a):
        return weights
    shape = [1] * np.ndim(a)
    shape[axis % np.ndim(a)] = np.size(weights)
    return np.reshape(weights, tuple(shape))


def reverse_cumsum(g, axis):
    """Sums from the end: the adjoint of a cumulative sum."""
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def cumprod_gradient(dy, y, a, axis):
    """The gradient of y = cumprod(a, axis): the sum over j >= i of dy_j y_j / a_i,
    and exact where `a` has zeros. Past the first zero along the axis every
    product is 0, and so is that sum; at the first zero itself the products
    that skip it are the cumulative products with it taken as 1."""
    zero = a == 0
    first = zero & (np.cumsum(zero, axis=axis) == 1)
    skipping = np.cumprod(np.where(first, 1, a), axis=axis)
    return np.where(first, reverse_cumsum(dy * skipping, axis),
                    reverse_cumsum(dy * y, axis) / np.where(zero, 1, a))


def along(axis, part):
    """An index taking `part` (a slice) along `axis`, everything elsewhere."""
    return (slice(None),) * axis + (part,)


def exclusive_products(a, axis):
    """For each element, the product of all others along `axis`."""
    axis = axis % np.ndim(a)
    n = np.shape(a)[axis]
    ones = np.ones(np.shape(a)[:axis] + (1,) + np.shape(a)[axis + 1:], np.result_type(a))
    before = np.cumprod(np.concatenate([ones, a[along(axis, slice(0, n - 1))]], axis=axis),
                        axis=axis)
    after = np.flip(np.cumprod(np.flip(np.concatenate([a[along(axis, slice(1, n))], ones],
                                                      axis=axis), axis), axis=axis), axis)
    return before * after


def product_of_others(a, axis):
    """exclusive_products over the axes a product reduced (None: all of them)."""
    if axis is None:
        return np.reshape(exclusive_products(np.ravel(a), 0), np.shape(a))
    axes = normalize_axes(axis if isinstance(axis, tuple) else (axis,), np.ndim(a))
    if len(axes) == 1:
        return exclusive_products(a, axes[0])
    last = tuple(range(np.ndim(a) - len(axes), np.ndim(a)))
    moved = np.moveaxis(a, axes, last)
    merged = np.reshape(moved, np.shape(moved)[: -len(axes)] + (-1,))
    return np.moveaxis(np.reshape(exclusive_products(merged, -1), np.shape(moved)), last, axes)


def split_back(dy, pieces, axis, originals=None):
    """The slices of `dy` along `axis` that each piece was joined at, reshaped
    to each original (hstack and friends join reshaped pieces)."""
    out, start = [], 0
    for i, piece in enumerate(pieces):
        width = np.shape(piece)[axis]
        part = dy[along(axis % np.ndim(dy), slice(start, start + width))]
        start = start + width
        original = piece if originals is None else originals[i]
        out.append(np.reshape(part, np.shape(original)))
    return out


def pieces_of(dy, structure):
    """The gradient of `np.array(structure)` for each traced item of a nested list."""
    if isinstance(structure, (list, tuple)):
        return [pieces_of(dy[i], item) for i, item in enumerate(structure)]
    return dy if np.shape(dy) == np.shape(structure) else np.reshape(dy, np.shape(structure))


def untile(dy, a, reps):
    """Sum the tiles of `np.tile(a, reps)` back onto `a`."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    ndim = max(len(reps), np.ndim(a))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - np.ndim(a)) + np.shape(a)
    interleaved = tuple(n for pair in zip(reps, shape) for n in pair)
    summed = np.sum(np.reshape(dy, interleaved), axis=tuple(range(0, 2 * ndim, 2)))
    return np.reshape(summed, np.shape(a))


def diagonal_back(dy, a, offset, axis1, axis2):
    """Place the gradient of a diagonal back on the diagonal of zeros shaped like `a`."""
    ndim = np.ndim(a)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    n = np.shape(dy)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    moved_shape = tuple(s for i, s in enumerate(np.shape(a)) if i not in (axis1, axis2)) + (
        np.shape(a)[axis1], np.shape(a)[axis2])
    moved = primitives.index_add(np.zeros(moved_shape, np.result_type(a)),
                                 (Ellipsis, rows, cols), dy)
    return np.moveaxis(moved, (ndim - 2, ndim - 1), (axis1, axis2))


def full_index(indices, axis, shape):
    """An advanced index that reads like take_along_axis(a, indices, axis) of
    an `a` of this shape: the other axes run over a's own positions (one
    where a has 1, which the indices' broadcasting stretches)."""
    ndim = len(shape)
    axis = axis % ndim
    grids = [np.reshape(np.arange(n), tuple(n if j == i else 1 for j in range(ndim)))
             for i, n in enumerate(shape)]
    return tuple(indices if i == axis else grids[i] for i in range(ndim))


# How close, relative to the largest, two computed eigenvalues or singular
# values may be and still count as equal: LAPACK gives equal ones a few ulps
# apart, and dividing by such a gap gives gradients of 1e15 instead of a refusal.
ROUNDING = 64 * np.finfo(np.float64).eps


def indistinct(a, b, values):
    """Where `a` and `b` (from the decomposition that gave `values`) are equal
    up to rounding."""
    return np.abs(a - b) <= ROUNDING * np.max(np.abs(values))
