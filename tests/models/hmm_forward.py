"""Hidden Markov model with Gaussian emissions: the forward algorithm in log
space with scipy.special.logsumexp, unconstrained parameters normalised by
logsumexp along their axes."""

import numpy as np
from scipy.special import logsumexp


def normalize(log_weights, axis=None):
    return log_weights - logsumexp(log_weights, axis=axis, keepdims=True)


def emission_log_probs(means, log_stds, obs):
    stds = np.exp(log_stds)
    z = (obs[:, None] - means[None, :]) / stds
    return -0.5 * z ** 2 - log_stds - 0.5 * np.log(2 * np.pi)


def log_marginal(params, obs):
    log_pi = normalize(params['initial'])
    log_A = normalize(params['transition'], axis=1)
    log_B = emission_log_probs(params['means'], params['log stds'], obs)
    log_alpha = log_pi + log_B[0]
    for t in range(1, len(obs)):
        log_alpha = logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[t]
    return logsumexp(log_alpha)


def loss(params, obs):
    return -log_marginal(params, obs) / len(obs)


def example(seed):
    rs = np.random.RandomState(seed)
    K, T = 3, 7
    states = np.cumsum(rs.rand(T) < 0.3) % K
    obs = np.array([-2.0, 0.0, 2.0])[states] + 0.5 * rs.randn(T)
    params = {'initial': 0.1 * rs.randn(K), 'transition': rs.randn(K, K),
              'means': np.array([-1.5, 0.2, 1.8]) + 0.1 * rs.randn(K),
              'log stds': np.log(0.7) + 0.1 * rs.randn(K)}
    return params, obs
