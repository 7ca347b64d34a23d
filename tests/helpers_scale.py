"""A user module whose large global arrays the gradients read (test_scale)."""

import numpy as np

_rng = np.random.default_rng(7)
W = _rng.standard_normal((20, 20)) * 0.2  # 400 elements: above codegen.LITERAL_LIMIT
EDGE = np.arange(256.0) / 256  # exactly at the limit: written as a literal
LABELS = _rng.integers(0, 20, size=300)  # an integer array, folded by its contents


class Config:
    pass


CFG = Config()
CFG.layers = [_rng.standard_normal((20, 20)) * 0.2 for _ in range(2)]


def layer(x):
    return np.sum(np.tanh(W @ x) ** 2)


def picks(x):
    h = np.tanh(W @ x)
    return np.sum(h[LABELS % 20] * EDGE[:20].sum())


def deep(x):
    for weights in CFG.layers:
        x = np.tanh(weights @ x)
    return np.sum(x)


def closure_over(V):
    def inner(x):
        return np.sum(np.sin(V @ x))

    return inner
