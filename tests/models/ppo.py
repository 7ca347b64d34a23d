"""PPO clipped surrogate for a linear-softmax policy: log-probabilities of
the taken actions, the probability ratio against the old policy, np.clip
and np.minimum, plus a value-function loss and an entropy bonus."""

import numpy as np

CLIP_EPS = 0.2


def log_softmax(x):
    x = x - np.max(x, axis=1, keepdims=True)
    return x - np.log(np.sum(np.exp(x), axis=1, keepdims=True))


def loss(params, states, actions, old_logp, returns):
    theta, w_value = params['policy'], params['value']
    logp_all = log_softmax(states @ theta)
    logp = logp_all[np.arange(len(actions)), actions]
    values = states @ w_value
    advantages = returns - values
    ratio = np.exp(logp - old_logp)
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    surrogate = np.minimum(ratio * adv, np.clip(ratio, 1 - CLIP_EPS, 1 + CLIP_EPS) * adv)
    entropy = -np.sum(np.exp(logp_all) * logp_all, axis=1)
    return -np.mean(surrogate) + 0.5 * np.mean(advantages ** 2) - 0.01 * np.mean(entropy)


def example(seed):
    rs = np.random.RandomState(seed)
    N, S, A = 10, 3, 3
    states = rs.randn(N, S)
    actions = rs.randint(0, A, size=N)
    params = {'policy': 0.5 * rs.randn(S, A), 'value': 0.5 * rs.randn(S)}
    old_logp = log_softmax(states @ (params['policy'] + 0.3 * rs.randn(S, A)))
    old_logp = old_logp[np.arange(N), actions]
    return params, states, actions, old_logp, rs.randn(N)
