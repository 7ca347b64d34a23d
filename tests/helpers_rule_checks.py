"""What the rule tests share: a rule checked against central finite
differences on every entry of its result, and reproducible inputs."""

import numpy as np

import yota_src as ys


def check(fn, *arrays, rtol=1e-5, atol=1e-7, **kwargs):
    """fn's result weighted by fixed random numbers, so every output entry
    counts; fn's keywords reach it as constants (a closure), as in user code."""
    w = np.random.default_rng(7).uniform(-1.0, 1.0, np.shape(fn(*arrays, **kwargs)))

    def weighted(w, *arrays):
        return np.sum(fn(*arrays, **kwargs) * w)

    ys.check_grad(weighted, w, *arrays, rtol=rtol, atol=atol)


def uniform(shape, low=-1.0, high=1.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape)


def normal(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)
