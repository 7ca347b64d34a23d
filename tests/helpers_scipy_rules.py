"""A user function whose rule, given in test_scipy_modules.py, names SciPy.
This module imports only NumPy and math."""

import math

import numpy as np


def log_gamma(x):
    return np.vectorize(math.lgamma, otypes=[float])(x)


def log_gamma_loss(x):
    return np.sum(log_gamma(x) * np.arange(1.0, np.size(x) + 1.0))


def numpy_only(x):
    return np.sum(np.tanh(x) ** 2)
