"""`has_aux=True`: f returns (loss, aux); aux comes back as computed, and only
the loss is differentiated."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys


def layer(W, x):
    h = np.tanh(W @ x)
    loss = np.sum(h ** 2)
    return loss, {"h": h, "norm": np.linalg.norm(W), "steps": [1, "two", None], "n": 3}


def layer_loss(W, x):
    return layer(W, x)[0]


def mean_aside(x):
    return np.sum(x * x), np.mean(x)


def test_grad_returns_the_pair_and_the_gradient_of_the_loss(rng):
    W, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    (loss, aux), g = ys.grad(layer, W, x, has_aux=True)
    expected_loss, expected_aux = layer(W, x)
    assert loss == expected_loss
    np.testing.assert_array_equal(aux["h"], expected_aux["h"])
    assert aux["norm"] == expected_aux["norm"] and aux["steps"] == [1, "two", None]
    assert aux["n"] == 3
    _, plain = ys.grad(layer_loss, W, x)
    for a, b in zip(g, plain):
        np.testing.assert_array_equal(a, b)
    ys.check_grad(layer_loss, W, x)
    assert 'return (loss, {"h": h' in g.source


def test_simplegrad_with_aux_saves_a_module_that_returns_the_pair(rng, tmp_path):
    x = rng.normal(size=5)
    df = ys.simplegrad(mean_aside, x, has_aux=True)
    (value, aux), dx = df(x)
    assert value == np.sum(x * x) and aux == np.mean(x)
    np.testing.assert_allclose(dx, 2 * x)
    assert "aux = x.mean()" in df.source and "return (out, aux), dx" in df.source
    path = tmp_path / "grad_mean_aside.py"
    df.save(path)
    spec = importlib.util.spec_from_file_location("grad_mean_aside", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (saved_value, saved_aux), saved_dx = module.grad_mean_aside(x)
    assert (saved_value, saved_aux) == (value, aux)
    np.testing.assert_array_equal(saved_dx, dx)


def aux_is_what_the_gradient_is(x, c):
    t = c * 2.0
    return np.sum(x * t), t


def test_aux_and_a_gradient_never_share_memory(rng):
    x, c = rng.normal(size=30_000), rng.normal(size=30_000)
    (_, aux), (dx, _) = ys.grad(aux_is_what_the_gradient_is, x, c, has_aux=True)
    assert not np.shares_memory(aux, dx)
    kept = aux.copy(), dx.copy()
    ys.grad(aux_is_what_the_gradient_is, x * 3, c * 3, has_aux=True)  # work arrays reused
    np.testing.assert_array_equal(aux, kept[0])
    np.testing.assert_array_equal(dx, kept[1])


class Box:
    def __init__(self, value):
        self.value = value


def boxed(x):
    return np.sum(x), Box(x)


def scalar_only(x):
    return np.sum(x)


@pytest.mark.parametrize("fn, message", [
    (scalar_only, "must return a pair (loss, aux) with has_aux=True; it returned float64"),
    (boxed, "its aux holds a test_aux.Box"),
])
def test_what_aux_cannot_be_is_refused(fn, message, rng):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ys.grad(fn, rng.normal(size=3), has_aux=True)


def test_a_pair_without_has_aux_says_how_to_return_one(rng):
    with pytest.raises(ValueError, match="pass has_aux=True"):
        ys.grad(mean_aside, rng.normal(size=3))
    with pytest.raises(TypeError, match="has_aux='yes'"):
        ys.grad(mean_aside, rng.normal(size=3), has_aux="yes")


def test_the_cache_keeps_with_and_without_aux_apart(rng):
    x = rng.normal(size=4)
    (value, aux), _ = ys.grad(mean_aside, x, has_aux=True)
    (value_2, aux_2), _ = ys.grad(mean_aside, x, has_aux=True)
    assert (value, aux) == (value_2, aux_2)
    with pytest.raises(ValueError, match="pass has_aux=True"):
        ys.grad(mean_aside, x)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_aux_changes_no_gradient_of_any_program(program, seed):
    """Random programs (loops, scatters, decisions, helpers), returned with
    aux made from their value: the same gradient bits, and aux as computed."""
    source, shapes = program
    module = load_program(source)
    args = arguments(shapes, seed)

    def with_aux(*args):
        value = module.program(*args)
        return value, {"value": value, "twice": [2.0 * value]}

    expected = ys.simplegrad(module.program, *args)(*args)
    (value, aux), *gradients = ys.simplegrad(with_aux, *args, has_aux=True)(*args)
    assert value == expected[0] and aux == {"value": value, "twice": [2.0 * value]}
    for a, b in zip(gradients, expected[1:]):
        np.testing.assert_array_equal(a, b)


def test_the_command_line_writes_a_gradient_with_aux(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import numpy as np

        def loss(w):
            return np.sum(w * w), {"mean": np.mean(w)}

        def example():
            return (np.arange(3.0),)
    """))
    result = subprocess.run([sys.executable, "-m", "yota_src", "gen", "model.py:loss", "--args",
                             "model.py:example", "--has-aux"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert 'return (out, {"mean": mean_w}), dw' in result.stdout
