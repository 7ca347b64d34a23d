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
from .helpers import product_of_others, unbroadcast


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
    """The transposed adjugate, which singular matrices have too: with
    a = U S V^T, it is det(U V^T) U adj(S) V^T, adj(S)_ii being the product of
    the other singular values (0 for a rank below n - 1)."""
    u, s, vh = np.linalg.svd(a)
    orientation = np.expand_dims(dy * np.linalg.det(u @ vh), (-2, -1))
    da = orientation * ((u * np.expand_dims(product_of_others(s, -1), -2)) @ vh)


@adjoint(np.linalg.slogdet)
def slogdet(dy, y, a):
    """Only log|det| carries a gradient: the sign is piecewise constant, so
    a gradient reaching it is ignored."""
    sign_only = dy[1] is None
    da = 0 if sign_only else np.expand_dims(dy[1], (-2, -1)) * swap_last(np.linalg.inv(a))


@adjoint(np.linalg.solve)
def solve(dy, y, a, b):
    """x = solve(a, b): db = solve(a.T, dy), da = -db x.T (b a vector or matrices)."""
    vector = np.ndim(b) == 1
    db = unbroadcast(np.linalg.solve(swap_last(a), dy), b)
    da = unbroadcast(-(np.outer(np.linalg.solve(swap_last(a), dy), y) if vector else
                       np.linalg.solve(swap_last(a), dy) @ swap_last(y)), a)


@adjoint(np.linalg.cholesky)
def cholesky(dy, y, a, upper=False):
    """a = L L^T, read from its lower triangle only (upper=True: from the upper,
    giving U = L^T). For a symmetric a the gradient is sym(L^-T phi(L^T dL) L^-1),
    phi taking the lower triangle with the diagonal halved (Murray, 2016); the
    triangle read gets it folded."""
    da = cholesky_gradient(dy, y, a, upper)


def cholesky_gradient(dy, y, a, upper):
    """The gradient of a Cholesky factor y of a (y = U with a = U^T U where
    `upper`), on the triangle the factorization read."""
    lower = swap_last(y) if upper else y
    dlower = swap_last(dy) if upper else dy
    inverse = np.linalg.inv(lower)
    middle = swap_last(lower) @ dlower
    phi = np.tril(middle) - 0.5 * middle * np.eye(np.shape(a)[-1])
    return triangle_read(swap_last(inverse) @ phi @ inverse, "U" if upper else "L")


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
    """Symmetric eigendecomposition, distinct eigenvalues where the eigenvectors
    are used. eigh reads one triangle only, so the gradient lands on that triangle."""
    w, v = y[0], y[1]
    if dy[1] is None:  # eigenvalues only: no division by the gaps between them
        g = eigenvalue_gradient(dy[0], v)
    else:
        dw = dy[0] if dy[0] is not None else np.zeros(np.shape(w), np.result_type(w))
        gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
        n = np.shape(w)[-1]
        f = np.where(np.eye(n) == 1, 0.0, 1.0 / np.where(np.eye(n) == 1, 1.0, gaps))
        inner_part = np.expand_dims(dw, -1) * np.eye(n) + f * (swap_last(v) @ dy[1])
        g = v @ inner_part @ swap_last(v)
    da = triangle_read(g, UPLO)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(dy, y, a, UPLO="L"):
    """Eigenvalue i moves with v_i v_i^T (distinct eigenvalues), on the triangle read."""
    da = triangle_read(eigenvalue_gradient(dy, np.linalg.eigh(a, UPLO)[1]), UPLO)


def eigenvalue_gradient(dw, v):
    """V diag(dw) V^T."""
    return (v * np.expand_dims(dw, -2)) @ swap_last(v)


def triangle_read(g, uplo):
    """The gradient of a function of a symmetric matrix that reads one triangle
    ("L" or "U", any case), from `g`, its gradient taken as if the whole
    matrix were read: an entry off the diagonal stands for itself and its mirror."""
    folded = g + swap_last(g) - g * np.eye(np.shape(g)[-1])
    return np.tril(folded) if uplo.upper() == "L" else np.triu(folded)


@adjoint(np.linalg.pinv)
def pinv(dy, y, a):
    """Golub and Pereyra's differential of the pseudo-inverse (constant rank)."""
    eye_m = np.eye(np.shape(a)[-2])
    eye_n = np.eye(np.shape(a)[-1])
    yt = swap_last(y)
    gt = swap_last(dy)
    da = -(yt @ dy @ yt) + (eye_m - a @ y) @ gt @ y @ yt + yt @ y @ gt @ (eye_n - y @ a)
