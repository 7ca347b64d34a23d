"""Variational inference for a hierarchical normal model (eight-schools
style), with log densities from scipy.stats.norm called the ways people call
them (positional, loc=/scale= keywords, a frozen distribution) and
reparameterised samples from a np.random.Generator."""

import numpy as np
from scipy import stats

NUM_SAMPLES = 4


def log_joint(mu, log_tau, theta, y, sigma):
    tau = np.exp(log_tau)
    lp = stats.norm.logpdf(mu, 0.0, 5.0) + stats.norm.logpdf(log_tau, loc=0.0, scale=1.0)
    lp = lp + np.sum(stats.norm.logpdf(theta, loc=mu[:, None], scale=tau[:, None]), axis=1)
    return lp + np.sum(stats.norm(theta, sigma).logpdf(y), axis=1)


def loss(var_params, y, sigma, rng):
    D = len(y) + 2
    mean, log_std = var_params[:D], var_params[D:]
    z = mean + np.exp(log_std) * rng.standard_normal((NUM_SAMPLES, D))
    entropy = np.sum(log_std)
    return -(entropy + np.mean(log_joint(z[:, 0], z[:, 1], z[:, 2:], y, sigma)))


def example(seed):
    rng = np.random.default_rng(seed)
    y = np.array([28.0, 8.0, -3.0, 7.0]) / 10 + 0.1 * rng.standard_normal(4)
    sigma = np.array([15.0, 10.0, 16.0, 11.0]) / 10
    var_params = np.concatenate([0.1 * rng.standard_normal(6), -1.0 * np.ones(6)])
    return var_params, y, sigma, np.random.default_rng(300 + seed)
