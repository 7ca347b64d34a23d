"""Struct-like arguments: path-dict gradients, unreached fields, update()."""

import enum
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

import yota_src as ys

Pair = namedtuple("Pair", ["W", "b"])


@dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    activation: str = "tanh"


@dataclass(frozen=True)
class Frozen:
    W: np.ndarray


class Net:
    def __init__(self, layers, scale):
        self.layers = layers
        self.scale = scale
        self.name = "net"


def net_loss(net, x):
    h = x
    for layer in net.layers:
        h = np.tanh(layer.W @ h + layer.b)
    return np.sum(h) * net.scale


def pair_loss(p, x):
    return np.sum(p.W @ x) + np.sum(p.b ** 2)


def dict_loss(params, x):
    return np.sum(params["encoder"][1]["W"] @ x) * params["gain"]


def uses_only_W(layer, x):
    return np.sum(layer.W @ x)


def frozen_loss(f):
    return np.sum(f.W ** 2)


def test_nested_object_list_dataclass_paths(rng):
    net = Net([Layer(rng.standard_normal((4, 3)), rng.standard_normal(4)),
               Layer(rng.standard_normal((2, 4)), rng.standard_normal(2))], 0.5)
    x = rng.standard_normal(3)
    ys.check_grad(net_loss, net, x)
    _, g = ys.grad(net_loss, net, x)
    assert set(g[0]) == {("layers", 0, "W"), ("layers", 0, "b"), ("layers", 1, "W"),
                         ("layers", 1, "b"), ("scale",)}
    assert g[0][("layers", 1, "W")].shape == (2, 4)


def test_namedtuple_paths(rng):
    p = Pair(rng.standard_normal((2, 3)), rng.standard_normal(2))
    ys.check_grad(pair_loss, p, rng.standard_normal(3))
    _, g = ys.grad(pair_loss, p, rng.standard_normal(3))
    assert set(g[0]) == {("W",), ("b",)}


def test_dict_and_list_paths(rng):
    params = {"encoder": [{"W": rng.standard_normal((2, 2))},
                          {"W": rng.standard_normal((2, 3)), "k": 3}], "gain": 2.0}
    ys.check_grad(dict_loss, params, rng.standard_normal(3))
    _, g = ys.grad(dict_loss, params, rng.standard_normal(3))
    assert set(g[0]) == {("encoder", 1, "W"), ("gain",)}


def test_unreached_fields_are_absent_and_non_arrays_are_none(rng):
    layer = Layer(rng.standard_normal((2, 3)), rng.standard_normal(2))
    _, g = ys.grad(uses_only_W, layer, rng.standard_normal(3))
    assert list(g[0]) == [("W",)]


def static_args(x, n, name, nothing, flag):
    return np.sum(x) * n


def test_ints_strings_none_get_none(rng):
    _, g = ys.grad(static_args, rng.standard_normal(3), 2, "s", None, True)
    assert g[1:] == (None, None, None, None)


def test_update_object_in_place(rng):
    layer = Layer(np.ones((2, 3)), np.ones(2))
    _, g = ys.grad(uses_only_W, layer, np.ones(3))
    same = ys.update(layer, g[0], lambda p, gp: p - 0.5 * gp)
    assert same is layer
    assert np.allclose(layer.W, 0.5) and np.allclose(layer.b, 1.0)


def test_update_nested_dict_and_list_in_place(rng):
    params = {"encoder": [{"W": np.ones((2, 2))}, {"W": np.ones((2, 3)), "k": 3}], "gain": 2.0}
    _, g = ys.grad(dict_loss, params, np.ones(3))
    out = ys.update(params, g[0], lambda p, gp: p - gp)
    assert out is params
    assert np.allclose(params["encoder"][1]["W"], 1 - 2.0)
    assert params["gain"] == 2.0 - 6.0


def test_update_rebuilds_immutable_containers():
    p = Pair(np.ones((2, 3)), np.ones(2))
    _, g = ys.grad(pair_loss, p, np.ones(3))
    new = ys.update(p, g[0], lambda w, gw: w - gw)
    assert isinstance(new, Pair) and np.allclose(new.b, -1.0) and np.allclose(new.W, 0.0)
    frozen = Frozen(np.ones(2))
    _, g = ys.grad(frozen_loss, frozen)
    assert np.allclose(ys.update(frozen, g[0], lambda w, gw: w - gw).W, -1.0)


def test_update_array_in_place():
    W = np.ones(3)
    assert ys.update(W, np.full(3, 2.0), lambda p, gp: p - gp) is W
    assert np.allclose(W, -1.0)


@pytest.mark.parametrize("make", [list, tuple])
def test_sequences_of_arrays(make, rng):
    def total(ws, x):
        return sum(np.sum(w * x) for w in ws)

    ws = make([rng.standard_normal(3), rng.standard_normal(3)])
    _, g = ys.grad(total, ws, rng.standard_normal(3))
    assert set(g[0]) == {(0,), (1,)}


Encoder = namedtuple("Encoder", ["layers", "norm"])


class Model:
    def __init__(self, encoder, head):
        self.encoder = encoder
        self.head = head


def model_loss(model, x):
    h = x
    for layer in model.encoder.layers:
        h = np.tanh(layer.W @ h + layer.b)
    h = h * model.encoder.norm["scale"]
    return np.sum(model.head["W"] @ h)


def test_deeply_nested_structs_give_full_paths(rng):
    layers = [Layer(rng.standard_normal((3, 3)), rng.standard_normal(3)) for _ in range(2)]
    model = Model(Encoder(layers, {"scale": rng.standard_normal(3)}),
                  {"W": rng.standard_normal((2, 3))})
    x = rng.standard_normal(3)
    ys.check_grad(model_loss, model, x)
    _, g = ys.grad(model_loss, model, x)
    assert ("encoder", "layers", 1, "W") in g[0]
    assert ("encoder", "norm", "scale") in g[0] and ("head", "W") in g[0]
    new = ys.update(model, g[0], lambda p, gp: p - 0.1 * gp)
    assert new is model


def _uses_a_lock(lock, x):
    if lock.locked():
        return np.sum(x)
    return np.sum(x * x)


def test_objects_of_c_types_are_static_arguments():
    import threading
    lock = threading.Lock()
    value, (dlock, dx) = ys.grad(_uses_a_lock, lock, np.array([1.0, 2.0]))
    assert value == 5.0 and dlock is None
    np.testing.assert_allclose(dx, [2.0, 4.0])


class Mode(__import__("enum").Enum):
    TRAIN = 1
    EVAL = 2


class Sentinel:
    pass


DEFAULT = Sentinel()


def by_mode_identity(x, mode):
    return np.sum(x) * (2.0 if mode is Mode.TRAIN else 3.0)


def by_mode_equality(x, mode):
    return np.sum(x) * (2.0 if mode == Mode.TRAIN else 3.0)


def by_sentinel(x, option):
    return np.sum(x) if option is DEFAULT else np.sum(x) * 10.0


def by_part_identity(x, config):
    return np.sum(x) * (2.0 if config["mode"] is Mode.EVAL else 3.0)


@pytest.mark.parametrize("f, static", [
    (by_mode_identity, Mode.TRAIN), (by_mode_identity, Mode.EVAL),
    (by_mode_equality, Mode.TRAIN), (by_sentinel, DEFAULT), (by_sentinel, Sentinel()),
    (by_part_identity, {"mode": Mode.EVAL, "w": np.ones(2)}),
])
def test_objects_passed_in_keep_their_identity(f, static):
    x = np.array([0.5, 1.5])
    value, g = ys.grad(f, x, static)
    assert value == f(x, static)
    ys.check_grad(f, x, static)


def test_an_enum_argument_is_guarded_by_name_and_the_module_can_be_saved(tmp_path):
    x = np.array([0.5, 1.5])
    df = ys.simplegrad(by_mode_identity, x, Mode.TRAIN)
    df.save(tmp_path / "grad_mode.py")
    assert "import test_structs" not in df.source
    assert df(x, Mode.TRAIN)[0] == by_mode_identity(x, Mode.TRAIN)
    with pytest.raises(ys.errors.SignatureMismatch, match="mode is Mode.TRAIN"):
        df(x, Mode.EVAL)


class Row(tuple):
    pass


class Items(list):
    pass


def from_subclasses(x, row, items):
    return np.sum(row[0] * x) + np.sum(items[1] * x) * row[1]


def test_tuple_and_list_subclasses_are_mirrored():
    args = (np.ones(2), Row([np.ones(2), 2.0]), Items([1.0, np.full(2, 3.0)]))
    value, g = ys.grad(from_subclasses, *args)
    assert value == from_subclasses(*args)
    ys.check_grad(from_subclasses, *args)


class Part(enum.Enum):
    WEIGHT = "w"
    BIAS = 2


def keyed_by_members(x, params):
    return np.sum(params[Part.WEIGHT] * x) + np.sum(params[Part.BIAS] ** 2) \
        + params[frozenset({1, 2})] * np.sum(x) + params[(1, ("a", 2.5))]


def test_dict_keys_the_code_can_import_or_spell(rng):
    """Enum members (imported from their module), frozensets, nested tuples."""
    x = rng.normal(size=3)
    params = {Part.WEIGHT: rng.normal(size=3), Part.BIAS: rng.normal(size=2),
              frozenset({1, 2}): 1.5, (1, ("a", 2.5)): 0.5}
    df = ys.simplegrad(keyed_by_members, x, params)
    assert "Part.WEIGHT" in df.source
    value, dx, dparams = df(x, params)
    assert value == keyed_by_members(x, params)
    np.testing.assert_allclose(dparams[(Part.BIAS,)], 2 * params[Part.BIAS])  # path-keyed
    np.testing.assert_allclose(dx, params[Part.WEIGHT] + 1.5)
    ys.check_grad(keyed_by_members, x, params)
