"""Regression MLP whose weights live in one flat vector.

The optimiser sees a single parameter vector; the model cuts it into layers
with offsets computed from the layer sizes, and the prior sums a `map` over
the weight matrices.
"""

import numpy as np

LAYER_SIZES = [3, 6, 5, 1]
L2_REG = 0.01
NOISE_VARIANCE = 0.1


def layer_shapes(sizes):
    return list(zip(sizes[:-1], sizes[1:]))


def num_weights(sizes):
    return sum((m + 1) * n for m, n in layer_shapes(sizes))


def unpack_layers(params):
    layers, offset = [], 0
    for m, n in layer_shapes(LAYER_SIZES):
        W = params[offset:offset + m * n].reshape((m, n))
        b = params[offset + m * n:offset + (m + 1) * n]
        layers.append((W, b))
        offset += (m + 1) * n
    return layers


def predict(params, inputs, nonlinearity=np.tanh):
    layers = unpack_layers(params)
    for W, b in layers[:-1]:
        inputs = nonlinearity(np.dot(inputs, W) + b)
    W, b = layers[-1]
    return np.dot(inputs, W) + b


def loss(params, inputs, targets):
    weights = [W for W, _ in unpack_layers(params)]
    log_prior = -L2_REG * sum(map(lambda W: np.sum(W ** 2), weights))
    preds = predict(params, inputs)
    log_lik = -np.sum([(p - t) ** 2 for p, t in zip(preds[:, 0], targets)]) / NOISE_VARIANCE
    return -(log_prior + log_lik) / len(targets)


def example(seed):
    rs = np.random.RandomState(seed)
    inputs = rs.uniform(-2, 2, size=(12, 3))
    targets = np.sin(inputs[:, 0]) * np.cos(inputs[:, 1]) + 0.1 * rs.randn(12)
    params = 0.3 * rs.randn(num_weights(LAYER_SIZES))
    return params, inputs, targets
