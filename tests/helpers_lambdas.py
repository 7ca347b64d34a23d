"""Lambdas that share a line: each must be differentiated as itself."""

import numpy as np

ACTS = (lambda v: v * 2.0, lambda v: v ** 3)
BY_NAME = {"sin": lambda v: np.sin(v), "cos": lambda v: np.cos(v)}
TWINS = (lambda v: v * 2.0, lambda v: v * 2.0)
NESTED_SAME_NAME = lambda v: (lambda v: v ** 3)(v) * 2.0  # noqa: E731
DEFAULT_LAMBDA = lambda v, act=lambda w: w ** 2: act(v) + v  # noqa: E731


def pair(k):
    return lambda v: v * k, lambda v: v ** 2 + k


# Lambdas whose line is no expression on its own: a dict entry, a keyword
# argument of a call spread over lines, an item of a multi-line list.
ACTIVATIONS = {
    "cube": lambda v: v ** 3,
    "shifted": lambda v: np.tanh(v) + v,
}
STACKED = [
    lambda v: v * 5.0, lambda v: v * v,
]
KEY = dict(
    f=lambda v: np.exp(v),
)["f"]
