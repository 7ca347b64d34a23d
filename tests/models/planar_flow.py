"""Normalising flow of planar layers fitted to an unnormalised 2-D density:
base samples pushed through f(z) = z + u tanh(w.z + b), the log-determinant
log|1 + u.psi| accumulated per layer, layers given as a list of dicts."""

import numpy as np


def planar_layer(z, layer):
    u, w, b = layer['u'], layer['w'], layer['b']
    a = z @ w + b
    h = np.tanh(a)
    psi = (1 - h ** 2)[:, None] * w
    log_det = np.log(np.abs(1 + psi @ u) + 1e-8)
    return z + np.outer(h, u), log_det


def log_target(z):
    r = np.sqrt(np.sum(z ** 2, axis=1))
    return -0.5 * ((r - 2.0) / 0.4) ** 2 - 0.5 * z[:, 1] ** 2 / 4


def loss(layers, eps):
    z = eps
    log_q = -0.5 * np.sum(eps ** 2, axis=1) - np.log(2 * np.pi)
    for layer in layers:
        z, log_det = planar_layer(z, layer)
        log_q = log_q - log_det
    return np.mean(log_q - log_target(z))


def example(seed):
    rs = np.random.RandomState(seed)
    layers = [{'u': 0.5 * rs.randn(2), 'w': 0.5 * rs.randn(2), 'b': 0.1 * rs.randn()}
              for _ in range(3)]
    return layers, rs.randn(10, 2)
