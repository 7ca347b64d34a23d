"""Deep-equilibrium style layer: the hidden state is the fixed point of
z = tanh(W z + U x + b), found by iterating `while err > tol`; a loss with
a data-dependent `if` (gradient-norm style clipping of the representation)
on top. How many iterations run, and whether the clip applies, depend on
the data."""

import numpy as np

DYNAMIC = True


def solve_fixed_point(W, U, b, x, tol=1e-12, max_iter=200):
    z = np.zeros(W.shape[0])
    err = np.inf
    n = 0
    while err > tol and n < max_iter:
        z_next = np.tanh(W @ z + U @ x + b)
        err = np.linalg.norm(z_next - z)
        z = z_next
        n += 1
    return z


def loss(params, x, y):
    W, U, b, v = params
    z = solve_fixed_point(W, U, b, x)
    norm = np.sqrt(np.sum(z ** 2))
    if norm > 1.0:
        z = z / norm
    return (v @ z - y) ** 2


def example(seed):
    rs = np.random.RandomState(seed)
    n, d = 4, 3
    W = 0.3 * rs.randn(n, n) / np.sqrt(n)
    params = (W, (1.0 + seed) * rs.randn(n, d), 0.1 * rs.randn(n), rs.randn(n))
    return params, rs.randn(d), 0.5
