"""Kalman filter marginal likelihood of a constant-velocity model: the
transition's damping and the log noise scales are learned; predict and
update steps in a loop, the innovation's log density through slogdet and
solve."""

import numpy as np


def kalman_nll(params, observations):
    damping, log_q, log_r = params
    dt = 0.1
    A = np.array([[1.0, dt], [0.0, 1.0]]) * np.array([[1.0, 1.0], [0.0, damping]])
    Q = np.exp(log_q) * np.array([[dt ** 3 / 3, dt ** 2 / 2], [dt ** 2 / 2, dt]])
    H = np.array([[1.0, 0.0]])
    R = np.exp(log_r) * np.eye(1)

    m = np.zeros(2)
    P = np.eye(2)
    nll = 0.0
    for y in observations:
        m = A @ m
        P = A @ P @ A.T + Q
        S = H @ P @ H.T + R
        innovation = y - H @ m
        _, logdet = np.linalg.slogdet(S)
        nll += 0.5 * (innovation @ np.linalg.solve(S, innovation) + logdet + np.log(2 * np.pi))
        K = P @ H.T @ np.linalg.inv(S)
        m = m + K @ innovation
        P = (np.eye(2) - K @ H) @ P
    return nll


def loss(params, observations):
    return kalman_nll(params, observations) / len(observations)


def example(seed):
    rs = np.random.RandomState(seed)
    T = 8
    positions = np.cumsum(0.1 * (1.0 + 0.3 * rs.randn(T)))
    observations = (positions + 0.1 * rs.randn(T))[:, None]
    params = np.array([0.9, np.log(0.5), np.log(0.02)]) + 0.05 * rs.randn(3)
    return params, observations
