"""Static helpers for templates.

The unroller runs these at instantiation with the op's shapes known, so their
branches fold away: the generated code holds exactly the reduction needed,
or nothing when the shapes already match.
"""

import numpy as np

from yota_src import primitives


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


def full_index(indices, axis):
    """An advanced index that reads like take_along_axis(a, indices, axis)."""
    ndim = np.ndim(indices)
    axis = axis % ndim
    grids = [np.reshape(np.arange(n), tuple(n if j == i else 1 for j in range(ndim)))
             for i, n in enumerate(np.shape(indices))]
    return tuple(indices if i == axis else grids[i] for i in range(ndim))


def tensordot_axes(a, b, axes):
    """tensordot's `axes` argument as two lists of non-negative axes."""
    if isinstance(axes, int):
        return (list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes)))
    a_axes, b_axes = axes
    a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
    b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
    return [i % np.ndim(a) for i in a_axes], [i % np.ndim(b) for i in b_axes]


def inverse_permutation(order):
    return tuple(order.index(i) for i in range(len(order)))


def tensordot_left(dy, a, b, a_axes, b_axes):
    """The gradient of tensordot(a, b, (a_axes, b_axes)) for `a`."""
    a_axes = [i % np.ndim(a) for i in a_axes]
    b_axes = [i % np.ndim(b) for i in b_axes]
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    t = np.tensordot(dy, b, (list(range(len(a_free), np.ndim(dy))), b_free))
    order = a_free + [a_axes[b_axes.index(i)] for i in sorted(b_axes)]
    return np.transpose(t, inverse_permutation(order))


def tensordot_right(dy, a, b, a_axes, b_axes):
    """The gradient of tensordot(a, b, (a_axes, b_axes)) for `b`."""
    a_axes = [i % np.ndim(a) for i in a_axes]
    b_axes = [i % np.ndim(b) for i in b_axes]
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    t = np.tensordot(a, dy, (a_free, list(range(len(a_free)))))
    order = [b_axes[a_axes.index(i)] for i in sorted(a_axes)] + b_free
    return np.transpose(t, inverse_permutation(order))


def einsum_specs(subscripts, operands):
    """(input specs, output spec) with the implicit output made explicit."""
    text = subscripts.replace(" ", "")
    inputs, _, output = text.partition("->")
    specs = inputs.split(",")
    if not _:
        letters = [c for c in inputs if c.isalpha()]
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return specs, output


def einsum_operand_gradient(dy, subscripts, operands, index):
    """einsum(out, others -> this operand's spec), broadcast over the letters
    (and ellipsis) only this operand has, which the forward summed away."""
    specs, output = einsum_specs(subscripts, operands)
    mine = specs[index]
    letters = [c for c in mine if c.isalpha()]
    if len(set(letters)) != len(letters):
        raise NotImplementedError("einsum with a repeated index in one operand (a diagonal)")
    others = [spec for i, spec in enumerate(specs) if i != index]
    seen = output + "".join(others)
    kept = "".join(c for c in letters if c in seen)
    ellipsis = "..." in mine and "..." in seen
    target = ("..." if ellipsis else "") + kept if mine.startswith("...") else \
        kept + ("..." if ellipsis else "")
    rest = [op for i, op in enumerate(operands) if i != index]
    g = np.einsum(",".join([output] + others) + "->" + target, dy, *rest)
    shape = np.shape(operands[index])
    if target.replace("...", "") == mine.replace("...", "") and ("..." in mine) == ellipsis:
        return unbroadcast(g, operands[index])
    # put back the summed-away letters as size-1 axes, then broadcast
    n_ellipsis = np.ndim(operands[index]) - len(letters)
    full = []
    for part in _spec_parts(mine):
        if part == "...":
            full += ["..."] * n_ellipsis
        else:
            full.append(part)
    kept_shape = tuple(1 if (c == "..." and not ellipsis) or (c != "..." and c not in seen)
                       else n for c, n in zip(full, shape))
    return np.broadcast_to(np.reshape(g, kept_shape), shape)


def _spec_parts(spec):
    parts, i = [], 0
    while i < len(spec):
        if spec.startswith("...", i):
            parts.append("...")
            i += 3
        else:
            parts.append(spec[i])
            i += 1
    return parts


def kron_blocks(dy, a, b):
    """dy viewed as (a0, b0, a1, b1, ...), a and b padded to the same rank."""
    ndim = max(np.ndim(a), np.ndim(b))
    a_shape = (1,) * (ndim - np.ndim(a)) + np.shape(a)
    b_shape = (1,) * (ndim - np.ndim(b)) + np.shape(b)
    blocks = np.reshape(dy, tuple(n for pair in zip(a_shape, b_shape) for n in pair))
    return blocks, a_shape, b_shape, ndim


def kron_left(dy, a, b):
    blocks, a_shape, b_shape, ndim = kron_blocks(dy, a, b)
    b_full = np.reshape(b, b_shape)
    spread_b = np.reshape(b_full, tuple(x for n in b_shape for x in (1, n)))
    summed = np.sum(blocks * spread_b, axis=tuple(range(1, 2 * ndim, 2)))
    return np.reshape(summed, np.shape(a))


def kron_right(dy, a, b):
    blocks, a_shape, b_shape, ndim = kron_blocks(dy, a, b)
    a_full = np.reshape(a, a_shape)
    spread_a = np.reshape(a_full, tuple(x for n in a_shape for x in (n, 1)))
    summed = np.sum(blocks * spread_a, axis=tuple(range(0, 2 * ndim, 2)))
    return np.reshape(summed, np.shape(b))
