"""Sliced Wasserstein distance between generated and target samples: random
projection directions from a RandomState passed in, both projected clouds
sorted with np.sort, squared differences of the order statistics."""

import numpy as np

NUM_PROJECTIONS = 5


def generator(params, z):
    W, b = params
    return np.tanh(z @ W + b)


def loss(params, z, target, rs):
    samples = generator(params, z)
    directions = rs.randn(samples.shape[1], NUM_PROJECTIONS)
    directions /= np.linalg.norm(directions, axis=0, keepdims=True)
    proj_x = np.sort(samples @ directions, axis=0)
    proj_y = np.sort(target @ directions, axis=0)
    return np.mean((proj_x - proj_y) ** 2)


def example(seed):
    rs = np.random.RandomState(seed)
    z = rs.randn(8, 2)
    target = 0.5 * rs.randn(8, 3) + 0.2
    return (0.5 * rs.randn(2, 3), 0.1 * rs.randn(3)), z, target, np.random.RandomState(9 + seed)
