"""scipy.special rules against central finite differences: scalars, arrays and
broadcasting, every rule at least two ways."""

import numpy as np
import pytest

scipy_special = pytest.importorskip(
    "scipy.special", reason="SciPy is not installed: pip install yota-src[scipy]")

import yota_src as ys  # noqa: E402
from yota_src.errors import NoDiffRuleError  # noqa: E402

sc = scipy_special


def unary(fn, x, w):
    return np.sum(fn(x) * w)


def binary(fn, a, b, w):
    return np.sum(fn(a, b) * w)


def of_order(fn, n, x, w):
    return np.sum(fn(n, x) * w)


def points(rng, case, low, high):
    """(x, w): a Python float and a weight, or a (3, 4) array and weights."""
    if case == "float":
        return float(rng.uniform(low, high)), 0.7
    return rng.uniform(low, high, (3, 4)), rng.uniform(-1.0, 1.0, (3, 4))


# fn, the domain sampled
UNARY = [
    (sc.gammaln, 0.3, 4.0), (sc.loggamma, 0.3, 4.0), (sc.gamma, 0.3, 3.0),
    (sc.rgamma, 0.3, 3.0), (sc.digamma, 0.3, 4.0), (sc.psi, 0.3, 4.0),
    (sc.erf, -1.5, 1.5), (sc.erfc, -1.5, 1.5), (sc.erfcx, -1.0, 2.0),
    (sc.erfinv, -0.8, 0.8), (sc.erfcinv, 0.2, 1.8), (sc.ndtr, -2.0, 2.0),
    (sc.log_ndtr, -4.0, 2.0), (sc.ndtri, 0.05, 0.95), (sc.expit, -3.0, 3.0),
    (sc.log_expit, -3.0, 3.0), (sc.logit, 0.05, 0.95), (sc.entr, 0.1, 2.0),
    (sc.i0, -2.0, 2.0), (sc.i1, -2.0, 2.0), (sc.i0e, -2.0, 2.0), (sc.i1e, -2.0, 2.0),
    (sc.j0, 0.1, 5.0), (sc.j1, 0.1, 5.0), (sc.y0, 0.3, 5.0), (sc.y1, 0.3, 5.0),
]


@pytest.mark.parametrize("case", ["float", "array"])
@pytest.mark.parametrize("fn, low, high", UNARY, ids=[f[0].__name__ for f in UNARY])
def test_unary_rules(fn, low, high, case, rng):
    x, w = points(rng, case, low, high)
    ys.check_grad(unary, fn, x, w)


BINARY = [
    (sc.beta, 0.5, 3.0, 0.5, 3.0), (sc.betaln, 0.5, 3.0, 0.5, 3.0),
    (sc.xlogy, -1.0, 1.0, 0.3, 2.0), (sc.xlog1py, -1.0, 1.0, -0.5, 2.0),
    (sc.rel_entr, 0.2, 2.0, 0.2, 2.0), (sc.kl_div, 0.2, 2.0, 0.2, 2.0),
]


@pytest.mark.parametrize("fn, a_low, a_high, b_low, b_high", BINARY,
                         ids=[f[0].__name__ for f in BINARY])
def test_binary_rules_with_scalars(fn, a_low, a_high, b_low, b_high, rng):
    ys.check_grad(binary, fn, float(rng.uniform(a_low, a_high)),
                  float(rng.uniform(b_low, b_high)), 0.7)


@pytest.mark.parametrize("fn, a_low, a_high, b_low, b_high", BINARY,
                         ids=[f[0].__name__ for f in BINARY])
def test_binary_rules_broadcast(fn, a_low, a_high, b_low, b_high, rng):
    a, b = rng.uniform(a_low, a_high, (3, 4)), rng.uniform(b_low, b_high, 4)
    ys.check_grad(binary, fn, a, b, rng.uniform(-1.0, 1.0, (3, 4)))
    ys.check_grad(binary, fn, float(a[0, 0]), rng.uniform(b_low, b_high, (2, 1)),
                  rng.uniform(-1.0, 1.0, (2, 1)))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # log(0) for x's slope
def test_xlogy_at_zero_gives_no_gradient_to_y():
    _, g = ys.grad(binary, sc.xlogy, np.array([0.0, 2.0]), np.array([0.0, 3.0]), 1.0)
    assert g[2][0] == 0.0 and np.isclose(g[2][1], 2.0 / 3.0)


ORDERED = [(sc.polygamma, 0.5, 3.0), (sc.jv, 0.2, 5.0), (sc.jn, 0.2, 5.0),
           (sc.yv, 0.5, 5.0), (sc.yn, 0.5, 5.0), (sc.iv, -2.0, 2.0), (sc.ive, -2.0, 2.0),
           (sc.kv, 0.3, 3.0), (sc.kve, 0.3, 3.0)]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("fn, low, high", ORDERED, ids=[f[0].__name__ for f in ORDERED])
def test_rules_of_an_integer_order(fn, low, high, order, rng):
    x, w = points(rng, "float" if order == 1 else "array", low, high)
    ys.check_grad(of_order, fn, order, x, w)


def incomplete_gamma(fn, x, w):
    return np.sum(fn(1.7, x) * w)


def incomplete_beta(fn, x, w):
    return np.sum(fn(1.7, 2.5, x) * w)


@pytest.mark.parametrize("case", ["float", "array"])
@pytest.mark.parametrize("fn", [sc.gammainc, sc.gammaincc], ids=lambda f: f.__name__)
def test_incomplete_gamma_in_x(fn, case, rng):
    ys.check_grad(incomplete_gamma, fn, *points(rng, case, 0.2, 4.0))


@pytest.mark.parametrize("case", ["float", "array"])
@pytest.mark.parametrize("fn", [sc.betainc, sc.betaincc], ids=lambda f: f.__name__)
def test_incomplete_beta_in_x(fn, case, rng):
    ys.check_grad(incomplete_beta, fn, *points(rng, case, 0.05, 0.95))


def multigamma(a, w):
    return np.sum(sc.multigammaln(a, 3) * w)


def test_multigammaln(rng):
    ys.check_grad(multigamma, 2.5, 0.7)
    ys.check_grad(multigamma, rng.uniform(1.5, 4.0, (2, 3)), rng.uniform(-1, 1, (2, 3)))


# --- logsumexp, softmax and log_softmax ----------------------------------------------------

REDUCTIONS = [{}, {"axis": 0}, {"axis": -1}, {"axis": 1, "keepdims": True},
              {"axis": (0, 1)}, {"keepdims": True}]


def log_sum_exp(x, options):
    return np.sum(np.sin(sc.logsumexp(x, **options)))


def weighted_log_sum_exp(x, b, options):
    return np.sum(np.sin(sc.logsumexp(x, b=b, **options)))


def signed_log_sum_exp(x, b, options):
    value, sign = sc.logsumexp(x, b=b, return_sign=True, **options)
    return np.sum(np.sin(value) * sign)


@pytest.mark.parametrize("options", REDUCTIONS, ids=str)
def test_logsumexp(options, rng):
    ys.check_grad(log_sum_exp, rng.standard_normal((3, 4)), options)


@pytest.mark.parametrize("options", REDUCTIONS, ids=str)
def test_logsumexp_with_weights_broadcast(options, rng):
    x = rng.standard_normal((3, 4))
    ys.check_grad(weighted_log_sum_exp, x, rng.uniform(0.2, 2.0, (3, 4)), options)
    ys.check_grad(weighted_log_sum_exp, x, rng.uniform(0.2, 2.0, 4), options)


@pytest.mark.parametrize("options", REDUCTIONS, ids=str)
def test_logsumexp_return_sign(options, rng):
    x = rng.standard_normal((3, 4))
    b = rng.uniform(0.2, 2.0, (3, 4)) * np.where(np.arange(4) % 2, 1.0, -1.0)
    ys.check_grad(signed_log_sum_exp, x, b, options)


def test_logsumexp_of_a_list_of_scalars():
    def loss(a, b):
        return sc.logsumexp(np.array([a, b, 0.5 * a]))
    ys.check_grad(loss, 0.3, -1.2)


def soft(fn, x, w, axis):
    return np.sum(fn(x, axis=axis) * w)


@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("fn", [sc.softmax, sc.log_softmax], ids=lambda f: f.__name__)
def test_softmax_family(fn, axis, rng):
    ys.check_grad(soft, fn, rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), axis)
    ys.check_grad(soft, fn, rng.standard_normal(5), rng.standard_normal(5), axis and 0)


# --- what has no closed form is refused --------------------------------------------------

def gammainc_in_a(a, x):
    return np.sum(sc.gammainc(a, x))


def bessel_in_order(v, x):
    return np.sum(sc.jv(v, x))


@pytest.mark.parametrize("fn, message", [
    (gammainc_in_a, "scipy.special.gammainc with respect to `a` has no closed form"),
    (bessel_in_order, "scipy.special.jv with respect to `v` has no closed form"),
])
def test_derivatives_without_closed_form_are_refused(fn, message):
    with pytest.raises(NoDiffRuleError, match=message) as error:
        ys.grad(fn, 1.5, np.array([0.5, 1.0]))
    assert "test_scipy_special.py:" in str(error.value)


def test_a_constant_shape_parameter_is_fine():
    ys.check_grad(lambda x: np.sum(sc.gammainc(1.5, x)), np.array([0.5, 1.0]))


def test_gammasgn_passes_no_gradient(rng):
    _, g = ys.grad(lambda x: np.sum(sc.gammasgn(x) * x), np.array([-1.5, 2.0]))
    assert np.allclose(g[0], sc.gammasgn(np.array([-1.5, 2.0])))
