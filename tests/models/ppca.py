"""Probabilistic PCA: negative log-likelihood of centred data under
N(0, W W^T + s^2 I) via slogdet and the trace of C^-1 S."""

import numpy as np


def loss(W, log_sigma2, X):
    N, D = X.shape
    C = W @ W.T + np.exp(log_sigma2) * np.eye(D)
    S = X.T @ X / N
    sign, logdet = np.linalg.slogdet(C)
    return 0.5 * N * (D * np.log(2 * np.pi) + logdet + np.trace(np.linalg.solve(C, S)))


def example(seed):
    rs = np.random.RandomState(seed)
    latent = rs.randn(20, 2)
    X = latent @ rs.randn(2, 4) + 0.3 * rs.randn(20, 4)
    X -= X.mean(axis=0)
    return 0.5 * rs.randn(4, 2), np.log(0.2), X
