"""A tanh MLP written for NumPy and CuPy alike, differentiated on a GPU.

    yota-src gen examples/gpu.py:loss --args examples/gpu.py:example -o grad_loss_gpu.py

`example()` puts the arguments on the device, so the generated module imports
cupy and runs there (it needs CuPy, `pip install -e ".[cuda]"`, and a GPU).
The loss picks its array module the way CuPy advises, from its arguments.
"""

import numpy as np

try:
    from cupy import get_array_module
except ImportError:  # NumPy alone: every array is NumPy's
    def get_array_module(*arrays):
        return np


def loss(W1, b1, W2, x, labels):
    xp = get_array_module(x)
    h = xp.tanh(W1 @ x + b1[:, None])
    logits = W2 @ h
    shifted = logits - xp.max(logits, axis=0, keepdims=True)
    log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=0, keepdims=True))
    return -xp.mean(log_probs[labels, xp.arange(labels.shape[0])])


def example():
    import cupy

    rng = np.random.default_rng(0)
    host = (0.5 * rng.standard_normal((16, 8)), np.zeros(16), 0.5 * rng.standard_normal((3, 16)),
            rng.standard_normal((8, 32)), rng.integers(0, 3, size=32))
    return tuple(cupy.asarray(a) for a in host)
