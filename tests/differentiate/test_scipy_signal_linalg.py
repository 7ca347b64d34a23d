"""scipy.signal convolutions, scipy.linalg solves and scipy.integrate's
refusal, against central finite differences."""

import numpy as np
import pytest

scipy_signal = pytest.importorskip(
    "scipy.signal", reason="SciPy is not installed: pip install yota-src[scipy]")

import scipy.integrate  # noqa: E402
import scipy.linalg  # noqa: E402

import yota_src as ys  # noqa: E402
from yota_src.errors import NoDiffRuleError  # noqa: E402

sg = scipy_signal


def convolved(fn, mode, a, b, w):
    return np.sum(fn(a, b, mode) * w)


def convolved_by_keyword(fn, mode, a, b, w):
    return np.sum(fn(a, b, mode=mode) * w)


SIZES = [((6,), (3,)), ((3,), (6,)), ((4,), (4,)), ((4, 6), (2, 3)), ((2, 3), (4, 6)),
         ((4, 5), (3, 2)), ((4, 2), (2, 4))]
CONVOLUTIONS = [sg.convolve, sg.correlate, sg.fftconvolve, sg.oaconvolve]


def covers(first, second):
    return all(p >= q for p, q in zip(first, second)) or all(p <= q for p, q in zip(first, second))


# 'valid' needs one input to cover the other
MODES = [(sizes, mode) for sizes in SIZES for mode in ("full", "same", "valid")
         if mode != "valid" or covers(*sizes)]


@pytest.mark.parametrize("sizes, mode", MODES, ids=str)
@pytest.mark.parametrize("fn", CONVOLUTIONS, ids=lambda f: f.__name__)
def test_convolutions(fn, sizes, mode, rng):
    a, b = rng.standard_normal(sizes[0]), rng.standard_normal(sizes[1])
    w = rng.standard_normal(np.shape(fn(a, b, mode)))
    ys.check_grad(convolved_by_keyword if fn is sg.correlate else convolved, fn, mode, a, b, w)


@pytest.mark.parametrize("sizes, mode", [m for m in MODES if len(m[0][0]) == 2], ids=str)
@pytest.mark.parametrize("fn", [sg.convolve2d, sg.correlate2d], ids=lambda f: f.__name__)
def test_two_dimensional_convolutions(fn, sizes, mode, rng):
    a, b = rng.standard_normal(sizes[0]), rng.standard_normal(sizes[1])
    ys.check_grad(convolved, fn, mode, a, b, rng.standard_normal(np.shape(fn(a, b, mode))))


def direct(a, b, w):
    return np.sum(sg.convolve(a, b, mode="same", method="direct") * w)


def test_convolve_method_is_kept(rng):
    a, b = rng.standard_normal(7), rng.standard_normal(3)
    ys.check_grad(direct, a, b, rng.standard_normal(7))
    assert 'method="direct"' in ys.simplegrad(direct, a, b, np.ones(7)).source.replace("'", '"')


def along_axes(fn, mode, a, b, w):
    return np.sum(fn(a, b, mode=mode, axes=-1) * w)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", [sg.fftconvolve, sg.oaconvolve], ids=lambda f: f.__name__)
def test_convolution_along_axes_broadcasts_the_others(fn, mode, rng):
    a, b = rng.standard_normal((3, 8)), rng.standard_normal((1, 3))
    w = rng.standard_normal(np.shape(fn(a, b, mode, axes=-1)))
    ys.check_grad(along_axes, fn, mode, a, b, w)


def symmetric_boundary(a, b):
    return np.sum(sg.convolve2d(a, b, boundary="symm"))


def test_other_boundaries_are_refused(rng):
    with pytest.raises(NoDiffRuleError, match="boundary='fill' with fillvalue=0"):
        ys.grad(symmetric_boundary, rng.standard_normal((4, 4)), rng.standard_normal((2, 2)))


# --- scipy.linalg ------------------------------------------------------------------------

def spd(rng, n=4):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def square_root(a, w):
    return np.sum(scipy.linalg.sqrtm(a) * w)


def test_sqrtm(rng):
    ys.check_grad(square_root, spd(rng), rng.standard_normal((4, 4)))
    ys.check_grad(square_root, spd(rng, 2), rng.standard_normal((2, 2)))


def sylvester(a, b, q, w):
    return np.sum(scipy.linalg.solve_sylvester(a, b, q) * w)


def test_solve_sylvester(rng):
    ys.check_grad(sylvester, spd(rng, 3), spd(rng, 2), rng.standard_normal((3, 2)),
                  rng.standard_normal((3, 2)))
    ys.check_grad(sylvester, spd(rng, 2), spd(rng, 2), rng.standard_normal((2, 2)),
                  rng.standard_normal((2, 2)))


def triangular(options, a, b):
    return np.sum(np.sin(scipy.linalg.solve_triangular(a, b, **options)))


@pytest.mark.parametrize("options", [{}, {"lower": True}, {"lower": True, "trans": "T"},
                                     {"trans": 1}, {"lower": True, "unit_diagonal": True},
                                     {"trans": "C", "unit_diagonal": True}], ids=str)
def test_solve_triangular_reads_one_triangle(options, rng):
    """The other triangle holds junk, which gets no gradient."""
    a = spd(rng) + 0.5 * rng.standard_normal((4, 4))
    ys.check_grad(triangular, options, a, rng.standard_normal(4))
    ys.check_grad(triangular, options, a, rng.standard_normal((4, 2)))


def factor(lower, a, w):
    return np.sum(scipy.linalg.cholesky(a, lower=lower) * w)


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_reads_one_triangle(lower, rng):
    a = spd(rng) + np.triu(np.full((4, 4), 0.3), 1)
    ys.check_grad(factor, lower, a, rng.standard_normal((4, 4)))
    ys.check_grad(factor, lower, spd(rng, 2), rng.standard_normal((2, 2)))


def cholesky_solve(lower, c, b):
    return np.sum(np.sin(scipy.linalg.cho_solve((c, lower), b)))


def factor_and_solve(a, b):
    return np.sum(np.sin(scipy.linalg.cho_solve(scipy.linalg.cho_factor(a, lower=True), b)))


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve(lower, rng):
    c = scipy.linalg.cholesky(spd(rng), lower=lower)
    c = c + (np.triu(np.ones((4, 4)), 1) if lower else np.tril(np.ones((4, 4)), -1))  # unread
    ys.check_grad(cholesky_solve, lower, c, rng.standard_normal(4))
    ys.check_grad(cholesky_solve, lower, c, rng.standard_normal((4, 3)))


def banded(l_and_u, ab, b):
    return np.sum(np.sin(scipy.linalg.solve_banded(l_and_u, ab, b)))


@pytest.mark.parametrize("l_and_u", [(1, 1), (2, 0), (0, 2), (1, 2)], ids=str)
def test_solve_banded(l_and_u, rng):
    ab = rng.standard_normal((sum(l_and_u) + 1, 5))
    ab[l_and_u[1]] += 5.0
    ys.check_grad(banded, l_and_u, ab, rng.standard_normal(5))
    ys.check_grad(banded, l_and_u, ab, rng.standard_normal((5, 2)))


# --- scipy.integrate --------------------------------------------------------------------

def decay(y, t, k):
    return -k * y


def integrated(y0, k):
    return np.sum(scipy.integrate.odeint(decay, y0, np.linspace(0.0, 1.0, 5), args=(k,))[-1])


def test_odeint_is_refused_naming_the_alternative():
    with pytest.raises(NoDiffRuleError) as error:
        ys.grad(integrated, np.ones(2), 0.5)
    message = str(error.value)
    assert "no gradient through scipy.integrate.odeint" in message
    assert "explicit loop" in message and "Runge-Kutta" in message
    assert "test_scipy_signal_linalg.py:" in message


def runge_kutta(y0, k):
    """The alternative the refusal names: the integration as a loop."""
    y, h = y0, 0.25
    for _ in range(4):
        k1 = decay(y, 0.0, k)
        k2 = decay(y + h / 2 * k1, 0.0, k)
        k3 = decay(y + h / 2 * k2, 0.0, k)
        k4 = decay(y + h * k3, 0.0, k)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(y)


def test_the_alternative_is_differentiated():
    ys.check_grad(runge_kutta, np.array([1.0, 2.0]), 0.5)
    assert np.isclose(runge_kutta(np.array([1.0, 2.0]), 0.5), 3.0 * np.exp(-0.5), rtol=1e-4)


TRIANGLE_B = np.array([0.3, -1.2, 0.8, 2.0])


def triangle_only(a):
    return np.sum(scipy.linalg.solve_triangular(a, TRIANGLE_B, trans="T") ** 2)


def sylvester_a_only(a):
    return np.sum(scipy.linalg.solve_sylvester(a, np.eye(4) * 2.0, np.ones((4, 4))) ** 2)


@pytest.mark.parametrize("fn", [triangle_only, sylvester_a_only])
def test_a_rule_whose_gradients_read_each_other_with_one_argument_differentiated(fn, rng):
    """The template computes da from db: db is computed though b needs none."""
    a = np.triu(rng.normal(size=(4, 4))) + 4 * np.eye(4)
    ys.check_grad(fn, a)
