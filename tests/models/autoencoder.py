"""Tied-weight denoising autoencoder. The loss takes inputs and targets
separately, and is called as loss(params, X, X): one array is passed as two
arguments, each of which gets its own gradient."""

import numpy as np


def encode(params, x):
    return np.tanh(x @ params['W'] + params['b_hidden'])


def decode(params, h):
    return h @ params['W'].T + params['b_visible']


def loss(params, inputs, targets):
    corrupted = inputs * 0.9
    reconstruction = decode(params, encode(params, corrupted))
    return np.mean(np.sum((reconstruction - targets) ** 2, axis=1))


def example(seed):
    rs = np.random.RandomState(seed)
    X = rs.randn(6, 5)
    params = {'W': 0.3 * rs.randn(5, 3), 'b_hidden': np.zeros(3), 'b_visible': np.zeros(5)}
    return params, X, X
