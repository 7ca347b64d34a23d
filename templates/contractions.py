"""Static helpers for the gradients of products: matmul, tensordot, einsum, kron."""

import numpy as np

from .helpers import unbroadcast


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
