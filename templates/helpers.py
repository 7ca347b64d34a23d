"""Static helpers for templates.

The unroller runs these at instantiation with the op's shapes known, so their
branches fold away: the generated code holds exactly the reduction needed,
or nothing when the shapes already match.
"""

import numpy as np


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
    shape = np.shape(x)
    if np.shape(g) != shape:
        lead = np.ndim(g) - len(shape)
        if lead == np.ndim(g):
            g = np.sum(g)
        elif lead:
            g = np.sum(g, axis=axes_argument(range(lead)))
        kept = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
        if kept:
            g = np.sum(g, axis=axes_argument(kept), keepdims=True)
    return cast(g, x)


def cast(g, like):
    """`g` in the dtype of `like`, so float32 inputs get float32 gradients."""
    dtype = np.result_type(like)
    if not isinstance(like, np.ndarray) or np.result_type(g) == dtype:
        return g
    if isinstance(g, (np.ndarray, np.generic)):
        return g.astype(dtype)
    return dtype.type(g)


def expand(g, a, axis, keepdims):
    """Re-insert the axes a reduction over `axis` removed, for broadcasting."""
    if axis is None or keepdims:
        return g
    return np.expand_dims(g, normalize_axes(axis, np.ndim(a)))


def spread(g, a, axis, keepdims):
    """A reduction's gradient broadcast back over the whole of `a`."""
    return np.broadcast_to(expand(g, a, axis, keepdims), np.shape(a))


def zeros_like_input(a):
    """A fresh zero array shaped like `a`; the dtype is written only if not float64."""
    dtype = np.result_type(a)
    if dtype == np.float64:
        return np.zeros(np.shape(a))
    return np.zeros(np.shape(a), dtype)


def selects_everything(index):
    """True for indices made only of `:`, `None` and `...`: they reshape, not select."""
    items = index if isinstance(index, tuple) else (index,)
    return all(item is None or item is Ellipsis
               or (isinstance(item, slice) and item == slice(None)) for item in items)


def swap_last(x):
    """The matrix transpose of `x`: `x.T` for 2-D, swapped last axes for stacks."""
    return x.T if np.ndim(x) == 2 else np.swapaxes(x, -1, -2)


def matmul_left(dy, a, b):
    """The gradient of `a @ b` with respect to `a`, before unbroadcasting."""
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return dy * b
    if np.ndim(b) == 1:
        return np.outer(dy, b) if np.ndim(a) == 2 else np.expand_dims(dy, -1) * b
    if np.ndim(a) == 1:
        return b @ dy if np.ndim(b) == 2 else np.einsum("...kn,...n->...k", b, dy)
    return dy @ swap_last(b)


def matmul_right(dy, a, b):
    """The gradient of `a @ b` with respect to `b`, before unbroadcasting."""
    if np.ndim(a) == 1 and np.ndim(b) == 1:
        return dy * a
    if np.ndim(b) == 1:
        return dy @ a if np.ndim(a) == 2 else np.einsum("...m,...mk->...k", dy, a)
    if np.ndim(a) == 1:
        if np.ndim(b) == 2:
            return np.outer(a, dy)
        return np.expand_dims(a, -1) * np.expand_dims(dy, -2)
    return swap_last(a) @ dy
