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
from .helpers import cast, indistinct, product_of_others, sum_to_shape, unbroadcast


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
    """Symmetric eigendecomposition; eigh reads one triangle only, so the
    gradient lands on that triangle. The eigenvalues alone move with
    V diag(dw) V^T. Where an eigenvalue repeats, that is the gradient of a
    symmetric function of the eigenvalues (a sum, a norm, the largest one),
    which is right for those: a function that tells equal eigenvalues apart
    (w[0] alone) has no derivative there. The eigenvectors move with the
    gaps between the eigenvalues, so where they are used the eigenvalues
    must be distinct: where two are equal the eigenvectors are any basis of
    their space, not differentiable, and refused (checked in the generated
    code too)."""
    w, v = y[0], y[1]
    if dy[1] is None:  # eigenvalues only: no division by the gaps between them
        g = eigenvalue_gradient(dy[0], v)
    else:
        gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
        n = np.shape(w)[-1]
        if np.any(indistinct(gaps, 0.0, w) & (np.eye(n) == 0)):
            raise NotImplementedError(
                "the gradient of np.linalg.eigh's eigenvectors needs distinct eigenvalues; "
                "where two are equal, the eigenvectors are any basis of their space and are "
                "not differentiable. Use only the eigenvalues, or a function of a that does "
                "not depend on the choice of eigenvectors")
        f = np.where(np.eye(n) == 1, 0.0, 1.0 / np.where(np.eye(n) == 1, 1.0, gaps))
        inner_part = f * (swap_last(v) @ dy[1])
        if dy[0] is not None:
            inner_part = inner_part + np.expand_dims(dy[0], -1) * np.eye(n)
        g = v @ inner_part @ swap_last(v)
    da = triangle_read(g, UPLO)


@adjoint(np.linalg.eigvalsh)
def eigvalsh(dy, y, a, UPLO="L"):
    """Eigenvalue i moves with v_i v_i^T, on the triangle read; where eigenvalues
    repeat, the symmetric gradient, as for np.linalg.eigh's eigenvalues."""
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


@adjoint(np.linalg.matrix_power)
def matrix_power(dy, y, a, n):
    """a^n is a product of n factors a; factor k (k = 0 .. n-1) gets
    (a^k)^T dy (a^(n-1-k))^T. A negative power is that of the inverse,
    whose gradient goes back through inv."""
    if n == 0:
        da = 0  # the identity, for every a
    elif n > 0:
        da = power_gradient(dy, a, n)
    else:
        base = np.linalg.inv(a)
        da = -(swap_last(base) @ power_gradient(dy, base, -n) @ swap_last(base))


def power_gradient(dy, a, n):
    """The gradient of a^n (n >= 1) for a: the sum over the factors."""
    transposed = [None, swap_last(a)]  # transposed[k] is (a^k)^T; (a^0)^T is left out
    for _ in range(2, n):
        transposed.append(transposed[-1] @ transposed[1])
    total = dy if n == 1 else dy @ transposed[n - 1]
    for k in range(1, n):
        term = transposed[k] @ dy
        total = total + (term if k == n - 1 else term @ transposed[n - 1 - k])
    return total


@adjoint(np.cross)
def cross(dy, y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """c = a x b. Since dc . (a x b) = a . (b x dc) = b . (dc x a), a gets
    b x dc and b gets dc x a. A 2-vector is a 3-vector with z = 0 (the cross
    product of two is that z alone), and its gradient drops z again."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a3, b3 = as_three_vectors(a, axisa), as_three_vectors(b, axisb)
    if np.shape(a)[axisa] == 2 and np.shape(b)[axisb] == 2:
        g = np.expand_dims(dy, -1) * np.array([0.0, 0.0, 1.0])
    else:
        g = dy if axisc % np.ndim(dy) == np.ndim(dy) - 1 else np.moveaxis(dy, axisc, -1)
    da = vectors_back(np.cross(b3, g), a, axisa)
    db = vectors_back(np.cross(g, a3), b, axisb)


def as_three_vectors(a, axis):
    """a's vectors along the last axis, a 2-vector given z = 0."""
    if axis % np.ndim(a) != np.ndim(a) - 1:
        a = np.moveaxis(a, axis, -1)
    if np.shape(a)[-1] == 2:
        a = np.pad(a, [(0, 0)] * (np.ndim(a) - 1) + [(0, 1)])
    return a


def vectors_back(g, a, axis):
    """The gradient of 3-vectors along g's last axis, for `a`'s vectors along
    `axis`: cut to a's length, summed where a was broadcast, moved back."""
    length = np.shape(a)[axis]
    if length == 2:
        g = g[..., :2]
    last = axis % np.ndim(a) == np.ndim(a) - 1
    g = sum_to_shape(g, np.shape(a) if last else np.shape(np.moveaxis(a, axis, -1)))
    return cast(g if last else np.moveaxis(g, -1, axis), a)


@adjoint(np.linalg.svd)
def svd(dy, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    """a = U diag(s) Vt with k = min(m, n) singular values. s alone moves
    with U diag(ds) Vt. U and Vt move with the gaps between the squared
    singular values, and, for a matrix that is not square, with 1 / s: both
    must be distinct and non-zero (Townsend, "Differentiating the singular
    value decomposition", 2016). hermitian=True reads the lower triangle."""
    m, n = np.shape(a)[-2:]
    if not compute_uv:
        g = singular_value_gradient(dy, np.linalg.svd(a, full_matrices=False, hermitian=hermitian))
    elif dy[0] is None and dy[2] is None:
        g = singular_value_gradient(dy[1], y)
    elif full_matrices and m != n:
        raise NotImplementedError(
            "the gradient of np.linalg.svd's U and Vt with full_matrices=True is not unique for "
            "a matrix that is not square (the extra columns are any basis of a null space); "
            "pass full_matrices=False")
    else:
        g = singular_vector_gradient(dy, y, m, n)
    da = triangle_read(g, "L") if hermitian else g


def singular_value_gradient(ds, factors):
    """U diag(ds) Vt, from the factors (U, s, Vt): the first k columns of U
    and rows of Vt where full_matrices made more."""
    k = np.shape(ds)[-1]
    u = factors[0] if np.shape(factors[0])[-1] == k else factors[0][..., :k]
    vt = factors[2] if np.shape(factors[2])[-2] == k else factors[2][..., :k, :]
    return (u * np.expand_dims(ds, -2)) @ vt


def singular_vector_gradient(dy, factors, m, n):
    """The gradient of a through the reduced factors (U, s, Vt) where U or Vt
    is used. Transposing a swaps U and V, so each side is the same formula."""
    u, s, vt = factors[0], factors[1], factors[2]
    k = np.shape(s)[-1]
    squares = s * s
    gaps = np.expand_dims(squares, -2) - np.expand_dims(squares, -1)  # s_j^2 - s_i^2
    off = np.eye(k) == 0
    if np.any(off & indistinct(gaps, 0.0, squares)) or (m != n and np.any(indistinct(s, 0.0, s))):
        raise NotImplementedError(
            "the gradient of np.linalg.svd's U and Vt needs distinct singular values "
            "(and non-zero ones for a matrix that is not square); where they repeat, the "
            "singular vectors are not differentiable. Use only the singular values, or a "
            "function of a that does not depend on the choice of singular vectors")
    f = np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)
    g = 0 if dy[1] is None else singular_value_gradient(dy[1], factors)
    if dy[0] is not None:
        g = g + one_side_gradient(dy[0], u, vt, s, f, m > k)
    if dy[2] is not None:
        g = g + swap_last(one_side_gradient(swap_last(dy[2]), swap_last(vt), swap_last(u), s, f,
                                            n > k))
    return g


def one_side_gradient(dq, q, pt, s, f, tall):
    """The gradient of a = Q diag(s) P^T through Q alone: Q [F o (Q^T dQ -
    dQ^T Q)] diag(s) P^T, F the inverse gaps between squared singular values,
    plus, where Q has more rows than columns, what moves Q out of its own
    span, (I - Q Q^T) dQ diag(1/s) P^T."""
    qtdq = swap_last(q) @ dq
    g = q @ ((f * (qtdq - swap_last(qtdq))) * np.expand_dims(s, -2))
    if tall:
        g = g + (dq - q @ qtdq) / np.expand_dims(s, -2)
    return g @ pt


@adjoint(np.linalg.eig)
def eig(dy, y, a):
    """a = V diag(w) V^-1 for a real matrix with real, distinct eigenvalues
    (complex ones are refused where they reach the gradient, and repeated
    ones here: there the eigenvectors, and for a defective matrix the
    eigenvalues, are not differentiable). NumPy scales each eigenvector to
    length 1, so its gradient loses the part along the vector:
    da = V^-T (diag(dw) + F o (V^T dV - V^T V diag(V^T dV))) V^T,
    F_ij = 1 / (w_j - w_i) off the diagonal."""
    w, v = y[0], y[1]
    require_real_distinct_eigenvalues(w)
    n = np.shape(w)[-1]
    inner = 0 if dy[0] is None else np.expand_dims(dy[0], -1) * np.eye(n)
    if dy[1] is not None:
        off = np.eye(n) == 0
        gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)  # w_j - w_i
        vtdv = swap_last(v) @ dy[1]
        along = (swap_last(v) @ v) * np.expand_dims(np.diagonal(vtdv, 0, -2, -1), -2)
        inner = inner + np.where(off, (vtdv - along) / np.where(off, gaps, 1.0), 0.0)
    da = swap_last(np.linalg.inv(v)) @ inner @ swap_last(v)


@adjoint(np.linalg.eigvals)
def eigvals(dy, y, a):
    """Eigenvalue i moves with the outer product of its left and right
    eigenvectors: da = V^-T diag(dw) V^T (real, distinct eigenvalues)."""
    require_real_distinct_eigenvalues(y)
    v = np.linalg.eig(a)[1]
    da = swap_last(np.linalg.inv(v)) @ (np.expand_dims(dy, -1) * np.eye(np.shape(y)[-1])) \
        @ swap_last(v)


def require_real_distinct_eigenvalues(w):
    """Refuse eigenvalues that are complex or repeat; the check is kept in the
    generated code, which refuses data where they are."""
    n = np.shape(w)[-1]
    if np.iscomplexobj(w) or np.any(np.iscomplex(w)):  # the second is checked when it runs
        raise NotImplementedError("the gradient of np.linalg.eig covers real eigenvalues; "
                                  "this matrix has complex ones")
    if np.any(indistinct(np.expand_dims(w, -2), np.expand_dims(w, -1), w) & (np.eye(n) == 0)):
        raise NotImplementedError(
            "the gradient of np.linalg.eig needs distinct eigenvalues: where two are equal, "
            "the eigenvectors (and, for a matrix without a full set of them, the eigenvalues) "
            "are not differentiable")
