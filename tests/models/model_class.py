"""A heteroscedastic regressor written as a class: parameters in a
dataclass, the network applied through `__call__`, a property for the noise
level and a method for the log-likelihood."""

from dataclasses import dataclass

import numpy as np


@dataclass
class Params:
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    log_noise: float


def softplus(x):
    return np.logaddexp(0.0, x)


class Regressor:
    def __init__(self, params: Params, activation=softplus):
        self.params = params
        self.activation = activation

    @property
    def noise_std(self):
        return np.exp(self.params.log_noise)

    def __call__(self, x):
        p = self.params
        h = self.activation(x @ p.W1 + p.b1)
        return h @ p.W2 + p.b2

    def log_likelihood(self, x, y):
        resid = (y - self(x)[:, 0]) / self.noise_std
        return np.sum(-0.5 * resid ** 2 - np.log(self.noise_std) - 0.5 * np.log(2 * np.pi))


def loss(model, x, y):
    return -model.log_likelihood(x, y) / len(y)


def example(seed):
    rng = np.random.default_rng(seed)
    D, H, N = 2, 5, 10
    params = Params(0.5 * rng.standard_normal((D, H)), np.zeros(H),
                    0.5 * rng.standard_normal((H, 1)), np.zeros(1), -0.5 + 0.1 * seed)
    x = rng.uniform(-1, 1, (N, D))
    y = x[:, 0] ** 2 - x[:, 1] + 0.1 * rng.standard_normal(N)
    return Regressor(params), x, y
