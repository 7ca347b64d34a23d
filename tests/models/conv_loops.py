"""Small convnet written with loops and slicing: a valid 2-D convolution
filling an output buffer one position at a time, ReLU, 2x2 max pooling by
reshape, a dense layer and softmax cross-entropy with integer labels."""

import numpy as np


def conv2d(images, kernels, bias):
    N, C, H, W = images.shape
    F, _, kh, kw = kernels.shape
    out = np.zeros((N, F, H - kh + 1, W - kw + 1))
    for i in range(H - kh + 1):
        for j in range(W - kw + 1):
            patch = images[:, :, i:i + kh, j:j + kw]
            out[:, :, i, j] = np.tensordot(patch, kernels, axes=([1, 2, 3], [1, 2, 3]))
    return out + bias[None, :, None, None]


def max_pool(x, size=2):
    N, F, H, W = x.shape
    return x.reshape(N, F, H // size, size, W // size, size).max(axis=(3, 5))


def loss(params, images, labels):
    kernels, conv_bias, W, b = params
    h = np.maximum(conv2d(images, kernels, conv_bias), 0.0)
    h = max_pool(h).reshape(images.shape[0], -1)
    logits = h @ W + b
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


def example(seed):
    rs = np.random.RandomState(seed)
    N, C, H, F, k, classes = 3, 1, 6, 2, 3, 3
    images = rs.randn(N, C, H, H)
    labels = rs.randint(0, classes, size=N)
    params = (0.5 * rs.randn(F, C, k, k), 0.1 * rs.randn(F),
              0.5 * rs.randn(F * 2 * 2, classes), np.zeros(classes))
    return params, images, labels
