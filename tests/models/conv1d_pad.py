"""Temporal convolution network for sequence denoising: 'same' padding with
np.pad, windows from np.lib.stride_tricks.sliding_window_view, two layers
with a residual connection."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def conv1d_same(x, kernel, bias):
    """x: (length, channels_in); kernel: (width, channels_in, channels_out)."""
    width = kernel.shape[0]
    padded = np.pad(x, ((width // 2, width // 2), (0, 0)), mode='reflect')
    windows = sliding_window_view(padded, width, axis=0)     # (length, channels_in, width)
    return np.einsum('lcw,wco->lo', windows, kernel) + bias


def loss(params, noisy, clean):
    h = np.tanh(conv1d_same(noisy, params['k1'], params['b1']))
    out = noisy + conv1d_same(h, params['k2'], params['b2'])
    return np.mean((out - clean) ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    t = np.linspace(0, 2 * np.pi, 12)
    clean = np.stack([np.sin(t), np.cos(2 * t)], axis=1)
    noisy = clean + 0.2 * rs.randn(12, 2)
    params = {'k1': 0.3 * rs.randn(3, 2, 4), 'b1': np.zeros(4),
              'k2': 0.3 * rs.randn(3, 4, 2), 'b2': np.zeros(2)}
    return params, noisy, clean
