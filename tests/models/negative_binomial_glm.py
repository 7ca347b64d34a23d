"""Negative-binomial regression for over-dispersed counts: log-likelihood
through scipy.special.gammaln, a Gaussian prior on the weights with
scipy.stats.norm.logpdf, a softplus link for the dispersion."""

import numpy as np
from scipy.special import gammaln
from scipy.stats import norm


def negbin_loglike(r, p, x):
    return (gammaln(r + x) - gammaln(r) - gammaln(x + 1)
            + x * np.log(p) + r * np.log(1 - p))


def loss(weights, log_r, X, counts):
    r = np.exp(log_r)
    mean = np.exp(X @ weights)
    p = mean / (mean + r)
    log_prior = np.sum(norm.logpdf(weights, 0.0, 2.0))
    return -(np.sum(negbin_loglike(r, p, counts)) + log_prior) / len(counts)


def example(seed):
    rs = np.random.RandomState(seed)
    X = np.column_stack([np.ones(12), rs.randn(12, 2)])
    counts = rs.negative_binomial(3, 0.4, size=12).astype(float)
    return 0.1 * rs.randn(3), 1.0 + 0.1 * seed, X, counts
