"""Linear regression in the column-vector convention of course notebooks:
theta is (n, 1), y is (m, 1), and the cost comes out as a (1, 1) array."""

import numpy as np


def compute_cost(X, y, theta, lam):
    m = y.shape[0]
    h = X @ theta
    J = (1.0 / (2 * m)) * (h - y).T @ (h - y)
    J += (lam / (2 * m)) * theta[1:].T @ theta[1:]
    return J


def loss(theta, X, y, lam):
    return compute_cost(X, y, theta, lam)


def example(seed):
    rs = np.random.RandomState(seed)
    m = 12
    X = np.hstack([np.ones((m, 1)), rs.randn(m, 2)])
    y = X @ np.array([[1.0], [2.0], [-0.5]]) + 0.1 * rs.randn(m, 1)
    return rs.randn(3, 1), X, y, 1.0
