"""Static helpers for the gradients of products: matmul, tensordot, einsum, kron."""

import string

import numpy as np

from .helpers import cast


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


def einsum_text(subscripts, operands):
    """(subscripts as text, the arrays) of an einsum call, also of the
    interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    items = [subscripts, *operands]
    output = items.pop() if len(items) % 2 else None
    arrays, sublists = items[0::2], items[1::2]
    text = ",".join(sublist_text(s) for s in sublists)
    return (text if output is None else text + "->" + sublist_text(output)), arrays


def sublist_text(sublist):
    """[0, 1, Ellipsis] as einsum's letters: "ab..."."""
    return "".join("..." if s is Ellipsis else string.ascii_letters[s] for s in sublist)


def einsum_specs(subscripts, operands):
    """(input specs, output spec), explicit: the implicit output spelled out
    (the ellipsis, then the letters used once, sorted), and each ellipsis
    spelled as capitals the subscripts do not use, aligned on the right as
    NumPy broadcasts them."""
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    specs = inputs.split(",")
    if not arrow:
        letters = [c for c in inputs if c.isalpha()]
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    unused = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in text]
    widths = [np.ndim(op) - len(spec.replace("...", "")) for spec, op in zip(specs, operands)]
    ellipsis = "".join(unused[:max(widths)])
    spell = lambda spec, width: spec.replace("...", ellipsis[len(ellipsis) - width:])  # noqa: E731
    return [spell(s, w) for s, w in zip(specs, widths)], spell(output, len(ellipsis))


def einsum_operand_gradient(dy, subscripts, operands, index):
    """einsum(out, others -> this operand's letters): the letters only this
    operand has, which the forward summed away, are spread back, and those it
    had of size 1 where the others are longer (broadcast) are summed. A letter
    repeated in the operand (a diagonal, "ii->i") is first taken once, and the
    gradient then placed on that diagonal."""
    specs, output = einsum_specs(subscripts, operands)
    mine = specs[index]
    unique = "".join(dict.fromkeys(mine))
    sizes = dict(zip(mine, np.shape(operands[index])))
    others = [spec for i, spec in enumerate(specs) if i != index]
    seen = output + "".join(others)
    kept = "".join(c for c in unique if c in seen)
    rest = [op for i, op in enumerate(operands) if i != index]
    g = np.einsum(",".join([output] + others) + "->" + kept, dy, *rest)
    broadcast = tuple(i for i, c in enumerate(kept) if sizes[c] == 1 and np.shape(g)[i] != 1)
    if broadcast:
        g = np.sum(g, axis=broadcast[0] if len(broadcast) == 1 else broadcast, keepdims=True)
    if kept != unique:
        g = np.broadcast_to(np.reshape(g, tuple(sizes[c] if c in seen else 1 for c in unique)),
                            tuple(sizes[c] for c in unique))
    if unique != mine:
        g = on_diagonal(g, unique, mine, sizes, specs + [output])
    return cast(g, operands[index])


def on_diagonal(g, unique, mine, sizes, used):
    """g, indexed by `unique`, placed on the diagonal that `mine` (the same
    letters, some repeated) reads: a repeated letter is spelled anew and tied
    to its first by an identity matrix, einsum("ij,ik->ikj", g, eye)."""
    fresh = iter(c for c in string.ascii_letters if not any(c in spec for spec in used))
    target, ties = "", []
    for c in mine:
        if c in target:
            new = next(fresh)
            ties.append(c + new)
            target = target + new
        else:
            target = target + c
    eyes = [np.eye(sizes[tie[0]]) for tie in ties]
    return np.einsum(",".join([unique] + ties) + "->" + target, g, *eyes)


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
