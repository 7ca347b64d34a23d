"""CP (PARAFAC) decomposition of a 3-way tensor: the reconstruction written
with np.einsum(..., optimize=True), a squared error and a ridge penalty on
the factor matrices (a tuple)."""

import numpy as np


def reconstruct(factors):
    A, B, C = factors
    return np.einsum('ir,jr,kr->ijk', A, B, C, optimize=True)


def loss(factors, tensor):
    resid = reconstruct(factors) - tensor
    return 0.5 * np.sum(resid ** 2) + 0.01 * sum(np.sum(F ** 2) for F in factors)


def example(seed):
    rs = np.random.RandomState(seed)
    rank = 2
    true = [rs.randn(d, rank) for d in (3, 4, 2)]
    tensor = np.einsum('ir,jr,kr->ijk', *true) + 0.05 * rs.randn(3, 4, 2)
    return tuple(0.5 * rs.randn(d, rank) for d in (3, 4, 2)), tensor
