"""GRU regression on a noisy time series, parameters in a namedtuple,
hidden states collected in a list and stacked for the read-out."""

from collections import namedtuple

import numpy as np

GRUParams = namedtuple("GRUParams", "Wz Uz bz Wr Ur br Wh Uh bh Wout bout")


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gru_cell(p, x, h):
    z = sigmoid(x @ p.Wz + h @ p.Uz + p.bz)
    r = sigmoid(x @ p.Wr + h @ p.Ur + p.br)
    h_tilde = np.tanh(x @ p.Wh + (r * h) @ p.Uh + p.bh)
    return (1 - z) * h + z * h_tilde


def run_gru(p, xs):
    h = np.zeros((xs.shape[1], p.Uz.shape[0]))
    states = []
    for t in range(xs.shape[0]):
        h = gru_cell(p, xs[t], h)
        states.append(h)
    return np.stack(states)


def loss(params, xs, ys):
    hs = run_gru(params, xs)
    preds = hs @ params.Wout + params.bout
    return 0.5 * np.mean((preds[..., 0] - ys) ** 2)


def example(seed):
    rng = np.random.default_rng(seed)
    n_in, n_h, T, B = 2, 4, 5, 3

    def w(*shape):
        return 0.5 * rng.standard_normal(shape)

    params = GRUParams(w(n_in, n_h), w(n_h, n_h), w(n_h), w(n_in, n_h), w(n_h, n_h), w(n_h),
                       w(n_in, n_h), w(n_h, n_h), w(n_h), w(n_h, 1), w(1))
    t = np.linspace(0, 2 * np.pi, T + 1)[:, None] + rng.uniform(0, 1, B)
    xs = np.stack([np.sin(t[:-1]), np.cos(t[:-1])], axis=-1)
    ys = np.sin(t[1:]) + 0.05 * rng.standard_normal((T, B))
    return params, xs, ys
