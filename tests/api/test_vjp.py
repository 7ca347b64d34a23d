"""ys.vjp: (value, pullback), pullback(dvalue) the gradient of sum(value * dvalue)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys


def layer(W, x):
    h = np.tanh(W @ x)
    return h, {"sq": h * h, "n": 3, "s": np.sum(x)}


def weighted(W, x, dh, dsq, ds):
    h, d = layer(W, x)
    return np.sum(h * dh) + np.sum(d["sq"] * dsq) + ds * d["s"]


def test_a_structured_value_pulls_back_as_the_gradient_of_its_weighted_sum(rng):
    W, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    value, pullback = ys.vjp(layer, W, x)
    expected = layer(W, x)
    np.testing.assert_array_equal(value[0], expected[0])
    assert value[1]["n"] == 3 and value[1]["s"] == expected[1]["s"]
    for _ in range(2):  # each call its own cotangent
        dh, dsq, ds = rng.normal(size=3), rng.normal(size=3), float(rng.normal())
        dW, dx = pullback((dh, {"sq": dsq, "n": None, "s": ds}))
        _, g = ys.grad(weighted, W, x, dh, dsq, ds, wrt=[0, 1])
        np.testing.assert_allclose(dW, g[0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(dx, g[1], rtol=1e-12, atol=1e-14)
    assert "def vjp_layer(W, x, dout):" in pullback.source


def identity_and_twice(x):
    h = np.sin(x)
    return h, h, x


def test_a_value_returned_twice_adds_its_cotangents_and_an_argument_owns_its_gradient(rng):
    x = rng.normal(size=5)
    _, pullback = ys.vjp(identity_and_twice, x)
    a, b, c = rng.normal(size=(3, 5))
    (dx,) = pullback((a, b, c))
    np.testing.assert_allclose(dx, (a + b) * np.cos(x) + c)
    (alone,) = ys.vjp(lambda x: x, x)[1](a)
    np.testing.assert_array_equal(alone, a)
    assert alone is not a


def test_the_saved_pullback_imports_with_numpy_alone(rng, tmp_path):
    W, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    _, pullback = ys.vjp(layer, W, x)
    path = tmp_path / "vjp_layer.py"
    pullback.save(path)
    spec = importlib.util.spec_from_file_location("vjp_layer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dvalue = (rng.normal(size=3), {"sq": rng.normal(size=3), "n": None, "s": 2.0})
    value, dW, dx = module.vjp_layer(W, x, dvalue)
    for a, b in zip((dW, dx), pullback(dvalue)):
        np.testing.assert_array_equal(a, b)
    assert "yota_src" not in path.read_text()


def counts(x):
    return int(x.shape[0])


class Box:
    pass


def boxed(x):
    box = Box()
    box.x = x
    return box


def test_what_cannot_be_pulled_back_is_refused(rng):
    with pytest.raises(ValueError, match="no float array or float that depends"):
        ys.vjp(counts, rng.normal(size=3))
    with pytest.raises(ValueError, match="returned a test_vjp.Box"):
        ys.vjp(boxed, rng.normal(size=3))
    _, pullback = ys.vjp(lambda x: np.sin(x), rng.normal(size=3))
    with pytest.raises(ValueError, match=r"dout float64 \(3,\), got ndarray float64 \(4,\)"):
        pullback(np.ones(4))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_vjp_of_any_program_is_grad_of_its_weighted_sum(program, seed):
    """Random programs (loops, scatters, decisions, helpers) made vector-valued."""
    source, shapes = program
    module = load_program(source)
    args = arguments(shapes, seed)
    rng = np.random.default_rng(seed)

    def vector(*args):
        return module.program(*args) * np.tanh(args[0]), module.program(*args)

    shape = np.shape(vector(*args)[0])
    weights = rng.normal(size=shape) if shape else float(rng.normal()), float(rng.normal())

    def weighted(*args):
        a, b = vector(*args)
        return np.sum(a * weights[0]) + b * weights[1]

    value, pullback = ys.vjp(vector, *args)
    expected = vector(*args)
    np.testing.assert_allclose(value[0], expected[0], rtol=1e-12)
    got = pullback(weights)
    _, reference = ys.grad(weighted, *args)
    for a, b in zip(got, reference):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
