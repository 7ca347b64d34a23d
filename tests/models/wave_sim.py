"""A damped string of masses and springs, integrated with semi-implicit
Euler in place: velocities updated with `v += dt * a`, the clamped ends
written element by element, and positions stored in a trajectory buffer
`x[t + 1] = x[t] + dt * v`. The loss asks the string to reach a target
shape with little energy along the way."""

import numpy as np

NUM_STEPS = 12
DT = 0.05


def accelerations(x, stiffness, damping, v):
    a = np.zeros_like(x)
    a[1:-1] = stiffness * (x[:-2] - 2.0 * x[1:-1] + x[2:])
    a -= damping * v
    a[0] = 0.0
    a[-1] = 0.0
    return a


def simulate(x0, v0, stiffness, damping):
    x = np.zeros((NUM_STEPS + 1, len(x0)))
    x[0] = x0
    v = v0.copy()
    for t in range(NUM_STEPS):
        v += DT * accelerations(x[t], stiffness, damping, v)
        x[t + 1] = x[t] + DT * v
    return x


def loss(v0, stiffness, x0, target):
    x = simulate(x0, v0, stiffness, 0.1)
    kinetic = 0.5 * np.sum(np.diff(x, axis=0) ** 2) / DT ** 2
    return np.sum((x[-1] - target) ** 2) + 1e-3 * kinetic


def example(seed):
    rs = np.random.RandomState(seed)
    n = 7
    grid = np.linspace(0, 1, n)
    x0 = np.sin(np.pi * grid)
    target = 0.5 * np.sin(2 * np.pi * grid)
    v0 = 0.1 * rs.randn(n)
    return v0, 4.0 + seed, x0, target
