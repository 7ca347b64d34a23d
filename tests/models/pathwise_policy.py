"""Reparameterised Gaussian policy for a continuous-control toy: actions are
drawn with rng.normal(mean, std) straight from the policy's parameters (no
separate noise), pass through a tanh squashing, and the loss is the negative
expected reward plus an entropy bonus, as in SAC-style actor updates."""

import numpy as np


def policy(params, states):
    hidden = np.tanh(states @ params["W1"] + params["b1"])
    mean = hidden @ params["W_mu"]
    log_std = np.clip(hidden @ params["W_std"], -3.0, 1.0)
    return mean, log_std


def reward(actions, states):
    target = np.sin(states[:, :1])
    return -np.sum((actions - target) ** 2, axis=1)


def loss(params, states, rng):
    mean, log_std = policy(params, states)
    raw = rng.normal(mean, np.exp(log_std))
    actions = np.tanh(raw)
    entropy = np.sum(log_std + 0.5 * np.log(2 * np.pi * np.e), axis=1)
    return -np.mean(reward(actions, states) + 0.01 * entropy)


def example(seed):
    rs = np.random.RandomState(seed)
    params = {"W1": 0.5 * rs.randn(3, 8), "b1": np.zeros(8),
              "W_mu": 0.3 * rs.randn(8, 1), "W_std": 0.1 * rs.randn(8, 1)}
    return params, rs.randn(16, 3), np.random.default_rng(seed)
