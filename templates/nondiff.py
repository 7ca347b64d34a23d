"""Primitives that are recorded (their values are needed) but carry no gradient."""

import operator

import numpy as np

from yota_src.rules import nondifferentiable

nondifferentiable(
    # comparisons and logic
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.and_, operator.or_, operator.xor, operator.invert, operator.floordiv,
    np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
    np.isfinite, np.isnan, np.isinf, np.all, np.any, np.count_nonzero,
    # piecewise constant
    np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.floor_divide,
    # positions
    np.argmax, np.argmin, np.argsort, np.nonzero, np.flatnonzero,
    # constructors
    np.zeros, np.ones, np.full, np.empty, np.zeros_like, np.ones_like, np.full_like,
    np.empty_like, np.arange, np.eye, np.identity, np.linspace,
)
