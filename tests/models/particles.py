"""Particles joined by springs to their neighbours and repelled pairwise,
integrated in place: forces accumulated in a double loop with element
writes (`forces[i] += f`, `forces[j] -= f`), `vel += dt * forces`, and the
trajectory buffer written one step ahead, `traj[t + 1] = traj[t] + dt * vel`.
The initial velocities are fitted so the cloud ends near a target."""

import numpy as np

NUM_STEPS, DT = 6, 0.05


def pair_forces(pos, spring_k, rest_length):
    n = len(pos)
    forces = np.zeros_like(pos)
    for i in range(n):
        for j in range(i + 1, n):
            d = pos[j] - pos[i]
            dist = np.sqrt(np.sum(d ** 2))
            f = 0.1 * d / dist ** 3
            if j == i + 1:
                f = f - spring_k * (dist - rest_length) * d / dist
            forces[i] -= f
            forces[j] += f
    return forces


def simulate(pos0, vel0, spring_k):
    traj = np.zeros((NUM_STEPS + 1,) + pos0.shape)
    traj[0] = pos0
    vel = vel0.copy()
    for t in range(NUM_STEPS):
        vel += DT * pair_forces(traj[t], spring_k, 0.5)
        vel *= 0.98
        traj[t + 1] = traj[t] + DT * vel
    return traj


def loss(vel0, spring_k, pos0, target):
    traj = simulate(pos0, vel0, spring_k)
    return np.sum((traj[-1] - target) ** 2) + 0.01 * np.sum(vel0 ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    pos0 = np.array([[0.0, 0.0], [0.5, 0.1], [1.0, 0.0], [1.4, 0.4]]) + 0.05 * rs.randn(4, 2)
    target = pos0 + np.array([0.3, -0.2])
    return 0.2 * rs.randn(4, 2), 2.0 + seed, pos0, target
