"""Logistic regression with an L2 penalty; boolean labels."""

import numpy as np


def sigmoid(x):
    return 0.5 * (np.tanh(x / 2.0) + 1)


def logistic_predictions(weights, bias, inputs):
    return sigmoid(np.dot(inputs, weights) + bias)


def loss(weights, bias, inputs, targets, l2):
    preds = logistic_predictions(weights, bias, inputs)
    label_probabilities = preds * targets + (1 - preds) * (1 - targets)
    return -np.sum(np.log(label_probabilities)) + l2 * np.dot(weights, weights)


def example(seed):
    rs = np.random.RandomState(seed)
    inputs = rs.randn(20, 4)
    true_weights = np.array([1.0, -2.0, 0.5, 0.0])
    targets = (inputs @ true_weights + 0.3 * rs.randn(20)) > 0
    weights = 0.1 * rs.randn(4)
    return weights, 0.2 * seed - 0.1, inputs, targets, 0.01 * (seed + 1)
