"""A dozen ordinary programs whose generated gradients are pinned as golden
files (tests/golden/grad_<name>.py) and read as a reviewer would.

Each `NAME` has a function and `NAME_example()` giving its arguments; the
gradient is taken for the arguments listed in WRT (all, where absent).
"""

from dataclasses import dataclass

import numpy as np

import yota_src as ys


def polynomial(x):
    a = x[0] * x[1] ** 2
    b = 3.0 * x[2] ** 3 - x[0] * x[2]
    return a * b + x[1] / (1.0 + x[0] ** 2)


def polynomial_example():
    return (np.array([0.5, -1.2, 2.0]),)


def rnn(Wx, Wh, xs):
    h = np.zeros(Wh.shape[0])
    for x in xs:
        h = np.tanh(Wx @ x + Wh @ h)
    return np.sum(h ** 2)


def rnn_example():
    rng = np.random.default_rng(0)
    return rng.normal(size=(4, 3)), 0.5 * rng.normal(size=(4, 4)), rng.normal(size=(3, 3))


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def logistic(w, b, X, y):
    p = sigmoid(X @ w + b)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_example():
    rng = np.random.default_rng(1)
    return rng.normal(size=5), 0.1, rng.normal(size=(20, 5)), (rng.random(20) > 0.5) * 1.0


def softmax_xent(W, X, labels):
    logits = X @ W
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


def softmax_xent_example():
    rng = np.random.default_rng(2)
    return rng.normal(size=(6, 4)), rng.normal(size=(10, 6)), rng.integers(0, 4, size=10)


def layer_norm(x, gamma, beta):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma + beta
    return np.sum(y * y)


def layer_norm_example():
    rng = np.random.default_rng(3)
    return rng.normal(size=(5, 4)), rng.normal(size=4), rng.normal(size=4)


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return np.sum((weights @ V) ** 2)


def attention_example():
    rng = np.random.default_rng(4)
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))


@dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray


@dataclass
class MLP:
    hidden: Layer
    out: Layer


def mlp(model, X, Y):
    h = np.maximum(X @ model.hidden.W + model.hidden.b, 0.0)
    pred = h @ model.out.W + model.out.b
    return np.mean((pred - Y) ** 2)


def mlp_example():
    rng = np.random.default_rng(5)
    model = MLP(Layer(rng.normal(size=(3, 8)), rng.normal(size=8)),
                Layer(rng.normal(size=(8, 2)), rng.normal(size=2)))
    return model, rng.normal(size=(16, 3)), rng.normal(size=(16, 2))


def branch(x, y):
    s = np.sum(x * y)
    if s > 0:
        return s ** 2
    return -s


def branch_example():
    return np.array([1.0, 2.0, 3.0]), np.array([0.5, -0.25, 1.0])


def newton_sqrt(a):
    x = a
    err = 1.0
    while err > 1e-3:
        x_next = 0.5 * (x + a / x)
        err = np.abs(x_next - x)
        x = x_next
    return x


def newton_sqrt_example():
    return (2.0,)


def huber(pred, target):
    r = pred - target
    small = np.abs(r) <= 1.0
    return np.sum(np.where(small, 0.5 * r ** 2, np.abs(r) - 0.5)) + np.sum(np.maximum(pred, 0))


def huber_example():
    return np.array([0.2, -2.0, 1.5, 0.7]), np.array([0.0, 0.5, -0.5, 0.9])


def reuse(x, y):
    d = x - y
    sq = np.sum(d * d)
    norm = np.sqrt(sq)
    return norm + sq / norm + np.sum(d / norm)


def reuse_example():
    return np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.5, 0.5])


def softplus(x):
    return np.log1p(np.exp(x))


ys.diffrule(softplus, "x", "dy / (1 + np.exp(-x))")


def user_rule(w, X):
    return np.sum(softplus(X @ w))


def user_rule_example():
    rng = np.random.default_rng(6)
    return rng.normal(size=3), rng.normal(size=(4, 3))


def row_scores(X, w, n):
    """A loop over the first `n` rows of an array, its count read at run time."""
    total = 0.0
    for t in range(n):
        total = total + np.tanh(X[t] @ w) ** 2
    return total


def row_scores_example():
    rng = np.random.default_rng(7)
    return rng.normal(size=(8, 3)), rng.normal(size=3), 5


NAMES = ("polynomial", "rnn", "logistic", "softmax_xent", "layer_norm", "attention", "mlp",
         "branch", "newton_sqrt", "huber", "reuse", "user_rule", "row_scores")
WRT = {"logistic": (0, 1), "softmax_xent": (0,), "mlp": (0,), "user_rule": (0,)}


def case(name: str):
    """(function, example arguments, wrt) for one golden program."""
    return globals()[name], globals()[f"{name}_example"](), WRT.get(name)
