"""Writes into an argument (a dict item, an attribute, a list item) are
replayed by the generated code: the object passed in ends as the primal
leaves it, and the gradient is the one the tape's dataflow gives. A write
whose value is read back is refused, as are writes into objects from
outside, objects held twice and values the code cannot spell."""

import copy
import importlib.util
import types

import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import MutationError


def batchnorm(x, gamma, beta, bn_param):
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    out = gamma * (x - mean) / np.sqrt(var + 1e-5) + beta
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mean
    bn_param["calls"] = bn_param.get("calls", 0) + 1
    return np.sum(out ** 3)


def example(rng):
    return rng.standard_normal((6, 3)), rng.standard_normal(3), rng.standard_normal(3)


def _same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for key in a:
        if isinstance(a[key], str):
            assert a[key] == b[key]
        else:
            np.testing.assert_allclose(a[key], b[key], rtol=1e-12)


@pytest.mark.parametrize("first", [{"mode": "train"},
                                   {"mode": "train", "running_mean": np.ones(3), "calls": 4}])
def test_the_generated_code_leaves_the_dict_as_the_primal_does(first):
    rng = np.random.default_rng(0)
    x, gamma, beta = example(rng)
    traced_with = copy.deepcopy(first)
    df = ys.simplegrad(batchnorm, x, gamma, beta, traced_with)
    _same(traced_with, first)  # tracing writes nothing
    by_primal, by_module = copy.deepcopy(first), copy.deepcopy(first)
    value = batchnorm(x, gamma, beta, by_primal)
    result = df(x, gamma, beta, by_module)
    assert result[0] == pytest.approx(value, rel=1e-12)
    _same(by_module, by_primal)
    ys.check_grad(batchnorm, x, gamma, beta, copy.deepcopy(first))


def test_grad_writes_once_per_call_and_retraces_for_the_new_keys():
    rng = np.random.default_rng(1)
    x, gamma, beta = example(rng)
    state, expected = {"mode": "train"}, {"mode": "train"}
    for _ in range(3):
        value, g = ys.grad(batchnorm, x, gamma, beta, state)
        assert value == pytest.approx(batchnorm(x, gamma, beta, expected), rel=1e-12)
        _same(state, expected)
    assert state["calls"] == 3


class Net:
    def __init__(self, W):
        self.W = W
        self.mode = "test"
        self.seen = [None]

    def loss(self, x):
        self.mode = "train"
        h = np.tanh(self.W @ x)
        self.seen[0] = h
        return np.sum(h * h)


def net_loss(net, x):
    return net.loss(x)


def test_attributes_and_list_items_of_an_object_are_written():
    rng = np.random.default_rng(2)
    W, x = rng.standard_normal((3, 4)), rng.standard_normal(4)
    df = ys.simplegrad(net_loss, Net(W), x)
    assert 'net.mode = "train"' in df.source and "net.seen[0] = h" in df.source
    net = Net(W)
    df(net, x)
    assert net.mode == "train"
    np.testing.assert_allclose(net.seen[0], np.tanh(W @ x))
    ys.check_grad(net_loss, Net(W), x)


def test_a_saved_module_writes_into_the_argument(tmp_path):
    rng = np.random.default_rng(3)
    x, gamma, beta = example(rng)
    path = tmp_path / "grad_batchnorm.py"
    ys.simplegrad(batchnorm, x, gamma, beta, {"mode": "train"}).save(path)
    spec = importlib.util.spec_from_file_location("grad_batchnorm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state, expected = {"mode": "train"}, {"mode": "train"}
    module.grad_batchnorm(x, gamma, beta, state)
    batchnorm(x, gamma, beta, expected)
    _same(state, expected)


def read_back(x, cache):
    cache["h"] = np.tanh(x)
    return np.sum(cache["h"])


def test_a_written_value_read_back_is_refused_naming_the_line():
    with pytest.raises(MutationError, match=r"test_argument_writes.py:\d+.*read back"):
        ys.simplegrad(read_back, np.ones(3), {})


GLOBAL_STATE = {}


def into_a_global(x):
    GLOBAL_STATE["h"] = x
    return np.sum(x)


def twice(x, a, b):
    a["h"] = x * 2
    return np.sum(x)


def test_writes_into_outside_objects_and_aliased_ones_are_refused():
    with pytest.raises(MutationError, match="outside the function"):
        ys.simplegrad(into_a_global, np.ones(3))
    state = {}
    with pytest.raises(MutationError, match="holds? twice"):
        ys.simplegrad(twice, np.ones(3), state, state)
    assert state == {}


def unspellable(x, state):
    state["f"] = lambda: 1
    return np.sum(x)


def test_a_value_the_code_cannot_spell_is_refused_and_the_argument_left_alone():
    state = {"a": 1}
    with pytest.raises(MutationError, match="with a function value"):
        ys.simplegrad(unspellable, np.ones(3), state)
    assert state == {"a": 1}


def large_then_in_place(x, state):
    h = np.exp(x)
    state["h"] = h
    return np.sum(h * 2.0)


def test_a_written_array_is_never_reused_as_a_buffer():
    x = np.linspace(0, 1, 40_000)
    state, expected = {}, {}
    ys.grad(large_then_in_place, x, state)
    large_then_in_place(x, expected)
    _same(state, expected)


def test_a_namespace_passed_in_gets_the_write():
    ns = types.SimpleNamespace(step=0)

    def count(x, ns):
        ns.step = ns.step + 1
        return np.sum(x * x)

    df = ys.simplegrad(count, np.ones(2), ns)
    assert ns.step == 0
    df(np.ones(2), ns)
    assert ns.step == 1


def written_and_returned(x, state):
    state["h"] = np.tanh(x)
    return np.sum(x ** 2), state


def test_a_written_container_returned_as_aux_holds_the_write():
    x, state = np.array([0.5, -1.0]), {"h": np.zeros(2)}
    (_, aux), _ = ys.grad(written_and_returned, x, state, has_aux=True)
    np.testing.assert_allclose(aux["h"], np.tanh(x))
    np.testing.assert_allclose(state["h"], np.tanh(x))


def counted(x, state):
    state["n"] = state["n"] + 1
    return np.sum(np.tanh(x) ** 2)


def test_a_pullback_of_a_function_that_writes_is_refused():
    state = {"n": 0}
    with pytest.raises(MutationError, match="writes into its arguments"):
        ys.vjp(counted, np.ones(4), state)
    assert state == {"n": 0}


def index_expression(a, h):
    return np.sum(np.sin(a[np.s_[:, -3:]]) * h) + np.sum(a[np.index_exp[:, 1:]])


def test_an_index_of_slices_built_by_numpy_is_no_write_read_back():
    """A tuple of slices is no dictionary key before Python 3.12: looking it
    up among the writes into arguments must not fail."""
    a, h = np.arange(10.0).reshape(2, 5) / 7, np.ones((2, 3))
    value, da, dh = ys.simplegrad(index_expression, a, h)(a, h)
    assert np.isclose(value, index_expression(a, h))
    expected = np.zeros_like(a)
    expected[:, -3:] += np.cos(a[:, -3:]) * h
    expected[:, 1:] += 1
    np.testing.assert_allclose(da, expected)
    np.testing.assert_allclose(dh, np.sin(a[:, -3:]))
