"""Python's operators (and the ufuncs they stand for)."""

import math
import operator

import numpy as np

from yota_src.rules import adjoint

from .helpers import unbroadcast


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
    da = unbroadcast(dy / b, a)
    db = -unbroadcast(dy * y / b, b)


@adjoint(operator.pow, np.power, np.float_power, pow, math.pow)
def power(dy, y, a, b):
    da = unbroadcast(dy * b * a ** (b - 1), a)
    db = unbroadcast(dy * y * np.log(a), b)


@adjoint(operator.neg, np.negative)
def neg(dy, y, a):
    da = -dy


@adjoint(operator.pos, np.positive)
def pos(dy, y, a):
    da = dy
