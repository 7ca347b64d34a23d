"""Functions whose sizes follow their arguments' through one library routine
each, for test_library_shapes.py."""

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats


def drawn(x, rng):
    return np.sum(x * rng.normal(0.0, 1.0, size=x.shape)) + np.sum(x * rng.random(x.shape))


def drawn_globally(x):
    return np.sum(x * np.random.randn(*x.shape)) + np.sum(x * np.random.normal(0, 1, x.shape))


def eye(A):
    return np.sum((A @ A.T + np.eye(A.shape[0])) ** 2) + np.sum(np.identity(A.shape[1]) @ A.T)


def ravel(A, w):
    return np.sum(np.ravel(A) ** 2) + np.sum(A.flatten() * np.repeat(w, A.shape[0]))


def repeated(x):
    return np.sum(np.repeat(x, 3, axis=0) ** 2) + np.sum(np.repeat(x, 2) * 1.5)


def joined(a, b):
    return np.sum(np.hstack([a, b]) ** 2) + np.sum(np.vstack([a, b]) * 3.0) \
        + np.sum(np.hstack([a[0], b[0]]) ** 3)


def einsum(A, B, v):
    return np.sum(np.einsum("ij,jk->ik", A, B) ** 2) + np.sum(np.einsum("ij,j", A, v)) \
        + np.einsum("ii", A @ A.T)


def tensordot(A, B):
    return np.sum(np.tensordot(A, B, axes=1) ** 2) + np.sum(np.tensordot(A, A, axes=([0], [0])))


def norms(X):
    return np.sum(np.linalg.norm(X, axis=1)) + np.sum(np.linalg.norm(X, axis=0, keepdims=True) * X)


def sorting(x, w):
    order = np.argsort(x)
    return np.sum(np.sort(x) * w) + np.sum(x[order] * w[::-1])


def differences(x):
    return np.sum(np.diff(x) ** 2) + np.sum(np.diff(x, 2) ** 2)


def triangles(A):
    return np.sum(np.tril(A) ** 2) + np.sum(np.triu(A, 1) * A)


def logsumexp(X):
    return np.sum(scipy.special.logsumexp(X, axis=1)) \
        + np.sum(scipy.special.logsumexp(X, axis=0, keepdims=True) * X)


def solved(A, b):
    M = A @ A.T + np.eye(A.shape[0])
    return np.sum(np.linalg.solve(M, b) ** 2) + np.sum(scipy.linalg.solve_triangular(M, b))


def densities(x, mu):
    return np.sum(scipy.stats.norm.logpdf(x, mu, 2.0)) + np.sum(scipy.stats.norm.cdf(x))


def padded_constant(A):
    return np.sum(np.pad(A, 1) ** 2 * 0.5) + np.sum(np.pad(A, ((0, 2), (1, 0))) * 3.0)


def diagonal_filled(A):
    B = A @ A.T
    np.fill_diagonal(B, 0.0)
    C = A.T @ A
    np.fill_diagonal(C, 1.0)
    return np.sum(B ** 2) + np.sum(C * 0.5)


def t_and_gamma(x, a):
    return np.sum(scipy.stats.t.logpdf(x, 3.0, a)) \
        + np.sum(scipy.stats.gamma.logpdf(x * x + 1.0, 2.0))


def selected_positions(x, w):
    kept = np.nonzero(x > 0)[0]
    where = np.where(x < -0.5)[0]
    flat = np.flatnonzero(np.abs(x) > 1.0)
    return np.sum(x[kept] ** 2) + np.sum(x[where] * 3.0) + np.sum(w ** 2) + np.sum(x[flat] ** 3)
