"""Elementwise functions of one or more arrays (and their `math` twins on floats)."""

import math

import numpy as np

from yota_src.rules import adjoint

from .helpers import unbroadcast


@adjoint(np.exp, math.exp)
def exp(dy, y, x):
    dx = dy * y


@adjoint(np.log, math.log)
def log(dy, y, x):
    dx = dy / x


@adjoint(np.sin, math.sin)
def sin(dy, y, x):
    dx = dy * np.cos(x)


@adjoint(np.cos, math.cos)
def cos(dy, y, x):
    dx = -dy * np.sin(x)


@adjoint(np.tanh, math.tanh)
def tanh(dy, y, x):
    dx = dy * (1 - y * y)


@adjoint(np.sqrt, math.sqrt)
def sqrt(dy, y, x):
    dx = dy / (2 * y)


@adjoint(np.square)
def square(dy, y, x):
    dx = dy * 2 * x


@adjoint(np.abs, abs, math.fabs)
def absolute(dy, y, x):
    dx = dy * np.sign(x)


@adjoint(np.maximum)
def maximum(dy, y, a, b):
    """Ties send half the gradient to each side."""
    da = unbroadcast(dy * np.where(a == b, 0.5, a > b), a)
    db = unbroadcast(dy * np.where(a == b, 0.5, a < b), b)


@adjoint(np.minimum)
def minimum(dy, y, a, b):
    """Ties send half the gradient to each side."""
    da = unbroadcast(dy * np.where(a == b, 0.5, a < b), a)
    db = unbroadcast(dy * np.where(a == b, 0.5, a > b), b)


@adjoint(np.where)
def where(dout, out, condition, x, y):
    dx = unbroadcast(np.where(condition, dout, 0), x)
    dy = unbroadcast(np.where(condition, 0, dout), y)


@adjoint(float)
def to_float(dy, y, x):
    dx = dy if np.ndim(x) == 0 else np.reshape(dy, np.shape(x))
