"""ys.grad's fused chains (passes/fuse.py): elementwise operations on large
arrays evaluated by NumExpr, right to rounding, never in simplegrad's code."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import check_fast_code, programs

import yota_src as ys
from yota_src.api import gradients
from yota_src.passes import fuse, in_place, work_arrays

numexpr = pytest.importorskip("numexpr", reason="numexpr (the `fast` extra) is not installed")

N = fuse.MIN_ELEMENTS
clear_cache = gradients._cache.clear  # a decision changed: what was generated before goes


@pytest.fixture
def fusing(monkeypatch):
    """Fused wherever the pass may fuse, whatever this machine measures."""
    monkeypatch.setenv("YOTA_SRC_FUSE", "1")
    clear_cache()


def logistic_sum(x):
    return np.sum(1 / (1 + np.exp(-x)))


def transcendental(x, y):
    z = np.tanh(x) * np.sqrt(y * y + 1.0) - np.log1p(np.exp(-x * x))
    return np.sum(np.arctan2(z, y + 2.0) ** 2 + np.sin(x) * np.cos(y) / (2.0 + np.cosh(x)))


def shared(x, w):
    t = x * w
    u = np.exp(t)
    return np.sum(u * u) + np.sum(u / (1.0 + t)) + np.sum(-t)


def broadcast(X, b):
    return np.sum(np.tanh(X + b) ** 3 * 0.5)


def test_a_large_chain_is_one_evaluate_and_right(rng, fusing):
    x = rng.normal(size=N)
    value, (dx,) = ys.grad(logistic_sum, x)
    p = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(dx, p * (1 - p), rtol=1e-13)
    assert np.isclose(value, p.sum(), rtol=1e-13)
    source = ys.grad(logistic_sum, x)[1].source
    assert 'numexpr.evaluate("exp(-x)", {"x": x}' in source
    assert source.count("numexpr.evaluate(") == 3 and "import numexpr" in source
    assert "numexpr" not in ys.simplegrad(logistic_sum, x).source  # readable code: NumPy


@pytest.mark.parametrize("fn, shapes, small", [
    (transcendental, [(N,), (N,)], [(8,), (8,)]),
    (shared, [(N,), (N,)], [(8,), (8,)]),
    (broadcast, [(N // 64, 64), (64,)], [(3, 4), (4,)])])
def test_fused_gradients_agree_with_plain_numpy_and_finite_differences(fn, shapes, small, rng,
                                                                      fusing):
    args = [rng.uniform(0.2, 1.5, size=shape) for shape in shapes]
    expected = ys.simplegrad(fn, *args)(*args)
    value, g = ys.grad(fn, *args)
    assert "numexpr.evaluate(" in g.source
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    for got, want in zip(g, expected[1:]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    small = [rng.uniform(0.2, 1.5, size=shape) for shape in small]
    with pytest.MonkeyPatch.context() as patch:  # the same code at a size finite differences take
        patch.setattr(fuse, "MIN_ELEMENTS", 0)
        clear_cache()
        assert "numexpr.evaluate(" in ys.grad(fn, *small)[1].source
        ys.check_grad(fn, *small, rtol=1e-6, atol=1e-9)


def test_small_arrays_float32_and_machines_where_it_does_not_pay_are_not_fused(rng, fusing,
                                                                                monkeypatch):
    x = rng.normal(size=N)
    assert "numexpr" not in ys.grad(logistic_sum, x[:1000])[1].source
    assert "numexpr" not in ys.grad(logistic_sum, x.astype(np.float32))[1].source
    monkeypatch.setenv("YOTA_SRC_FUSE", "0")
    clear_cache()
    assert "numexpr" not in ys.grad(logistic_sum, x)[1].source
    monkeypatch.setattr(fuse, "AVAILABLE", False)
    monkeypatch.setenv("YOTA_SRC_FUSE", "1")
    clear_cache()
    assert "numexpr" not in ys.grad(logistic_sum, x)[1].source


def test_whether_it_pays_is_measured_once(monkeypatch):
    monkeypatch.delenv("YOTA_SRC_FUSE", raising=False)
    monkeypatch.setattr(fuse, "_MEASURED", [])
    first = fuse.pays()
    assert fuse._MEASURED == [first] and fuse.pays() is first


def test_a_variable_named_like_a_numexpr_function_is_renamed_in_the_text(rng, fusing):
    def named(x):
        exp = np.exp(x)
        sqrt = np.log(1.0 + exp)
        return np.sum(sqrt * exp * 2.0)

    x = rng.normal(size=N)
    value, (dx,) = ys.grad(named, x)
    np.testing.assert_allclose(dx, ys.simplegrad(named, x)(x)[1], rtol=1e-12)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_random_programs_fused_everywhere_agree_with_plain_code(program, seed):
    """Random programs (loops, scatters, decisions, helpers) fused wherever
    the pass may fuse, with work arrays and updates in place at every size,
    against simplegrad's plain code: equal to rounding, results never shared."""
    def everywhere(patch):
        patch.setenv("YOTA_SRC_FUSE", "1")
        patch.setattr(fuse, "MIN_ELEMENTS", 0)
        patch.setattr(in_place, "MIN_BYTES", 0)
        patch.setattr(work_arrays, "MIN_BYTES", 0)

    check_fast_code(*program, seed, everywhere, lambda got, want: np.testing.assert_allclose(
        got, want, rtol=1e-9, atol=1e-12))


# --- found by a hostile tester --------------------------------------------------------

def numexpr_names(sign, hypot, minimum):
    return np.sum(np.exp(sign) * 2.0 + sign / hypot - np.tanh(minimum) * hypot)


def divided_by_constants(x):
    return np.sum(np.exp(x) / 0.0 * 0.0 + x / 1e-310 * 1e-300 + np.exp(x) / 3.0 * x)


def powers(x):
    return np.sum(np.exp(x) ** 0.5 * x + x ** 2 * np.exp(x) + (x * 2.0) ** -0.5 * x)


def test_names_numexpr_calls_its_own_are_renamed_in_the_text(rng, fusing):
    args = [rng.uniform(0.5, 1.5, size=N) for _ in range(3)]
    value, g = ys.grad(numexpr_names, *args)
    assert "numexpr.evaluate(" in g.source
    expected = ys.simplegrad(numexpr_names, *args)(*args)
    for got, want in zip((value, *g), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("fn", [divided_by_constants, powers])
def test_what_numexpr_rewrites_unlike_numpy_stays_numpy_s(fn, rng, fusing):
    """NumExpr folds `x / c` into `x * (1 / c)` (an error for 0, inf for a
    tiny c) and writes `x ** 0.5` as sqrt (-0.0 at -0.0): those stay NumPy's."""
    x = rng.uniform(0.5, 1.5, size=N)
    x[:3] = (0.0, -0.0, 1e-300)
    with np.errstate(all="ignore"):
        value, g = ys.grad(fn, x)
        expected = ys.simplegrad(fn, x)(x)
    texts = re.findall(r'evaluate\(\s*"([^"]*)"', g.source)
    assert texts and not any(re.search(r"/ [\d.]|\*\* -?0\.5", text) for text in texts), texts
    np.testing.assert_allclose(value, expected[0], rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(g[0], expected[1], rtol=1e-12, equal_nan=True)
