"""Loops over enumerate(xs) and zip(xs, ys) of arrays (tests/api/test_enumerate_zip.py)."""

import numpy as np


def enumerated(W, xs, ys):
    h = np.zeros(W.shape[0])
    total = 0.0
    for t, x in enumerate(xs):
        h = np.tanh(W @ h + x)
        total = total + np.sum((h - ys[t]) ** 2)
    return total


def zipped(W, xs, ys):
    h = np.zeros(W.shape[0])
    total = 0.0
    for x, y in zip(xs, ys):
        h = np.tanh(W @ h + x)
        total = total + np.sum(h * y)
    return total


def names_after(W, xs, ys):
    """The loop's names read after it: the last counter and rows."""
    h = np.zeros(W.shape[0])
    for t, (x) in enumerate(xs):  # noqa: B007 - t is read after the loop
        h = np.tanh(W @ h + x)
    for x, y in zip(xs, ys):
        h = h + 0.1 * x * y
    return np.sum(h ** 2) + t * np.sum(x) + np.sum(y)


def counter_as_number(W, xs):
    h = np.zeros(W.shape[0])
    for t, x in enumerate(xs):
        h = np.tanh(W @ h + x * (t + 1.0))
    return np.sum(h)


def short(W, xs):
    h = np.zeros(W.shape[0])
    for t, x in enumerate(xs):
        h = np.tanh(W @ h + x) * (t + 1)
    return np.sum(h)


def zipped_unequal(W, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        total = total + np.sum(np.tanh(W @ x) * y)
    return total
