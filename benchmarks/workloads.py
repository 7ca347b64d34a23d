"""The workloads of bench_workloads.py: each a loss, its example arguments,
and a hand-written gradient as careful as a person would make it (in-place
ufuncs, reused buffers, the algebraic shortcut).

A hand-written function returns `(value, gradient per positional argument)`
in the order `simplegrad` does; a struct's gradient is a dict of paths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class Workload:
    name: str
    loss: Callable
    args: Callable  # () -> the example arguments
    by_hand: Callable


# --- affine: sum(W @ x + b) ---------------------------------------------------

def affine(W, b, x):
    return np.sum(W @ x + b[:, None])


def affine_by_hand(W, b, x):
    """As in the seed project's comparison, the reference keeps its matmuls:
    the gradient of `W @ x` is two products with the output's gradient. The
    row-sum shortcut (every row of dW is x's row sums) is what yota-src's seed
    algebra finds, and the 0.6x target of issue 11 measures that it does."""
    y = W @ x
    y += b[:, None]
    out = y.sum()
    dy = np.ones_like(y)
    return out, dy @ x.T, dy.sum(axis=1), W.T @ dy


# --- MLP 784-256-10, softmax cross-entropy ------------------------------------

def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_p = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(Y * log_p) / X.shape[0]


def mlp_by_hand(W1, b1, W2, b2, X, Y):
    n = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    total = p.sum(axis=1, keepdims=True)
    out = -np.sum(Y * (logits - np.log(total))) / n
    p /= total
    p -= Y
    p /= n  # dlogits
    dW2, db2 = h.T @ p, p.sum(axis=0)
    dh = p @ W2.T
    dh *= 1 - h * h
    return out, X.T @ dh, dh.sum(axis=0), dW2, db2, dh @ W1.T, None


# --- logistic regression, a helper `sigmoid` ----------------------------------

def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def logistic(w, X, y):
    p = sigmoid(X @ w)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_by_hand(w, X, y):
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    out = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    residual = (p - y) / y.shape[0]
    return out, X.T @ residual, np.outer(residual, w), -z / y.shape[0]  # log p - log(1 - p) = z


# --- a polynomial of scalar reads ----------------------------------------------

def polynomial(x):
    a, b, c = x[0], x[1], x[2]
    return (a * b + b * c + c * a + a * a * b - b * b * c + 3.0 * a * c * c
            + (a - b) * (b - c) * (c - a) + a * b * c + 0.5 * a * a + 2.0 * b * b * b)


def polynomial_by_hand(x):
    a, b, c = x.tolist()
    value = (a * b + b * c + c * a + a * a * b - b * b * c + 3.0 * a * c * c
             + (a - b) * (b - c) * (c - a) + a * b * c + 0.5 * a * a + 2.0 * b * b * b)
    p, q, r = (a - b), (b - c), (c - a)
    da = b + c + 2 * a * b + 3 * c * c + q * r - p * q + b * c + a
    db = a + c + a * a - 2 * b * c - q * r + p * r + a * c + 6 * b * b
    dc = b + a - b * b + 6 * a * c - p * r + p * q + a * b
    return value, np.array([da, db, dc])


# --- tanh RNN, 50 steps, hidden 64 ---------------------------------------------

def rnn(Wx, Wh, xs):
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(Wx @ xs[t] + Wh @ h)
    return np.sum(h ** 2)


def rnn_by_hand(Wx, Wh, xs):
    steps = xs.shape[0]
    hs = np.empty((steps + 1, Wh.shape[0]))
    hs[0] = 0.0
    projected = xs @ Wx.T  # every step's input product at once
    for t in range(steps):
        np.tanh(projected[t] + Wh @ hs[t], out=hs[t + 1])
    out = np.sum(hs[-1] ** 2)
    dh = 2.0 * hs[-1]
    dzs = np.empty((steps, Wh.shape[0]))
    for t in reversed(range(steps)):
        dz = dzs[t]
        np.multiply(dh, 1 - hs[t + 1] ** 2, out=dz)
        dh = dz @ Wh
    return out, dzs.T @ xs, dzs.T @ hs[:-1], dzs @ Wx


# --- Yota's `iterative` ----------------------------------------------------------

def iterative(x, n):
    for _ in range(n):
        x = x * 2.0
    return np.sum(x)


def iterative_by_hand(x, n):
    scale = 2.0 ** n
    return float(x.sum()) * scale, np.full(x.shape, scale), None


# --- sum of a logistic ------------------------------------------------------------

def logistic_sum(x):
    return np.sum(1 / (1 + np.exp(-x)))


def logistic_sum_by_hand(x):
    p = np.exp(-x)
    p += 1
    np.reciprocal(p, out=p)
    out = p.sum()
    grad = 1 - p
    grad *= p
    return out, grad


# --- Yota's Linear struct -----------------------------------------------------------

class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b


def linear(m, X):
    return np.sum(m.W @ X + m.b[:, None])


def linear_by_hand(m, X):
    out = np.sum(m.W @ X + m.b[:, None])
    return out, {"W": np.broadcast_to(X.sum(axis=1), m.W.shape),
                 "b": np.full(m.b.shape, float(X.shape[1]))}, \
        np.broadcast_to(m.W.sum(axis=0)[:, None], X.shape)


def _rng():
    return np.random.default_rng(0)


def _mlp_args():
    rng = _rng()
    labels = rng.integers(0, 10, 64)
    return (rng.normal(size=(784, 256)) * 0.05, np.zeros(256), rng.normal(size=(256, 10)) * 0.05,
            np.zeros(10), rng.normal(size=(64, 784)), np.eye(10)[labels])


def _logistic_args():
    rng = _rng()
    return rng.normal(size=20) * 0.1, rng.normal(size=(1000, 20)), \
        rng.integers(0, 2, 1000).astype(float)


WORKLOADS = [
    Workload("affine 128x784 @ 784x100", affine,
             lambda: (_rng().normal(size=(128, 784)), _rng().normal(size=128),
                      _rng().normal(size=(784, 100))), affine_by_hand),
    Workload("MLP 784-256-10, batch 64", mlp, _mlp_args, mlp_by_hand),
    Workload("logistic regression 1000x20", logistic, _logistic_args, logistic_by_hand),
    Workload("scalar polynomial", polynomial, lambda: (np.array([0.5, -1.2, 2.0]),),
             polynomial_by_hand),
    Workload("tanh RNN, 50 steps, hidden 64", rnn,
             lambda: (_rng().normal(size=(64, 8)) * 0.3, _rng().normal(size=(64, 64)) * 0.1,
                      _rng().normal(size=(50, 8))), rnn_by_hand),
    Workload("iterative, n=3, 4 elements", iterative,
             lambda: (_rng().normal(size=4), 3), iterative_by_hand),
    Workload("sum(1/(1+exp(-x))), 5", logistic_sum, lambda: (_rng().normal(size=5),),
             logistic_sum_by_hand),
    Workload("sum(1/(1+exp(-x))), 10^6", logistic_sum, lambda: (_rng().normal(size=10**6),),
             logistic_sum_by_hand),
    Workload("Linear struct", linear,
             lambda: (Linear(_rng().random((3, 4)), _rng().random(3)), _rng().random((4, 5))),
             linear_by_hand),
]
