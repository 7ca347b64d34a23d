"""Yota's README example: a Linear struct, `grad`, and an `update` training loop.

    python examples/linear.py
"""

import numpy as np


class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b


def forward(m, X):
    return m.W @ X


def loss(m, X):
    return np.sum(forward(m, X))


def regression_loss(m, X, Y):
    error = m.W @ X + m.b[:, None] - Y
    return np.mean(error ** 2)


def example():
    rng = np.random.default_rng(0)
    return Linear(rng.random((3, 4)), rng.random(3)), rng.random((4, 5))


def main():
    import yota_src as ys

    m, X = example()
    value, g = ys.grad(loss, m, X)
    print(f"loss {value:.4f}")
    print("g[0] paths:", sorted(g[0]))  # only ('W',): b is unused, so absent
    print("g[1] shape:", g[1].shape)

    rng = np.random.default_rng(1)
    W_true, b_true = rng.standard_normal((3, 4)), rng.standard_normal(3)
    X = rng.standard_normal((4, 64))
    Y = W_true @ X + b_true[:, None]
    losses = []
    for _ in range(300):
        value, g = ys.grad(regression_loss, m, X, Y)
        ys.update(m, g[0], lambda p, gp: p - 0.1 * gp)
        losses.append(value)
    print(f"training: loss {losses[0]:.4f} -> {losses[-1]:.6f}")
    assert losses[-1] < 1e-3 * losses[0]


if __name__ == "__main__":
    main()
