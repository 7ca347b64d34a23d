"""A lambda is differentiated as itself, wherever it sits (issue 7, class 7)."""

import helpers_lambdas as m
import numpy as np
import pytest

import yota_src as ys

CASES = {
    "first of two": (m.ACTS[0], lambda v: 2.0 * np.ones_like(v)),
    "second of two": (m.ACTS[1], lambda v: 3 * v ** 2),
    "dict value sin": (m.BY_NAME["sin"], np.cos),
    "dict value cos": (m.BY_NAME["cos"], lambda v: -np.sin(v)),
    "identical twin": (m.TWINS[1], lambda v: 2.0 * np.ones_like(v)),
    "closure first": (m.pair(3.0)[0], lambda v: 3.0 * np.ones_like(v)),
    "closure second": (m.pair(3.0)[1], lambda v: 2 * v),
    "outer of nested": (m.NESTED_SAME_NAME, lambda v: 6 * v ** 2),
    "with a lambda default": (m.DEFAULT_LAMBDA, lambda v: 2 * v + 1),
    "dict entry line": (m.ACTIVATIONS["cube"], lambda v: 3 * v ** 2),
    "second dict entry line": (m.ACTIVATIONS["shifted"], lambda v: 2 - np.tanh(v) ** 2),
    "list item line": (m.STACKED[0], lambda v: 5.0 * np.ones_like(v)),
    "second on a list item line": (m.STACKED[1], lambda v: 2 * v),
    "keyword argument line": (m.KEY, np.exp),
}


@pytest.mark.parametrize("fn, derivative", CASES.values(), ids=CASES.keys())
def test_each_lambda_on_a_shared_line_is_differentiated_as_itself(fn, derivative):
    x = np.array([0.5, 1.5])
    value, (dx,) = ys.grad(lambda v: np.sum(fn(v)), x)
    assert value == pytest.approx(np.sum(fn(x)))
    np.testing.assert_allclose(dx, derivative(x))


@pytest.mark.parametrize("fn", [m.ACTS[1], m.BY_NAME["cos"], m.NESTED_SAME_NAME],
                         ids=["tuple", "dict", "nested"])
def test_a_lambda_target_differentiates_and_prints_as_itself(fn):
    x = 0.7
    ys.check_grad(fn, x)
    gradient = ys.simplegrad(fn, x)
    assert "def grad_lambda(" in gradient.source
    assert gradient(x)[0] == pytest.approx(fn(x))
