"""Loops shared by the tests of iterations.py and of rolled loops."""

import numpy as np


def rows_with_a_branch(X):
    total = 0.0
    for t in range(X.shape[0]):
        if X[t, 0] > 0:
            total = total + np.sum(X[t] ** 2)
        else:
            total = total - np.sum(X[t])
    return total


def nested(A):
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            total = total + A[i, j] * A[i, j]
    return total
