"""Reductions over axes, with `axis` and `keepdims`."""

import numpy as np

from yota_src.rules import adjoint

from .helpers import expand, spread


@adjoint(np.sum)
def sum(dy, y, a, axis=None, dtype=None, keepdims=False):
    da = spread(dy, a, axis, keepdims)


@adjoint(np.mean)
def mean(dy, y, a, axis=None, dtype=None, keepdims=False):
    da = spread(dy / (np.size(a) // np.size(y)), a, axis, keepdims)


@adjoint(np.max, np.amax, np.min, np.amin)
def extreme(dy, y, a, axis=None, keepdims=False):
    """The gradient goes to the elements equal to the extreme; ties share it evenly."""
    mask = a == expand(y, a, axis, keepdims)
    da = mask * expand(dy, a, axis, keepdims) / np.sum(mask, axis=axis, keepdims=True)
