"""scipy.special: gamma and beta functions, error functions, Bessel functions,
the logistic family and log-sum-exp.

Loaded by yota_src.rules once the user's code has imported scipy.special.
Derivatives are written with SciPy's own functions, so a generated module
that uses them imports scipy.special. A parameter whose derivative has no
closed form (the order of a Bessel function, the shape of an incomplete
gamma function) is refused when a differentiated value reaches it.
"""

import math

import numpy as np
import scipy.special

from yota_src.rules import adjoint, is_static, nondifferentiable

from .helpers import masked, normalize_axes, unbroadcast

TWO_OVER_ROOT_PI = 2.0 / math.sqrt(math.pi)  # d erf(x)/dx = 2/sqrt(pi) exp(-x^2)
HALF_ROOT_PI = math.sqrt(math.pi) / 2.0
LOG_ROOT_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def no_closed_form(function, parameter):
    """Refuse a derivative that SciPy gives no exact expression for."""
    raise NotImplementedError(
        f"the derivative of {function} with respect to `{parameter}` has no closed form "
        f"yota-src could write exactly; keep `{parameter}` out of what is differentiated "
        "(pass a constant)")


def ratio_or_zero(a, b):
    """a / b, exactly 0 where a is 0: the slope of xlogy(a, b) in b, which is 0
    wherever a == 0 (xlogy(0, b) is 0 for every b, 0 included)."""
    if is_static(a) and np.ndim(a) == 0:
        return a / b if a != 0 else 0
    return masked(a / np.where(a == 0, 1, b), a != 0)


# --- gamma and beta functions ---------------------------------------------------


@adjoint(scipy.special.gammaln)
def gammaln(dy, y, x):
    """log|Gamma(x)|: its slope is the digamma function."""
    dx = dy * scipy.special.digamma(x)


@adjoint(scipy.special.loggamma)
def loggamma(dy, y, x):
    """log Gamma(x) for real x > 0."""
    dx = dy * scipy.special.digamma(x)


@adjoint(scipy.special.gamma)
def gamma(dy, y, x):
    dx = dy * y * scipy.special.digamma(x)


@adjoint(scipy.special.rgamma)
def rgamma(dy, y, x):
    """1 / Gamma(x)."""
    dx = -dy * y * scipy.special.digamma(x)


@adjoint(scipy.special.digamma)
def digamma(dy, y, x):
    dx = dy * scipy.special.polygamma(1, x)


@adjoint(scipy.special.polygamma)
def polygamma(dy, y, n, x):
    """The n-th derivative of digamma; the order n is an integer."""
    dx = dy * scipy.special.polygamma(n + 1, x)
    dn = no_closed_form("scipy.special.polygamma", "n")


@adjoint(scipy.special.multigammaln)
def multigammaln(dy, y, a, d):
    """log of the multivariate gamma function: a sum of gammaln(a - j/2), j < d."""
    da = dy * np.sum(scipy.special.digamma(np.expand_dims(a, -1) - np.arange(d) / 2.0), -1)


@adjoint(scipy.special.beta)
def beta(dy, y, a, b):
    both = scipy.special.digamma(a + b)
    da = unbroadcast(dy * y * (scipy.special.digamma(a) - both), a)
    db = unbroadcast(dy * y * (scipy.special.digamma(b) - both), b)


@adjoint(scipy.special.betaln)
def betaln(dy, y, a, b):
    both = scipy.special.digamma(a + b)
    da = unbroadcast(dy * (scipy.special.digamma(a) - both), a)
    db = unbroadcast(dy * (scipy.special.digamma(b) - both), b)


def beta_density(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b), the slope of the regularized incomplete beta in x."""
    return np.exp(scipy.special.xlogy(a - 1, x) + scipy.special.xlog1py(b - 1, -x)
                  - scipy.special.betaln(a, b))


@adjoint(scipy.special.betainc)
def betainc(dy, y, a, b, x):
    """With respect to x only, as HIPS autograd."""
    dx = unbroadcast(dy * beta_density(a, b, x), x)
    da = no_closed_form("scipy.special.betainc", "a")
    db = no_closed_form("scipy.special.betainc", "b")


@adjoint(*[fn for fn in [getattr(scipy.special, "betaincc", None)] if fn])  # SciPy >= 1.12
def betaincc(dy, y, a, b, x):
    """1 - betainc: with respect to x only."""
    dx = unbroadcast(-dy * beta_density(a, b, x), x)
    da = no_closed_form("scipy.special.betaincc", "a")
    db = no_closed_form("scipy.special.betaincc", "b")


def gamma_density(a, x):
    """x^(a-1) e^(-x) / Gamma(a), the slope of the regularized incomplete gamma in x."""
    return np.exp(scipy.special.xlogy(a - 1, x) - x - scipy.special.gammaln(a))


@adjoint(scipy.special.gammainc)
def gammainc(dy, y, a, x):
    """With respect to x only, as HIPS autograd."""
    dx = unbroadcast(dy * gamma_density(a, x), x)
    da = no_closed_form("scipy.special.gammainc", "a")


@adjoint(scipy.special.gammaincc)
def gammaincc(dy, y, a, x):
    """1 - gammainc: with respect to x only."""
    dx = unbroadcast(-dy * gamma_density(a, x), x)
    da = no_closed_form("scipy.special.gammaincc", "a")


# --- error functions and the normal distribution ---------------------------------


@adjoint(scipy.special.erf)
def erf(dy, y, x):
    dx = dy * TWO_OVER_ROOT_PI * np.exp(-x * x)


@adjoint(scipy.special.erfc)
def erfc(dy, y, x):
    dx = -dy * TWO_OVER_ROOT_PI * np.exp(-x * x)


@adjoint(scipy.special.erfcx)
def erfcx(dy, y, x):
    """exp(x^2) erfc(x)."""
    dx = dy * (2.0 * x * y - TWO_OVER_ROOT_PI)


@adjoint(scipy.special.erfinv)
def erfinv(dy, y, x):
    dx = dy * HALF_ROOT_PI * np.exp(y * y)


@adjoint(scipy.special.erfcinv)
def erfcinv(dy, y, x):
    dx = -dy * HALF_ROOT_PI * np.exp(y * y)


@adjoint(scipy.special.ndtr)
def ndtr(dy, y, x):
    """The standard normal cdf: its slope is the normal density."""
    dx = dy * np.exp(-0.5 * x * x - LOG_ROOT_TWO_PI)


@adjoint(scipy.special.log_ndtr)
def log_ndtr(dy, y, x):
    """log of the normal cdf: density over cdf, taken in logs (no underflow)."""
    dx = dy * np.exp(-0.5 * x * x - LOG_ROOT_TWO_PI - y)


@adjoint(scipy.special.ndtri)
def ndtri(dy, y, x):
    """The inverse of ndtr: one over the density at the result."""
    dx = dy * np.exp(0.5 * y * y + LOG_ROOT_TWO_PI)


# --- the logistic family and log-sum-exp -------------------------------------------


@adjoint(scipy.special.expit)
def expit(dy, y, x):
    dx = dy * y * (1.0 - y)


@adjoint(scipy.special.log_expit)
def log_expit(dy, y, x):
    """log(expit(x)): its slope is expit(-x)."""
    dx = dy * scipy.special.expit(-x)


@adjoint(scipy.special.logit)
def logit(dy, y, p):
    dp = dy / (p * (1.0 - p))


@adjoint(scipy.special.xlogy)
def xlogy(dout, out, x, y):
    """x log y, defined as 0 where x == 0: there its slope in y is 0 too."""
    dx = unbroadcast(dout * np.log(y), x)
    dy = unbroadcast(dout * ratio_or_zero(x, y), y)


@adjoint(scipy.special.xlog1py)
def xlog1py(dout, out, x, y):
    """x log(1 + y), defined as 0 where x == 0: there its slope in y is 0 too."""
    dx = unbroadcast(dout * np.log1p(y), x)
    dy = unbroadcast(dout * ratio_or_zero(x, 1.0 + y), y)


@adjoint(scipy.special.entr)
def entr(dy, y, x):
    """-x log x."""
    dx = -dy * (np.log(x) + 1.0)


@adjoint(scipy.special.rel_entr)
def rel_entr(dout, out, x, y):
    """x log(x / y)."""
    dx = unbroadcast(dout * (np.log(x / y) + 1.0), x)
    dy = unbroadcast(-dout * ratio_or_zero(x, y), y)


@adjoint(scipy.special.kl_div)
def kl_div(dout, out, x, y):
    """x log(x / y) - x + y."""
    dx = unbroadcast(dout * np.log(x / y), x)
    dy = unbroadcast(dout * (1.0 - ratio_or_zero(x, y)), y)


@adjoint(scipy.special.logsumexp)
def logsumexp(dy, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    """Each term's share of the sum, b exp(a - y), times the sum's sign with
    return_sign=True (the sign itself is piecewise constant)."""
    value, dvalue = (y[0], dy[0]) if return_sign else (y, dy)
    da = db = 0
    if dvalue is not None:  # None: only the sign is used
        ndim = np.ndim(a) if b is None else max(np.ndim(a), np.ndim(b))
        g = reduced_back(dvalue * y[1] if return_sign else dvalue, ndim, axis, keepdims)
        share = np.exp(a - reduced_back(value, ndim, axis, keepdims))
        da = unbroadcast(g * share if b is None else g * b * share, a)
        if b is not None:
            db = unbroadcast(g * share, b)


def reduced_back(g, ndim, axis, keepdims):
    """A reduction's result with the reduced axes put back (size 1), so that
    it broadcasts against the `ndim`-dimensional operand."""
    if keepdims or axis is None:
        return g
    return np.expand_dims(g, normalize_axes(axis, ndim))


@adjoint(scipy.special.softmax)
def softmax(dy, y, x, axis=None):
    dx = y * (dy - np.sum(dy * y, axis=axis, keepdims=True))


@adjoint(scipy.special.log_softmax)
def log_softmax(dy, y, x, axis=None):
    dx = dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True)


# --- Bessel functions (derivatives in x; the order's is refused) ---------------------


@adjoint(scipy.special.j0)
def j0(dy, y, x):
    dx = -dy * scipy.special.j1(x)


@adjoint(scipy.special.j1)
def j1(dy, y, x):
    dx = dy * (scipy.special.j0(x) - scipy.special.jv(2, x)) / 2.0


@adjoint(scipy.special.y0)
def y0(dy, y, x):
    dx = -dy * scipy.special.y1(x)


@adjoint(scipy.special.y1)
def y1(dy, y, x):
    dx = dy * (scipy.special.y0(x) - scipy.special.yn(2, x)) / 2.0


@adjoint(scipy.special.jv)
def jv(dy, y, v, x):
    """Also scipy.special.jn, the same function."""
    dx = unbroadcast(dy * (scipy.special.jv(v - 1, x) - scipy.special.jv(v + 1, x)) / 2.0, x)
    dv = no_closed_form("scipy.special.jv", "v")


@adjoint(scipy.special.yv)
def yv(dy, y, v, x):
    dx = unbroadcast(dy * (scipy.special.yv(v - 1, x) - scipy.special.yv(v + 1, x)) / 2.0, x)
    dv = no_closed_form("scipy.special.yv", "v")


@adjoint(scipy.special.yn)
def yn(dy, y, n, x):
    dx = unbroadcast(dy * (scipy.special.yn(n - 1, x) - scipy.special.yn(n + 1, x)) / 2.0, x)
    dn = no_closed_form("scipy.special.yn", "n")


@adjoint(scipy.special.i0)
def i0(dy, y, x):
    dx = dy * scipy.special.i1(x)


@adjoint(scipy.special.i1)
def i1(dy, y, x):
    dx = dy * (scipy.special.i0(x) + scipy.special.iv(2, x)) / 2.0


@adjoint(scipy.special.i0e)
def i0e(dy, y, x):
    """exp(-|x|) i0(x)."""
    dx = dy * (scipy.special.i1e(x) - np.sign(x) * y)


@adjoint(scipy.special.i1e)
def i1e(dy, y, x):
    """exp(-|x|) i1(x)."""
    dx = dy * ((scipy.special.i0e(x) + scipy.special.ive(2, x)) / 2.0 - np.sign(x) * y)


@adjoint(scipy.special.iv)
def iv(dy, y, v, x):
    dx = unbroadcast(dy * (scipy.special.iv(v - 1, x) + scipy.special.iv(v + 1, x)) / 2.0, x)
    dv = no_closed_form("scipy.special.iv", "v")


@adjoint(scipy.special.ive)
def ive(dy, y, v, x):
    """exp(-|x|) iv(v, x)."""
    slope = (scipy.special.ive(v - 1, x) + scipy.special.ive(v + 1, x)) / 2.0 - np.sign(x) * y
    dx = unbroadcast(dy * slope, x)
    dv = no_closed_form("scipy.special.ive", "v")


@adjoint(scipy.special.kv)
def kv(dy, y, v, x):
    dx = unbroadcast(-dy * (scipy.special.kv(v - 1, x) + scipy.special.kv(v + 1, x)) / 2.0, x)
    dv = no_closed_form("scipy.special.kv", "v")


@adjoint(scipy.special.kve)
def kve(dy, y, v, x):
    """exp(x) kv(v, x)."""
    slope = y - (scipy.special.kve(v - 1, x) + scipy.special.kve(v + 1, x)) / 2.0
    dx = unbroadcast(dy * slope, x)
    dv = no_closed_form("scipy.special.kve", "v")


# The sign of Gamma(x) is piecewise constant.
nondifferentiable(scipy.special.gammasgn)
