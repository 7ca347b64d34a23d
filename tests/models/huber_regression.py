"""Robust linear regression with a Huber loss written the textbook way: a
Python loop over residuals with an `if` on each one's size, and an
`elif`-chosen regulariser."""

import numpy as np

DYNAMIC = True


def huber(r, delta):
    if abs(r) <= delta:
        return 0.5 * r ** 2
    else:
        return delta * (abs(r) - 0.5 * delta)


def loss(w, X, y, delta, penalty):
    residuals = X @ w - y
    total = 0.0
    for r in residuals:
        total += huber(r, delta)
    if penalty == "l2":
        total += 0.01 * np.sum(w ** 2)
    elif penalty == "l1":
        total += 0.01 * np.sum(np.abs(w))
    return total / len(y)


def example(seed):
    rs = np.random.RandomState(seed)
    X = rs.randn(10, 3)
    y = X @ np.array([1.0, -1.0, 2.0]) + 0.3 * rs.randn(10)
    y[rs.randint(10)] += 8.0
    return 0.5 * rs.randn(3), X, y, 1.0, "l2"
