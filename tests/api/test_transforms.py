"""ys.hvp, ys.hessian, ys.jvp, ys.jacobian and ys.derivative (transforms.py):
second derivatives refereed by finite differences of the first, forward mode
by finite differences in random directions, and rev/fwd Jacobians agreeing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import golden_programs
import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys
from yota_src.errors import ControlFlowChanged

EPS = 1e-6


def mlp(w, X):
    W1, W2 = w[:12].reshape(4, 3), w[12:].reshape(2, 4)
    h = np.tanh(X @ W1.T)
    return np.sum(np.tanh(h @ W2.T) ** 2)


def chain(w):
    return np.sum(np.tanh(w) ** 3) + np.sum(w[:-1] * w[1:]) + np.log(1.5 + w[0] ** 2)


def gradient_difference(f, x, v, *rest):
    """Finite differences of the first derivative along v: the referee."""
    grad = lambda point: ys.grad(f, point, *rest, wrt=0)[1][0]  # noqa: E731
    return (grad(x + EPS * v) - grad(x - EPS * v)) / (2 * EPS)


def test_a_hessian_vector_product_is_the_change_of_the_gradient(rng):
    w, v = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(ys.hvp(chain, w, v), gradient_difference(chain, w, v),
                               rtol=1e-5, atol=1e-7)


def test_the_hvp_of_a_small_tanh_mlp_reads_as_its_source(rng):
    w, X = rng.normal(size=20) * 0.5, rng.normal(size=(5, 3))
    v = rng.normal(size=20)
    product = ys.derivative(lambda w: mlp(w, X), w, v, transform="hvp")
    np.testing.assert_allclose(product(w, v), gradient_difference(mlp, w, v, X),
                               rtol=1e-5, atol=1e-7)
    assert "def hvp_" in product.source and "return hvp" in product.source
    assert "yota_src" not in product.source


def test_a_dense_hessian_is_symmetric_and_right(rng):
    w = rng.normal(size=5)
    H = ys.hessian(chain, w)
    assert H.shape == (5, 5)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12)
    for column, unit in enumerate(np.eye(5)):
        np.testing.assert_allclose(H[:, column], gradient_difference(chain, w, unit),
                                   rtol=1e-5, atol=1e-7)


def field(x, A):
    return np.sin(A @ x) * x[0], np.sum(x ** 2)


def vector_field(x, A):
    return np.sin(A @ x) * x[0]


def test_a_jacobian_vector_product_is_a_directional_derivative(rng):
    x, A, t = rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=3)
    t_A = rng.normal(size=(4, 3))
    value, tangent = ys.jvp(vector_field, (x, A), (t, t_A))
    np.testing.assert_array_equal(value, vector_field(x, A))
    expected = (vector_field(x + EPS * t, A + EPS * t_A)
                - vector_field(x - EPS * t, A - EPS * t_A)) / (2 * EPS)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


def test_a_jvp_module_takes_the_tangents_and_saves(rng, tmp_path):
    x, A = rng.normal(size=3), rng.normal(size=(4, 3))
    product = ys.derivative(vector_field, x, A, x, A, transform="jvp")
    assert "def jvp_vector_field(x, A, t_x, t_A):" in product.source
    path = tmp_path / "jvp_vector_field.py"
    product.save(path)
    spec = importlib.util.spec_from_file_location("jvp_vector_field", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    t, t_A = rng.normal(size=3), rng.normal(size=(4, 3))
    for a, b in zip(module.jvp_vector_field(x, A, t, t_A), product(x, A, t, t_A)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_jacobians_by_rows_and_by_columns_agree(shape, rng):
    x = rng.normal(size=shape)

    def f(x):
        return np.tanh(x * x.sum()).T * 2.0

    rows, columns = ys.jacobian(f, x, mode="rev"), ys.jacobian(f, x, mode="fwd")
    assert rows.shape == np.shape(f(x)) + shape
    np.testing.assert_allclose(rows, columns, rtol=1e-12, atol=1e-14)
    for index in np.ndindex(shape):
        unit = np.zeros(shape)
        unit[index] = 1.0
        expected = (f(x + EPS * unit) - f(x - EPS * unit)) / (2 * EPS)
        np.testing.assert_allclose(rows[(...,) + index], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(ys.jacobian(f, x), rows)


def test_what_a_transform_cannot_take_is_refused(rng):
    with pytest.raises(ValueError, match="mode='sideways'"):
        ys.jacobian(chain, rng.normal(size=3), mode="sideways")
    with pytest.raises(ValueError, match="transform='hessian'"):
        ys.derivative(chain, rng.normal(size=3), transform="hessian")
    with pytest.raises(TypeError, match="one tangent per float argument"):
        ys.derivative(vector_field, rng.normal(size=3), rng.normal(size=(4, 3)),
                      transform="jvp")


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_second_order_of_any_program(program, seed):
    """Random programs (loops, scatters, decisions, helpers): the Hessian-vector
    product in the first argument against finite differences of the gradient."""
    source, shapes = program
    module = load_program(source)
    x, *rest = arguments(shapes, seed)
    v = np.random.default_rng(seed).normal(size=np.shape(x))
    v = v if np.ndim(x) else float(v)

    def first(x):
        return module.program(x, *rest)

    try:
        got = ys.hvp(first, x, v)
        expected = gradient_difference(first, x, v)
    except ControlFlowChanged:
        return  # the data decided otherwise a step away: refused, not wrong
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_the_command_line_writes_each_transform(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import numpy as np

        def loss(w):
            return np.sum(np.tanh(w) ** 2)

        def example():
            return (np.arange(3.0),)
    """))
    for transform, header in [("hvp", "def hvp_loss(w, v):"), ("jvp", "def jvp_loss(w, t_w):"),
                              ("vjp", "def vjp_loss(w, dout):")]:
        result = subprocess.run([sys.executable, "-m", "yota_src", "gen", "model.py:loss",
                                 "--args", "model.py:example", "--transform", transform],
                                capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert result.returncode == 0, result.stderr
        assert header in result.stdout and "yota_src" not in result.stdout


# --- the golden programs, and every template ---------------------------------------

@pytest.mark.parametrize("name", golden_programs.NAMES)
def test_second_order_of_the_golden_programs(name, rng):
    """The Hessian-vector product in each program's first float argument,
    against finite differences of its gradient; its jvp against finite
    differences of the program."""
    fn, args, _ = golden_programs.case(name)
    index = next(i for i, arg in enumerate(args) if isinstance(arg, float) or (
        isinstance(arg, np.ndarray) and arg.dtype.kind == "f"))
    x = args[index]

    def first(x):
        return fn(*args[:index], x, *args[index + 1:])

    def draw():
        return rng.normal(size=x.shape) if isinstance(x, np.ndarray) else float(rng.normal())

    v = draw()
    np.testing.assert_allclose(ys.hvp(first, x, v), gradient_difference(first, x, v),
                               rtol=1e-4, atol=1e-6)
    t = draw()
    value, tangent = ys.jvp(first, (x,), (t,))
    expected = (first(x + EPS * t) - first(x - EPS * t)) / (2 * EPS)
    assert value == first(x)
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-7)


def test_every_template_is_differentiable_again():
    """No template's code calls a function without a rule of its own
    (tools/second_order_audit.py): a second derivative through any rule
    is written, never refused for want of one."""
    sys.path.insert(0, str(ROOT / "tools"))
    from second_order_audit import lacking_rules

    assert lacking_rules() == {}


# --- found by a hostile tester ------------------------------------------------------

def squares(x):
    return np.sum(x ** 2)


def quartic(a):
    return a ** 4


def scaled(a, x):
    return a * x ** 2


def test_numpy_scalars_and_float32_values(rng):
    x32 = np.array([1.0, 2.0], np.float32)
    (dx,) = ys.vjp(squares, x32)[1](np.float32(1.0))
    np.testing.assert_array_equal(dx, [2.0, 4.0])
    np.testing.assert_array_equal(ys.jacobian(squares, x32), [2.0, 4.0])
    assert ys.hessian(quartic, np.float64(1.5)) == pytest.approx(27.0)
    assert ys.hessian(quartic, np.float32(1.5)) == pytest.approx(27.0)
    assert ys.jacobian(lambda a: a * 1.0, np.float64(1.5), mode="fwd") == 1.0
    _, tangent = ys.jvp(scaled, (np.float32(2.0), np.array([1.0, 2.0])), (1.0, np.ones(2)))
    np.testing.assert_allclose(tangent, [5.0, 12.0])


def two_values(x):
    return x ** 2, np.sum(x)


def test_a_vector_or_tangent_of_another_shape_is_refused(rng):
    """Broadcast, it would give another product, silently."""
    x = rng.normal(size=3)
    for v in (np.ones((3, 1)), np.ones((2, 3)), np.ones(1)):
        with pytest.raises(ValueError, match=r"shape of its argument, \(3,\)"):
            ys.hvp(chain, x, v)
    with pytest.raises(ValueError, match="the tangent of argument 0"):
        ys.jvp(vector_field, (x, rng.normal(size=(4, 3))), (np.ones((2, 3)), np.ones((4, 3))))
    with pytest.raises(ValueError, match="needs two_values to return one array or float"):
        ys.jvp(two_values, (x,), (x,))


@pytest.mark.parametrize("call", [
    lambda f, x: ys.hessian(f, x, x),  # a second array would bind to an option
    lambda f, x: ys.jacobian(f, x, "rev"),
    lambda f, x: ys.hvp(f, x, x, "unroll"),
    lambda f, x: ys.jvp(f, (x,), (x,), "roll"),
])
def test_options_are_keyword_only(call):
    with pytest.raises(TypeError, match="positional argument"):
        call(lambda x: np.sum(x ** 3), np.arange(3.0))


@pytest.mark.parametrize("call, message", [
    (lambda f, x: ys.hessian(f, x, loops=np.ones(2)), "loops="),
    (lambda f, x: ys.jacobian(f, x, mode=3), "mode=3"),
    (lambda f, x: ys.jacobian(f, x, loops="rolled"), "loops='rolled'"),
])
def test_option_values_are_checked_with_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(lambda x: np.sum(x ** 3), np.arange(3.0))
