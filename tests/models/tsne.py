"""t-SNE objective: Gaussian affinities in the data space (fixed), Student-t
affinities of the embedding with the diagonal zeroed by np.fill_diagonal,
and KL(P || Q)."""

import numpy as np


def joint_probabilities(X, perplexity_sigma=1.0):
    sq = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    P = np.exp(-sq / (2 * perplexity_sigma ** 2))
    np.fill_diagonal(P, 0.0)
    P = P / P.sum(axis=1, keepdims=True)
    return (P + P.T) / (2 * len(X))


def loss(Y, X):
    P = joint_probabilities(X)
    num = 1.0 / (1.0 + np.sum((Y[:, None] - Y[None]) ** 2, axis=-1))
    np.fill_diagonal(num, 0.0)
    Q = num / np.sum(num)
    mask = ~np.eye(len(Y), dtype=bool)
    return np.sum(P[mask] * np.log(P[mask] / Q[mask]))


def example(seed):
    rs = np.random.RandomState(seed)
    X = np.concatenate([rs.randn(4, 5), rs.randn(4, 5) + 3.0])
    return 0.5 * rs.randn(8, 2), X
