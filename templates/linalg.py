"""Products and matrix functions."""

import operator

import numpy as np

from yota_src.rules import adjoint

from .contractions import (
    einsum_operand_gradient,
    einsum_text,
    kron_left,
    kron_right,
    matmul_left,
    matmul_right,
    swap_last,
    tensordot_axes,
    tensordot_left,
    tensordot_right,
)
from .helpers import unbroadcast


@adjoint(operator.matmul, np.matmul)
def matmul(dy, y, a, b):
    da = unbroadcast(matmul_left(dy, a, b), a)
    db = unbroadcast(matmul_right(dy, a, b), b)


@adjoint(np.dot)
def dot(dy, y, a, b):
    """As matmul for vectors and matrices; a scalar operand scales the other."""
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NotImplementedError("the rule for np.dot covers arrays of at most 2 dimensions")
    da = unbroadcast(dy * b, a) if np.ndim(a) == 0 or np.ndim(b) == 0 else matmul_left(dy, a, b)
    db = unbroadcast(dy * a, b) if np.ndim(a) == 0 or np.ndim(b) == 0 else matmul_right(dy, a, b)


@adjoint(np.outer)
def outer(dy, y, a, b):
    da = np.reshape(dy @ np.ravel(b), np.shape(a))
    db = np.reshape(np.ravel(a) @ dy, np.shape(b))


@adjoint(np.vdot)
def vdot(dy, y, a, b):
    da = np.reshape(dy * np.ravel(b), np.shape(a))
    db = np.reshape(dy * np.ravel(a), np.shape(b))


@adjoint(np.inner)
def inner(dy, y, a, b):
    """inner(a, b) is tensordot over the last axes."""
    scalar = np.ndim(a) == 0 or np.ndim(b) == 0
    da = unbroadcast(dy * b, a) if scalar else tensordot_left(dy, a, b, [-1], [-1])
    db = unbroadcast(dy * a, b) if scalar else tensordot_right(dy, a, b, [-1], [-1])


@adjoint(np.tensordot)
def tensordot(dy, y, a, b, axes=2):
    a_axes, b_axes = tensordot_axes(a, b, axes)
    da = tensordot_left(dy, a, b, a_axes, b_axes)
    db = tensordot_right(dy, a, b, a_axes, b_axes)


@adjoint(np.einsum)
def einsum(dy, y, subscripts, *operands, **kw):
    """Each operand's gradient is another einsum: the output and the other
    operands contracted back to this operand's subscripts (an ellipsis spelled
    as letters). The interleaved form einsum(a, [0, 1], b, [1]) too."""
    text, arrays = einsum_text(subscripts, operands)
    grads = [einsum_operand_gradient(dy, text, arrays, i) for i in range(len(arrays))]
    if isinstance(subscripts, str):
        doperands = grads
    else:  # arrays alternate with their sublists (and an output's), which have no gradient
        dsubscripts = grads[0]
        doperands = [None] * len(operands)
        for i in range(1, len(arrays)):
            doperands[2 * i - 1] = grads[i]


@adjoint(np.kron)
def kron(dy, y, a, b):
    da = kron_left(dy, a, b)
    db = kron_right(dy, a, b)


@adjoint(np.linalg.inv)
def inv(dy, y, a):
    da = -(swap_last(y) @ dy @ swap_last(y))


@adjoint(np.linalg.det)
def det(dy, y, a):
    da = np.expand_dims(dy * y, (-2, -1)) * swap_last(np.linalg.inv(a))


@adjoint(np.linalg.slogdet)
def slogdet(dy, y, a):
    """Only log|det| carries a gradient; the sign is piecewise constant."""
    da = np.expand_dims(dy[1], (-2, -1)) * swap_last(np.linalg.inv(a))


@adjoint(np.linalg.solve)
def solve(dy, y, a, b):
    """x = solve(a, b): db = solve(a.T, dy), da = -db x.T (b a vector or matrices)."""
    vector = np.ndim(b) == 1
    db = unbroadcast(np.linalg.solve(swap_last(a), dy), b)
    da = unbroadcast(-(np.outer(np.linalg.solve(swap_last(a), dy), y) if vector else
                       np.linalg.solve(swap_last(a), dy) @ swap_last(y)), a)


@adjoint(np.linalg.cholesky)
def cholesky(dy, y, a):
    """For symmetric a = L L^T (Murray, 2016): sym(L^-T phi(L^T dL) L^-1),
    phi taking the lower triangle with the diagonal halved."""
    inverse = np.linalg.inv(y)
    middle = swap_last(y) @ dy
    phi = np.tril(middle) - 0.5 * middle * np.eye(np.shape(a)[-1])
    s = swap_last(inverse) @ phi @ inverse
    da = 0.5 * (s + swap_last(s))


@adjoint(np.linalg.qr)
def qr(dy, y, a, mode="reduced"):
    """Reduced QR of a tall or square matrix (m >= n), as in TensorFlow's QrGrad."""
    if mode != "reduced" or np.shape(a)[-2] < np.shape(a)[-1]:
        raise NotImplementedError("the QR gradient covers mode='reduced' with m >= n")
    q, r = y[0], y[1]
    dq = dy[0] if dy[0] is not None else np.zeros(np.shape(q), np.result_type(q))
    dr = dy[1] if dy[1] is not None else np.zeros(np.shape(r), np.result_type(r))
    r_inverse_t = swap_last(np.linalg.inv(r))
    qdq = swap_last(q) @ dq
    rdr = r @ swap_last(dr)
    lower = np.tril(qdq - swap_last(qdq) + rdr - swap_last(rdr))
    da = q @ (dr + lower @ r_inverse_t) + (dq - q @ qdq) @ r_inverse_t


@adjoint(np.linalg.eigh)
def eigh(dy, y, a, UPLO="L"):
    """Symmetric eigendecomposition, distinct eigenvalues. eigh reads one
    triangle only, so the gradient lands on that triangle."""
    w, v = y[0], y[1]
    dw = dy[0] if dy[0] is not None else np.zeros(np.shape(w), np.result_type(w))
    dv = dy[1] if dy[1] is not None else np.zeros(np.shape(v), np.result_type(v))
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    n = np.shape(w)[-1]
    f = np.where(np.eye(n) == 1, 0.0, 1.0 / np.where(np.eye(n) == 1, 1.0, gaps))
    inner_part = np.expand_dims(dw, -1) * np.eye(n) + f * (swap_last(v) @ dv)
    g = v @ inner_part @ swap_last(v)
    folded = g + swap_last(g) - g * np.eye(n)
    da = np.tril(folded) if UPLO == "L" else np.triu(folded)


@adjoint(np.linalg.pinv)
def pinv(dy, y, a):
    """Golub and Pereyra's differential of the pseudo-inverse (constant rank)."""
    eye_m = np.eye(np.shape(a)[-2])
    eye_n = np.eye(np.shape(a)[-1])
    yt = swap_last(y)
    gt = swap_last(dy)
    da = -(yt @ dy @ yt) + (eye_m - a @ y) @ gt @ y @ yt + yt @ y @ gt @ (eye_n - y @ a)
