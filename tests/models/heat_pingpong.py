"""Explicit heat diffusion with ping-pong buffers: two rows of one array are
taken as views `cur` and `nxt`, the stencil writes the interior of `nxt` from
`cur`, the boundaries are written element by element, and the two names are
swapped each step. The diffusivity profile is fitted to a target; the number
of steps is an argument (another value at the second point)."""

import numpy as np


def diffuse(u0, kappa, num_steps):
    buffers = np.zeros((2, len(u0)))
    buffers[0] = u0
    cur, nxt = buffers[0], buffers[1]
    for _ in range(num_steps):
        flux = kappa[:-1] * (cur[1:] - cur[:-1])
        nxt[1:-1] = cur[1:-1] + 0.2 * (flux[1:] - flux[:-1])
        nxt[0] = 0.0
        nxt[-1] = 0.0
        cur, nxt = nxt, cur
    return cur


def loss(kappa, u0, target, num_steps=6):
    u = diffuse(u0, kappa, num_steps)
    return np.sum((u - target) ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    n = 8
    u0 = np.exp(-((np.arange(n) - 3.5) ** 2) / 2.0)
    target = np.full(n, 0.3)
    target[[0, -1]] = 0.0
    return 0.8 + 0.2 * rs.rand(n), u0, target, 6 + seed
