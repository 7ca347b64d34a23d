"""Gaussian-process classification by the Laplace approximation's objective
at a fixed latent f (the part the hyperparameters enter through), with the
triangular solves from scipy.linalg.solve_triangular."""

import numpy as np
from scipy.linalg import solve_triangular


def matern32(log_params, X):
    amp, ell = np.exp(log_params)
    r = np.sqrt(np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1) + 1e-12) / ell
    return amp * (1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3) * r)


def loss(log_params, X, f):
    K = matern32(log_params, X) + 1e-6 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    v = solve_triangular(L, f, lower=True)
    return 0.5 * v @ v + np.sum(np.log(np.diag(L)))


def example(seed):
    rs = np.random.RandomState(seed)
    X = rs.rand(7, 2)
    return np.log([1.0, 0.5]) + 0.1 * rs.randn(2), X, rs.randn(7)
