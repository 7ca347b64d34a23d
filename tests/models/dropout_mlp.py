"""MLP trained with inverted dropout: masks drawn as rng.random(shape) < keep
from a np.random.Generator passed in, a softplus output for positive
targets, and a Poisson log-likelihood."""

import numpy as np

KEEP_PROB = 0.8


def dropout(h, rng, keep_prob=KEEP_PROB):
    mask = rng.random(h.shape) < keep_prob
    return h * mask / keep_prob


def forward(params, x, rng):
    for i, (W, b) in enumerate(params):
        x = x @ W + b
        if i < len(params) - 1:
            x = dropout(np.tanh(x), rng)
    return x


def loss(params, x, counts, rng):
    log_rate = forward(params, x, rng)[:, 0]
    return np.mean(np.exp(log_rate) - counts * log_rate)


def example(seed):
    rng = np.random.default_rng(seed)
    sizes = [3, 8, 8, 1]
    params = [(0.4 * rng.standard_normal((m, n)), np.zeros(n))
              for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((9, 3))
    counts = rng.poisson(np.exp(0.5 * x[:, 0])).astype(float)
    return params, x, counts, np.random.default_rng(500 + seed)
