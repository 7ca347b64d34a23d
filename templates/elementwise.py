"""Elementwise functions of one or more arrays (and their `math` twins on floats)."""

import math
import operator

import numpy as np

from yota_src.rules import adjoint, is_static, primitives

from .helpers import divide, masked, tie_share, unbroadcast

# --- exponentials and logarithms ---------------------------------------------


@adjoint(np.exp, math.exp)
def exp(dy, y, x):
    dx = dy * y


@adjoint(np.exp2)
def exp2(dy, y, x):
    dx = dy * y * np.log(2.0)


@adjoint(np.expm1, math.expm1)
def expm1(dy, y, x):
    dx = dy * (y + 1.0)


@adjoint(np.log, math.log)
def log(dy, y, x):
    dx = dy / x


@adjoint(np.log2, math.log2)
def log2(dy, y, x):
    dx = dy / (x * np.log(2.0))


@adjoint(np.log10, math.log10)
def log10(dy, y, x):
    dx = dy / (x * np.log(10.0))


@adjoint(np.log1p, math.log1p)
def log1p(dy, y, x):
    dx = dy / (1.0 + x)


@adjoint(np.logaddexp)
def logaddexp(dy, y, a, b):
    da = unbroadcast(dy * np.exp(a - y), a)
    db = unbroadcast(dy * np.exp(b - y), b)


@adjoint(np.logaddexp2)
def logaddexp2(dy, y, a, b):
    da = unbroadcast(dy * np.exp2(a - y), a)
    db = unbroadcast(dy * np.exp2(b - y), b)


# --- powers and roots ----------------------------------------------------------


@adjoint(np.sqrt, math.sqrt)
def sqrt(dy, y, x):
    """Infinite at 0: inf, as NumPy's arithmetic gives (also for math.sqrt)."""
    dx = divide(dy, 2 * y)


@adjoint(np.cbrt)
def cbrt(dy, y, x):
    dx = dy / (3 * y * y)


@adjoint(np.square)
def square(dy, y, x):
    dx = dy * 2 * x


@adjoint(np.reciprocal)
def reciprocal(dy, y, x):
    dx = -dy * y * y


# --- trigonometric, hyperbolic and their inverses ------------------------------


@adjoint(np.sin, math.sin)
def sin(dy, y, x):
    dx = dy * np.cos(x)


@adjoint(np.cos, math.cos)
def cos(dy, y, x):
    dx = -dy * np.sin(x)


@adjoint(np.tan, math.tan)
def tan(dy, y, x):
    dx = dy * (1.0 + y * y)


@adjoint(np.arcsin, math.asin)
def arcsin(dy, y, x):
    dx = dy / np.sqrt(1.0 - x * x)


@adjoint(np.arccos, math.acos)
def arccos(dy, y, x):
    dx = -dy / np.sqrt(1.0 - x * x)


@adjoint(np.arctan, math.atan)
def arctan(dy, y, x):
    dx = dy / (1.0 + x * x)


@adjoint(np.arctan2, math.atan2)
def arctan2(dy, y, a, b):
    """Undefined at the origin: nan there, as NumPy's arithmetic gives."""
    da = unbroadcast(divide(dy * b, a * a + b * b), a)
    db = unbroadcast(divide(-dy * a, a * a + b * b), b)


@adjoint(np.hypot, math.hypot)
def hypot(dy, y, a, b):
    """Undefined at the origin: nan there, as NumPy's arithmetic gives."""
    da = unbroadcast(divide(dy * a, y), a)
    db = unbroadcast(divide(dy * b, y), b)


@adjoint(np.sinh, math.sinh)
def sinh(dy, y, x):
    dx = dy * np.cosh(x)


@adjoint(np.cosh, math.cosh)
def cosh(dy, y, x):
    dx = dy * np.sinh(x)


@adjoint(np.tanh, math.tanh)
def tanh(dy, y, x):
    dx = dy * (1 - y * y)


@adjoint(np.arcsinh, math.asinh)
def arcsinh(dy, y, x):
    dx = dy / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh, math.acosh)
def arccosh(dy, y, x):
    dx = dy / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh, math.atanh)
def arctanh(dy, y, x):
    dx = dy / (1.0 - x * x)


@adjoint(np.sinc)
def sinc(dy, y, x):
    """d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x, which is 0 at x = 0."""
    nonzero = np.where(x == 0, 1.0, x)
    dx = dy * np.where(x == 0, 0.0, (np.cos(np.pi * x) - y) / nonzero)


@adjoint(np.deg2rad, np.radians, math.radians)
def deg2rad(dy, y, x):
    dx = dy * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees, math.degrees)
def rad2deg(dy, y, x):
    dx = dy * (180.0 / np.pi)


# --- signs, extremes and pieces --------------------------------------------------


@adjoint(np.abs, abs, math.fabs, np.fabs)
def absolute(dy, y, x):
    dx = dy * np.sign(x)


@adjoint(np.copysign, math.copysign)
def copysign(dy, y, x1, x2):
    """|x1| with the sign of x2: only x2's sign is read (declared piecewise
    constant in templates/nondiff.py)."""
    dx1 = unbroadcast(dy * np.sign(x1) * np.copysign(1.0, x2), x1)


@adjoint(np.nextafter)
def nextafter(dy, y, x1, x2):
    """x1 moved by one unit in the last place towards x2."""
    dx1 = unbroadcast(dy, x1)


@adjoint(np.heaviside)
def heaviside(dy, y, x1, x2):
    """x2 is the value taken where x1 == 0; elsewhere the step is constant."""
    dx2 = unbroadcast(masked(dy, x1 == 0), x2)


@adjoint(np.maximum)
def maximum(dy, y, a, b):
    """Ties send half the gradient to each side. A NaN argument makes the
    result NaN whatever the other is, so the other gets none."""
    da = unbroadcast(tie_share(dy, a > b, a == b), a)
    db = unbroadcast(tie_share(dy, a < b, a == b), b)


@adjoint(np.minimum)
def minimum(dy, y, a, b):
    """Ties send half the gradient to each side. A NaN argument makes the
    result NaN whatever the other is, so the other gets none."""
    da = unbroadcast(tie_share(dy, a < b, a == b), a)
    db = unbroadcast(tie_share(dy, a > b, a == b), b)


@adjoint(np.fmax)
def fmax(dy, y, a, b):
    """As np.maximum, except that fmax(a, nan) is a: the number gets the gradient."""
    da = unbroadcast(tie_share(dy, or_where_nan(a > b, b), a == b), a)
    db = unbroadcast(tie_share(dy, or_where_nan(a < b, a), a == b), b)


@adjoint(np.fmin)
def fmin(dy, y, a, b):
    """As np.minimum, except that fmin(a, nan) is a: the number gets the gradient."""
    da = unbroadcast(tie_share(dy, or_where_nan(a < b, b), a == b), a)
    db = unbroadcast(tie_share(dy, or_where_nan(a > b, a), a == b), b)


def or_where_nan(wins, other):
    """`wins`, and true where `other` is NaN (nothing to add for a static number)."""
    if is_static(other) and not np.isnan(other):
        return wins
    return wins | np.isnan(other)


@adjoint(np.clip)
def clip(dy, y, a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002 - NumPy 2's
    """Inside the bounds the gradient goes to `a`, outside to the bound hit
    (NumPy 2 also names them `min` and `max`)."""
    lower = a_min if a_min is not None else min
    upper = a_max if a_max is not None else max
    above = a >= lower if lower is not None else True
    below = a <= upper if upper is not None else True
    inside = above & below
    da = unbroadcast(masked(dy, inside), a)
    da_min = unbroadcast(masked(dy, a < lower), lower)
    da_max = unbroadcast(masked(dy, a > upper), upper)
    dmin = unbroadcast(masked(dy, a < lower), lower)
    dmax = unbroadcast(masked(dy, a > upper), upper)


@adjoint(np.where)
def where(dout, out, condition, x, y):
    dx = unbroadcast(np.where(condition, dout, 0), x)
    dy = unbroadcast(np.where(condition, 0, dout), y)


@adjoint(operator.mod, np.mod, np.remainder)
def mod(dy, y, a, b):
    """a % b = a - floor(a / b) * b; defined where a / b is not an integer."""
    da = unbroadcast(dy, a)
    db = unbroadcast(-dy * np.floor(a / b), b)


@adjoint(np.fmod, math.fmod)
def fmod(dy, y, a, b):
    """fmod(a, b) = a - trunc(a / b) * b."""
    da = unbroadcast(dy, a)
    db = unbroadcast(-dy * np.trunc(a / b), b)


@adjoint(np.nan_to_num)
def nan_to_num(dy, y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Only the finite entries pass their gradient on."""
    dx = masked(dy, np.isfinite(x))


@adjoint(float, primitives.item)
def to_float(dy, y, x):
    dx = dy if np.ndim(x) == 0 else np.reshape(dy, np.shape(x))


# --- parts of real numbers -----------------------------------------------------
# Complex values on the gradient path are refused before any rule runs, so
# these see real inputs: the real part is the number, the imaginary part 0.


@adjoint(np.real)
def real(dy, y, val):
    dval = dy


@adjoint(np.conjugate)
def conjugate(dy, y, x):
    dx = dy


@adjoint(np.imag)
def imag(dy, y, val):
    dval = 0  # 0 for every real input
