import numpy as np


def loss(W, b, x):
    h = np.tanh(W @ x + b)
    return np.sum(h * h)


def example():
    return np.full((3, 4), 0.1), np.zeros(3), np.ones(4)
