"""Derivatives inside a differentiated function (api/nested_derivatives.py): ys.grad, a
GradFunction, a vjp pullback or a saved gradient module called in `outer`;
finite differences of the first derivative referee the second."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys
from yota_src.errors import ControlFlowChanged, UnsupportedSyntaxError


def inner(w):
    return np.sum(np.tanh(w) ** 2)


def one_step(w):
    _, g = ys.grad(inner, w)
    return inner(w - 0.1 * g[0])


def test_one_inner_step_of_gradient_descent(rng):
    w = rng.normal(size=4)
    ys.check_grad(one_step, w)
    source = ys.simplegrad(one_step, w).source
    assert "yota_src" not in source and "import" not in source.replace("import numpy", "")
    assert "# grad_inner:" in source  # the inner gradient's lines, named for the reader


class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b


def loss(m, x):
    return np.sum(np.tanh(m.W @ x + m.b) ** 2)


def meta(m, x):
    _, g = ys.grad(loss, m, x)
    stepped = Linear(m.W - 0.1 * g[0][("W",)], m.b - 0.1 * g[0][("b",)])
    return loss(stepped, x)


def test_an_inner_step_on_a_struct(rng):
    m, x = Linear(rng.normal(size=(3, 4)), rng.normal(size=3)), rng.normal(size=4)
    ys.check_grad(meta, m, x)


def tanh_times(u):
    return np.tanh(u) * u


def through_a_pullback(w):
    value, pullback = ys.vjp(tanh_times, w)
    (d,) = pullback(np.cos(w))
    return np.sum(d * value)


def test_a_pullback_inside(rng):
    ys.check_grad(through_a_pullback, rng.normal(size=5))


def test_a_grad_function_and_a_saved_module_inside(rng, tmp_path):
    w = rng.normal(size=4)
    df = ys.simplegrad(inner, w)

    def squared_gradient(w):
        _, dw = df(w)
        return np.sum(dw * dw)

    ys.check_grad(squared_gradient, w)
    df.save(tmp_path / "grad_inner_saved.py")
    spec = importlib.util.spec_from_file_location("grad_inner_saved",
                                                  tmp_path / "grad_inner_saved.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def through_the_module(w):
        _, dw = module.grad_inner(w)
        return np.sum(dw * np.sin(w))

    ys.check_grad(through_the_module, w)


def test_a_function_defined_inside_is_refused_naming_the_line(rng):
    def outer(w):
        f = lambda u: np.sum(u * w)  # noqa: E731
        return np.sum(ys.grad(f, w)[1][0])

    with pytest.raises(UnsupportedSyntaxError, match="defined inside the function being"):
        ys.grad(outer, rng.normal(size=3))


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_second_order_through_any_program(program, seed):
    """Random programs (loops, scatters, decisions, helpers): one inner step
    of gradient descent, differentiated, against finite differences."""
    source, shapes = program
    module = load_program(source)
    args = arguments(shapes, seed)

    def outer(*args):
        _, g = ys.grad(module.program, *args)
        return module.program(*[a - 0.01 * d for a, d in zip(args, g)])

    try:
        ys.check_grad(outer, *args, rtol=1e-4, atol=1e-6)
    except ControlFlowChanged:
        pass  # finite differences stepped across a decision of the data: refused, not wrong


def squares(x):
    return np.sum(x ** 2)


def cubes(x):
    return np.sum(x ** 3)


def calls_its_argument(x, g):
    return g(x)[0] * 2.0


def test_a_gradient_function_passed_in_is_called_not_walked():
    """yota-src's own callables may be arguments, as any function may: the
    module is made for that very object and refuses another."""
    x = np.array([0.5, -1.0, 2.0])
    squares_grad, cubes_grad = ys.simplegrad(squares, x), ys.simplegrad(cubes, x)
    df = ys.simplegrad(calls_its_argument, x, squares_grad)
    value, dx, _ = df(x, squares_grad)
    assert value == calls_its_argument(x, squares_grad)
    np.testing.assert_allclose(dx, 4 * x)
    with pytest.raises(ys.errors.SignatureMismatch):
        df(x, cubes_grad)
    value, (dx, _) = ys.grad(calls_its_argument, x, cubes_grad)
    np.testing.assert_allclose(dx, 6 * x ** 2)


def halving(x):
    y = x
    while np.sum(y ** 2) > 1.0:
        y = y * 0.5
    return np.sum(y ** 3)


def through_halving(x):
    _, g = ys.grad(halving, x)
    return np.sum(g[0] ** 2)


def test_a_refusal_in_a_nested_derivative_names_the_users_line():
    """A decision inside the inner gradient is said at the user's line it is
    of, never at a line of the generated module the user never saw."""
    x = np.array([1.0, 2.0])
    df = ys.simplegrad(through_halving, x)
    with pytest.raises(ys.errors.ControlFlowChanged) as refused:
        df(x * 10)
    assert "test_nesting.py:" in str(refused.value) and "grad_halving:" not in str(refused.value)
