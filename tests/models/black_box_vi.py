"""Black-box variational inference for Bayesian logistic regression: a
diagonal Gaussian approximation, the reparameterisation trick with noise from
a RandomState passed in, and the Gaussian entropy in closed form."""

import numpy as np

NUM_SAMPLES = 8


def unpack_params(params):
    D = len(params) // 2
    mean, log_std = params[:D], params[D:]
    return mean, log_std


def gaussian_entropy(log_std):
    D = len(log_std)
    return 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)


def log_density(weights, inputs, targets):
    """Unnormalised log posterior, vectorised over rows of `weights`."""
    log_prior = -0.5 * np.sum(weights ** 2, axis=1)
    logits = np.dot(weights, inputs.T)
    signs = 2.0 * targets - 1.0
    log_lik = -np.sum(np.logaddexp(0.0, -signs * logits), axis=1)
    return log_prior + log_lik


def loss(params, inputs, targets, rs):
    mean, log_std = unpack_params(params)
    samples = rs.randn(NUM_SAMPLES, len(mean)) * np.exp(log_std) + mean
    lower_bound = gaussian_entropy(log_std) + np.mean(log_density(samples, inputs, targets))
    return -lower_bound


def example(seed):
    rs = np.random.RandomState(seed)
    inputs = rs.randn(12, 3)
    targets = (inputs @ np.array([1.5, -1.0, 0.5]) > 0).astype(float)
    params = np.concatenate([0.3 * rs.randn(3), -1.0 + 0.1 * rs.randn(3)])
    return params, inputs, targets, np.random.RandomState(10 + seed)
