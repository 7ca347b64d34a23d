"""Python's operators (and the ufuncs they stand for)."""

import math
import operator

import numpy as np

from yota_src.rules import adjoint, is_static

from .helpers import log_of_base, power_base_gradient, unbroadcast


@adjoint(operator.add, np.add)
def add(dy, y, a, b):
    da = unbroadcast(dy, a)
    db = unbroadcast(dy, b)


@adjoint(operator.sub, np.subtract)
def sub(dy, y, a, b):
    da = unbroadcast(dy, a)
    db = -unbroadcast(dy, b)


@adjoint(operator.mul, np.multiply)
def mul(dy, y, a, b):
    da = unbroadcast(dy * b, a)
    db = unbroadcast(dy * a, b)


@adjoint(operator.truediv, np.divide)
def truediv(dy, y, a, b):
    """`1 / b`'s gradient is `-dy * y * y`: a product where the quotient
    `y / b` would divide again, and `b` need not be kept for it."""
    da = unbroadcast(dy / b, a)
    one = is_static(a) and np.ndim(a) == 0 and a == 1
    db = -unbroadcast(dy * y * y, b) if one else -unbroadcast(dy * y / b, b)


@adjoint(operator.pow, np.power, np.float_power, pow, math.pow)
def power(dy, y, a, b):
    """A static exponent of 0 passes nothing back to the base; the base's
    gradient is exactly 0 where the exponent is, the exponent's where the base is."""
    da = 0 if is_static(b) and b == 0 else unbroadcast(power_base_gradient(dy, a, b), a)
    db = unbroadcast(dy * y * log_of_base(a), b)


@adjoint(operator.neg, np.negative)
def neg(dy, y, a):
    da = -dy


@adjoint(operator.pos, np.positive)
def pos(dy, y, a):
    da = dy
