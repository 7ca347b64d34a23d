"""Mixture of experts in functional style: experts applied with
map(partial(...)), gating weights, the prediction folded with
functools.reduce, and the penalty over the experts that are `filter`ed as
active."""

from functools import partial, reduce

import numpy as np


def expert_forward(expert, x):
    W, b, active = expert
    return np.tanh(x @ W + b)


def gate(gate_W, x):
    logits = x @ gate_W
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def loss(experts, gate_W, x, y):
    outputs = list(map(partial(expert_forward, x=x), experts))
    weights = gate(gate_W, x)
    weighted = [weights[:, k:k + 1] * out for k, out in enumerate(outputs)]
    prediction = reduce(np.add, weighted)[:, 0]
    active = filter(lambda e: e[2], experts)
    penalty = sum(np.sum(W ** 2) for W, _, _ in active)
    return np.mean((prediction - y) ** 2) + 0.01 * penalty


def example(seed):
    rs = np.random.RandomState(seed)
    D = 3
    experts = [(0.5 * rs.randn(D, 1), 0.1 * rs.randn(1), k != 1) for k in range(3)]
    x = rs.randn(8, D)
    return experts, 0.5 * rs.randn(D, 3), x, np.sin(x[:, 0])
