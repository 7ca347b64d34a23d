"""A two-layer tanh MLP with a softmax cross-entropy loss, parameters in a dataclass.

    python examples/mlp.py
"""

from dataclasses import dataclass

import numpy as np


@dataclass
class MLP:
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray


def predict(params, x):
    h = np.tanh(params.W1 @ x + params.b1[:, None])
    return params.W2 @ h + params.b2[:, None]


def cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=0, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=0, keepdims=True))
    return -np.mean(log_probs[labels, np.arange(labels.shape[0])])


def loss(params, x, labels):
    return cross_entropy(predict(params, x), labels)


def example():
    rng = np.random.default_rng(0)
    params = MLP(0.5 * rng.standard_normal((16, 8)), np.zeros(16),
                 0.5 * rng.standard_normal((3, 16)), np.zeros(3))
    x = rng.standard_normal((8, 32))
    labels = rng.integers(0, 3, size=32)
    return params, x, labels


def main():
    import yota_src as ys

    params, x, labels = example()
    df = ys.simplegrad(loss, params, x, labels)
    print(df)
    first = None
    for _ in range(200):
        value, g = ys.grad(loss, params, x, labels)
        params = ys.update(params, g[0], lambda p, gp: p - 0.5 * gp)
        first = value if first is None else first
    print(f"training: loss {first:.4f} -> {value:.4f}")
    assert value < 0.5 * first


if __name__ == "__main__":
    main()
