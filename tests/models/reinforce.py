"""REINFORCE on a tiny chain MDP: actions sampled inside the loss with
rs.choice(p=probs) from a RandomState passed in, log-probabilities of the
taken actions weighted by the (non-differentiated) return to go."""

import numpy as np

NUM_STATES, NUM_ACTIONS, HORIZON = 4, 2, 5


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def step(state, action):
    next_state = min(state + 1, NUM_STATES - 1) if action == 1 else max(state - 1, 0)
    return next_state, float(next_state == NUM_STATES - 1)


def loss(theta, rs):
    state = 0
    log_probs, rewards = [], []
    for _ in range(HORIZON):
        probs = softmax(theta[state])
        action = rs.choice(NUM_ACTIONS, p=probs)
        log_probs.append(np.log(probs[action]))
        state, reward = step(state, action)
        rewards.append(reward)
    returns = np.cumsum(rewards[::-1])[::-1]
    return -sum(lp * g for lp, g in zip(log_probs, returns)) + 0.01 * np.sum(theta ** 2)


DYNAMIC = True


def example(seed):
    rs = np.random.RandomState(seed)
    return 0.5 * rs.randn(NUM_STATES, NUM_ACTIONS), np.random.RandomState(40 + seed)
