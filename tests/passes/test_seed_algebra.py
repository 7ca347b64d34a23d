"""Seed algebra: constant-filled arrays in the reverse pass fold into what
they feed, and the gradients stay right (central finite differences)."""

import re

import numpy as np
import pytest
from helpers_rule_checks import normal

import yota_src as ys

# the gradient of a sum meets each of these with a ones array
CASES = {
    "matrix @ matrix": (lambda A, B: np.sum(A @ B), [(3, 4), (4, 5)]),
    "matrix @ vector": (lambda A, v: np.sum(A @ v), [(3, 4), (4,)]),
    "vector @ matrix": (lambda v, B: np.sum(v @ B), [(4,), (4, 5)]),
    "vector @ vector": (lambda u, v: np.sum(u @ v) * 3.0, [(4,), (4,)]),
    "transposed": (lambda A, B: np.mean(A.T @ B.T), [(4, 3), (5, 4)]),
    "np.dot": (lambda A, B: 2.0 * np.sum(np.dot(A, B)), [(3, 4), (4, 2)]),
    "broadcast": (lambda x, y: np.sum(x * y), [(3, 1), (4,)]),
    "mean of square": (lambda x: np.mean(x ** 2), [(6, 2)]),
    "where": (lambda x: np.sum(np.where(x > 0, x, 0.1 * x)), [(7,)]),
    "maximum": (lambda x, y: np.sum(np.maximum(x, y)), [(5,), (5,)]),
    "reduction chain": (lambda x: np.sum(np.sum(x, axis=0) * np.mean(x)), [(3, 4)]),
    "keepdims": (lambda x: np.sum(x / np.sum(x, axis=1, keepdims=True)), [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_folded_seeds_give_the_right_gradient(name):
    fn, shapes = CASES[name]
    args = [normal(shape, seed=i) + (2.0 if name == "keepdims" else 0.0)
            for i, shape in enumerate(shapes)]
    ys.check_grad(fn, *args)
    source = ys.simplegrad(fn, *args).source
    backward = source[source.index("# backward"):]
    # no array of ones or of one number: a gradient spread over rows is
    # `np.full(shape, row_sums)`, the sums themselves
    constant = r"np\.ones\(|np\.full\(\([^)]*\), (-?[\d.e+-]+|float\(\w+\))\)$"
    assert not re.search(constant, backward, re.M), backward


def test_float32_keeps_its_dtype():
    def f(A, B):
        return np.sum(A @ B)

    A, B = normal((3, 4)).astype(np.float32), normal((4, 5)).astype(np.float32)
    _, dA, dB = ys.simplegrad(f, A, B)(A, B)
    assert dA.dtype == np.float32 and dB.dtype == np.float32
    assert np.allclose(dA, np.ones((3, 5)) @ B.T, rtol=1e-5)
    assert np.allclose(dB, A.T @ np.ones((3, 5)), rtol=1e-5)


def test_a_constant_gradient_is_one_filled_array():
    def f(b):
        return np.sum(b) * 2.5

    source = ys.simplegrad(f, np.zeros(4)).source
    assert "db = np.full((N,), 2.5)" in source


def half_precision_fill(x):
    return np.sum(np.full(3, 0.1, np.float16) * x) + np.sum(np.full(3, 16777217.0, np.float32) * x)


def divided_by_zeros(x):
    return np.sum(x / np.zeros(3))


def zero_dimensional_constants(x):
    return np.sum(np.broadcast_to(np.ones(()), x.shape) * x * np.array(2.0))


def zeros_times_an_element(x):
    return np.sum(x ** 2) + np.sum(np.zeros(2) * x[0])


def test_a_fill_is_the_value_the_array_holds():
    ys.check_grad(half_precision_fill, np.ones(3))  # 0.1 in float16 is 0.0999756


def test_folding_never_divides_by_zero_itself():
    with np.errstate(divide="ignore"):
        _, dx = ys.simplegrad(divided_by_zeros, np.ones(3))(np.ones(3))
    assert np.all(np.isinf(dx))


def test_zero_dimensional_constants_are_made_in_the_code():
    source = ys.simplegrad(zero_dimensional_constants, np.ones((3, 4))).source
    assert "\narray =" not in source
    ys.check_grad(zero_dimensional_constants, normal((3, 4)))


def test_adding_zeros_leaves_no_trace():
    source = ys.simplegrad(zeros_times_an_element, np.ones(3)).source
    assert source.split("# backward")[1].split("\n", 2)[2].startswith("    dx = 2.0 * x\n")
    ys.check_grad(zeros_times_an_element, np.arange(3.0))


def test_float32_sum_gives_a_float32_gradient():
    def total(w):
        return np.sum(w)

    value, g = ys.grad(total, np.ones((2, 2), np.float32))
    assert g[0].dtype == np.float32


def test_a_float16_mean_of_a_product_is_not_summed_in_float16():
    """`ones @ X` becomes a column sum elsewhere; in float16 the sum would
    overflow where the matmul, which sums in float32, does not."""
    def f(w, X):
        return np.mean(X @ w)

    X = np.random.default_rng(2).uniform(40, 60, size=(3000, 3)).astype(np.float16)
    _, g = ys.grad(f, np.ones(3, np.float16), X, wrt="w")
    np.testing.assert_allclose(g[0].astype(np.float64), X.astype(np.float64).mean(axis=0),
                               rtol=1e-2)
