"""Generated code refuses calls outside what it was specialised to."""

import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import ControlFlowChanged, SignatureMismatch


def scaled(x, n, mode):
    y = x * n
    if mode == "double":
        y = y * 2.0
    return np.sum(y)


def branchy(x):
    if np.sum(x) > 0:
        return np.sum(x ** 2)
    return -np.sum(x)


def test_other_shape_raises_naming_it():
    df = ys.simplegrad(scaled, np.ones(3), 2, "double")
    with pytest.raises(SignatureMismatch, match=r"x float64 \(3,\), got float64 \(4,\)"):
        df(np.ones(4), 2, "double")


def test_other_dtype_raises():
    df = ys.simplegrad(scaled, np.ones(3), 2, "double")
    with pytest.raises(ValueError, match="float32"):
        df(np.ones(3, dtype=np.float32), 2, "double")


def test_other_static_values_raise():
    df = ys.simplegrad(scaled, np.ones(3), 2, "double")
    with pytest.raises(SignatureMismatch, match="n == 2, got 3"):
        df(np.ones(3), 3, "double")
    with pytest.raises(SignatureMismatch, match="mode == 'double', got 'half'"):
        df(np.ones(3), 2, "half")


def test_flipped_branch_raises_naming_the_condition():
    df = ys.simplegrad(branchy, np.ones(3))
    assert np.allclose(df(np.ones(3))[1], 2.0)
    with pytest.raises(ControlFlowChanged, match=r"`np.sum\(x\) > 0` was True"):
        df(-np.ones(3))


def test_errors_are_value_errors():
    assert issubclass(SignatureMismatch, ValueError)
    assert issubclass(ControlFlowChanged, ValueError)


def test_cached_grad_never_returns_a_stale_branch():
    ys.grad(branchy, np.ones(3))
    with pytest.raises(ControlFlowChanged):
        ys.grad(branchy, -np.ones(3))


def test_dynamic_grad_retraces_each_path_once():
    x = np.arange(1.0, 4.0)
    _, g_positive = ys.grad(branchy, x, dynamic=True)
    _, g_negative = ys.grad(branchy, -x, dynamic=True)
    assert np.allclose(g_positive[0], 2 * x) and np.allclose(g_negative[0], -1.0)
    from yota_src import api
    variants = [v for key, v in api._cache.items() if key[0] is branchy]
    assert sum(len(v) for v in variants) == 2
    ys.grad(branchy, x, dynamic=True)
    assert sum(len(v) for v in variants) == 2


def double(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


def test_grad_cache_is_per_static_value():
    assert [ys.grad(double, 1.5, n)[1][0] for n in (1, 2, 3, 1)] == [2.0, 4.0, 8.0, 2.0]


def test_saved_module_raises_plain_value_error(tmp_path):
    df = ys.simplegrad(branchy, np.ones(3))
    path = tmp_path / "grad_branchy.py"
    df.save(path)
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(ValueError) as error:
        namespace["grad_branchy"](-np.ones(3))
    assert type(error.value) is ValueError
    assert "np.sum(x) > 0" in str(error.value)


def masked_total(x):
    return np.sum(x[x > 0])


def test_data_dependent_shapes_are_guarded():
    df = ys.simplegrad(masked_total, np.array([1.0, -1.0, 2.0]))
    assert np.allclose(df(np.array([3.0, -2.0, 1.0]))[1], [1.0, 0.0, 1.0])
    with pytest.raises(ControlFlowChanged):
        df(np.array([3.0, 2.0, 1.0]))
