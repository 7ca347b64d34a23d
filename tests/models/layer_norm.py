"""Pre-norm residual MLP block: layer normalisation with a learned gain and
bias, a GELU feed-forward, and a mean-squared error on the block's output."""

import numpy as np

EPS = 1e-5


def layer_norm(x, gain, bias):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gain * (x - mu) / np.sqrt(var + EPS) + bias


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def block(p, x):
    h = layer_norm(x, p['ln_gain'], p['ln_bias'])
    h = gelu(h @ p['W1'] + p['b1'])
    return x + h @ p['W2'] + p['b2']


def loss(p, x, y):
    return np.mean((block(p, x) - y) ** 2)


def example(seed):
    rng = np.random.default_rng(seed)
    D, H, N = 4, 6, 5
    p = {'ln_gain': 1.0 + 0.1 * rng.standard_normal(D), 'ln_bias': 0.1 * rng.standard_normal(D),
         'W1': 0.5 * rng.standard_normal((D, H)), 'b1': np.zeros(H),
         'W2': 0.5 * rng.standard_normal((H, D)), 'b2': np.zeros(D)}
    x = rng.standard_normal((N, D))
    y = np.tanh(x[:, ::-1])
    return p, x, y
