"""Matrix completion with a nuclear-norm penalty: squared error on the
observed entries (a boolean mask) plus the sum of singular values from
np.linalg.svd(compute_uv=False)."""

import numpy as np


def loss(M, observed, mask, lam):
    fit = np.sum(np.where(mask, M - observed, 0.0) ** 2)
    return 0.5 * fit + lam * np.sum(np.linalg.svd(M, compute_uv=False))


def example(seed):
    rs = np.random.RandomState(seed)
    truth = rs.randn(5, 2) @ rs.randn(2, 4)
    mask = rs.rand(5, 4) < 0.6
    return truth + 0.3 * rs.randn(5, 4), np.where(mask, truth, 0.0), mask, 0.3
