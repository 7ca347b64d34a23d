"""User functions given their own rules in test_user_rules.py."""

import math

import numpy as np


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def logistic_loss(x):
    return np.sum(logistic(x) * 2.0)


def conv(A, W, pad=0):
    return np.convolve(np.pad(A, pad), W, mode="valid")


def conv_grad_data(dy, W, pad=0):
    full = np.convolve(dy, W[::-1], mode="full")
    return full[pad:len(full) - pad] if pad else full


def conv_loss(A, W):
    return np.sum(conv(A, W, pad=1) ** 2)


def soft_clip(x, limit):
    return np.tanh(x / limit) * limit


def soft_clip_loss(x, limit):
    return np.sum(soft_clip(x, limit))


def root(t):
    return math.sqrt(t)


def root_loss(t):
    return root(t) * 2.0


def double(x):
    return 2.0 * x


def double_loss(x):
    return np.sum(np.sin(double(x)))


def steep_loss(x):
    return np.sum(np.sin(3e4 * x ** 2))


def scaled_clip(x, limit):
    """Unrolled (no rule of its own), declared to pass no gradient to `limit`."""
    return np.minimum(x, limit) * limit


def scaled_clip_twice(x, limit):
    return scaled_clip(scaled_clip(x, limit), limit=limit)


def scaled_clip_loop(x, limit):
    total = 0.0
    for t in range(x.shape[0]):
        total = total + scaled_clip(x[t], limit) ** 2
    return total


def soft(x):
    return np.log1p(np.exp(x))


def in_branches(w, xs, cap):
    """Declared functions called in the arms of a data-decided `if` in a loop."""
    total = 0.0
    for t in range(xs.shape[0]):
        v = xs[t] * w
        if v > 0:
            total = total + soft(v) + scaled_clip(v, cap)
        else:
            total = total - 0.5 * scaled_clip(v, cap)
    return total


def in_branches_with_aux(w, xs, cap):
    return in_branches(w, xs, cap), {"steps": xs.shape[0]}


def conv_in_contexts(A, Ws, gate):
    """The `**kw` rule (conv) with its keyword passed by position, in a rolled
    loop and in the arms of a data-decided `if` in it."""
    total = 0.0
    for t in range(Ws.shape[0]):
        out = conv(A, Ws[t], 1)
        if gate[t] > 0:
            total = total + np.sum(out ** 2)
        else:
            total = total + np.sum(conv(A * 0.5, Ws[t], pad=2))
    return total


p = 5.0  # a module-level name a rule's keyword-only parameter must not be read as


def powsum(x, *, p=2.0):
    return np.sum(x ** p)


def powsum_loss(x):
    return powsum(x) + powsum(x, p=3.0)


def scaled_sin(x, s=1.0):
    return np.sum(np.sin(s * x))


def scaled_sin_loss(x):
    return scaled_sin(x) + scaled_sin(x, 2.0)


def leaky(x, *, alpha=0.1):
    return np.where(x > 0, x, alpha * x)


def leaky_loss(x, alpha):
    return np.sum(leaky(x, alpha=alpha) ** 2)


def renamed(A, W, scale=1.0):
    return scale * (A @ W)


def soft_scalar(x, t):
    return np.log1p(np.exp(x / t)) * t


def soft_scalar_loss(x, t):
    return np.sum(soft_scalar(x, t[0]))
