"""Scalar factors of gradients move to the smallest arrays they can
(passes/scales.py): the gradients stay right (central finite differences,
and the same to rounding as without the pass), and the factor of a mean
lands on the products' small results, not on every row."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from program_strategy import arguments, expressions, load_program

import yota_src as ys
from yota_src import passes
from yota_src.passes.scales import defer_scales


def logistic(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def without_pass(patch):
    patch.setattr(passes, "BACKWARD_PASSES",
                  tuple(each for each in passes.BACKWARD_PASSES if each is not defer_scales))


def data(rows=50, columns=4, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=columns), rng.normal(size=(rows, columns)),
            rng.uniform(0.1, 0.9, size=rows))


def backward(source: str) -> str:
    return source[source.index("# backward"):source.index("\ndef _mismatch")]


def test_the_factor_of_a_mean_lands_on_the_small_results():
    w, X, y = data(seed=1)
    _, g = ys.grad(logistic, w, X, y)
    source = backward(g.source)
    # on w (4 elements) and on the matmul's result, not on the 50 rows
    assert re.search(r"dX = np\.outer\(\w+, -0\.02 \* w\)", source), source
    assert re.search(r"dw = -0\.02 \* \(\w+ @ X\)", source), source
    assert "dy = 0.02 * (" in source, source  # c * a + -c * b is c * (a - b)
    assert "0.02 * y" not in source
    expected = ys.simplegrad(logistic, w, X, y)(w, X, y)
    for got, want in zip(g, expected[1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    ys.check_grad(logistic, w, X, y)


def test_sizes_read_at_run_time_choose_the_same_at_every_size():
    """simplegrad's module serves every batch size, so where the factor goes
    cannot follow the example's sizes: a vector of rows and one of columns
    weigh the same, and the factor is applied once, to the rows' gradient."""
    w, X, y = data()
    df = ys.simplegrad(logistic, w, X, y)
    source = backward(df.source)
    factor = re.search(r"^\s*(\w+) = -1\.0 / M$", source, re.M).group(1)
    assert len(re.findall(rf"\b{factor} \*", source)) == 2, source  # dy and dz, once each
    assert re.search(rf"dy = {factor} \* \(\w+ - \w+\)", source), source
    for rows in (3, 50, 400):
        w, X, y = data(rows=rows, columns=4, seed=rows)
        got = df(w, X, y)
        for a, b in zip(got[1:], ys.grad(logistic, w, X, y)[1]):
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_the_same_numbers_to_rounding(monkeypatch):
    w, X, y = data(rows=200, seed=2)
    moved = ys.simplegrad(logistic, w, X, y)(w, X, y)
    without_pass(monkeypatch)
    plain = ys.simplegrad(logistic, w, X, y)
    assert re.search(r"^\s*d\w+ = \w+ \* y$", plain.source, re.M), plain.source  # pass off
    for a, b in zip(moved, plain(w, X, y)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-17)


def test_a_factor_stays_where_a_reader_needs_the_whole_array():
    """`dy = -dr` is returned: the factor is applied once, to `dr`, which
    the other readers take as it is (moving it would cost two products)."""
    def mse(w, X, y):
        return np.mean((X @ w - y) ** 2)

    w, X, y = data(seed=3)
    source = backward(ys.simplegrad(mse, w, X, y).source)
    assert re.search(r"dr = .* \* r$|dt\w* = .* \* t\w*$", source, re.M), source
    assert "dX = np.outer(" in source and " * w)" not in source
    ys.check_grad(mse, w, X, y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_and_types_are_kept(dtype):
    def f(x, W):
        return np.mean(np.tanh(x @ W)) * 3.0

    rng = np.random.default_rng(4)
    x, W = rng.normal(size=(30, 3)).astype(dtype), rng.normal(size=(3, 2)).astype(dtype)
    value, (dx, dW) = ys.grad(f, x, W)
    source = backward(ys.grad(f, x, W)[1].source)
    assert re.search(r"dx = \w+ @ \([\d.]+ \* W\.T\)", source), source
    assert re.search(r"dW = [\d.]+ \* \(x\.T @ \w+\)", source), source
    assert dx.dtype == dtype and dW.dtype == dtype and dx.shape == x.shape
    assert type(value) is type(f(x, W))
    if dtype == np.float64:
        ys.check_grad(f, x, W)


def test_through_masks_reshapes_and_reductions():
    def f(W, X):
        h = X @ W
        relu = np.where(h > 0, h, 0.0)
        return np.mean(np.sum(relu.reshape(-1, 2) ** 2, axis=1)) / 7.0

    rng = np.random.default_rng(5)
    W, X = rng.normal(size=(3, 4)), rng.normal(size=(20, 3))
    ys.check_grad(f, W, X)
    _, g = ys.grad(f, W, X)
    assert re.search(r"dX = \w+ @ \([\d.]+ \* W\.T\)", g.source), g.source
    np.testing.assert_allclose(ys.simplegrad(f, W, X)(W, X)[1], g[0], rtol=1e-12)


@st.composite
def scaled_losses(draw):
    """A loss over `X @ W` and a bias, whose gradient carries a scalar
    factor (a mean, a number) through elementwise ops, masks, reductions
    and matmuls: (source, shapes)."""
    n, m, k = (draw(st.integers(1, 7)) for _ in range(3))
    body = draw(expressions(["h", "z", "b"], depth=3, calls=False))
    loss = draw(st.sampled_from(["np.mean({})", "-np.mean({}) / 3.0", "2.0 * np.sum({})",
                                 "np.mean(np.sum({}, axis=1)) * 0.5",
                                 "np.sum(np.where(z > 0, {}, 0.0)) / 9.0"]))
    source = f"""import numpy as np
def loss(X, W, b):
    z = X @ W
    h = np.tanh(z + b)
    return {loss.format(f"({body}) * h")}
"""
    return source, [(n, m), (m, k), (k,)]


@settings(max_examples=30, deadline=None)
@given(scaled_losses(), st.integers(0, 2**16))
def test_random_losses_give_the_same_gradients_without_the_pass(loss, seed):
    source, shapes = loss
    module = load_program(source)
    args = arguments(shapes, seed)
    ys.check_grad(module.loss, *args, rtol=1e-4, atol=1e-6)
    moved = ys.simplegrad(module.loss, *args)(*args)
    fixed = ys.grad(module.loss, *args)[1]
    with pytest.MonkeyPatch.context() as patch:
        without_pass(patch)
        plain = ys.simplegrad(module.loss, *args)(*args)
    for a, b in zip(moved, plain):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for a, b in zip(fixed, plain[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_float16_keeps_its_factors_before_sums():
    """A factor below 1 applied after a sum lets the sum pass float16's 65504."""
    def f(w, X):
        return np.mean((X @ w) ** 2)

    rng = np.random.default_rng(1)
    X, w = rng.uniform(0, 1, size=(3000, 3)).astype(np.float16), np.full(3, 40, np.float16)
    _, g = ys.grad(f, w, X, wrt="w")
    exact = 2 * (X.astype(np.float64) @ w.astype(np.float64)) @ X.astype(np.float64) / 3000
    np.testing.assert_allclose(g[0].astype(np.float64), exact, rtol=1e-2)
