"""Graph design by eigenvalue optimisation: edge weights (softplus of the
parameters) build a Laplacian; the loss raises its algebraic connectivity
(second-smallest eigenvalue from np.linalg.eigvalsh) and keeps the leading
eigenvector from np.linalg.eigh spread out."""

import numpy as np


def laplacian(weights, edges, n):
    A = np.zeros((n, n))
    A[edges[:, 0], edges[:, 1]] = weights
    A = A + A.T
    return np.diag(A.sum(axis=1)) - A


def loss(theta, edges):
    n = edges.max() + 1
    w = np.logaddexp(0.0, theta)
    L = laplacian(w, edges, n)
    connectivity = np.linalg.eigvalsh(L)[1]
    vals, vecs = np.linalg.eigh(L)
    top = vecs[:, -1]
    return -connectivity + np.sum(top ** 4) + 0.1 * np.sum(w)


def example(seed):
    rs = np.random.RandomState(seed)
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [0, 2], [1, 4], [0, 3]])
    return rs.randn(len(edges)), edges
