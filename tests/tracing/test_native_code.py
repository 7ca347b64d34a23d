"""Code that runs natively on traced values (issue 7, class 3 and its
siblings): container methods, the standard library and library classes
arrange traced values as they arrange any others; what they compute is
recorded, what they decide is guarded, and what would escape the generated
code (a change to an argument's or an outside container, a value turned into
bytes or text and back) is refused."""

from __future__ import annotations

import bisect
import collections
import heapq
import operator
import pickle
import random
import struct
import types

import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import MutationError, NoDiffRuleError, UnsupportedSyntaxError


def weighted(items):
    return items[0] * 1.0 + items[1] * 2.0 + items[2] * 3.0


def heapified(x):
    items = [x[0], x[1], x[2]]
    heapq.heapify(items)
    return weighted(items)


def largest(x):
    top = heapq.nlargest(2, [x[0], x[1], x[2]])
    return top[0] * 2.0 + top[1]


def inserted_in_order(x):
    items = [x[0]]
    bisect.insort(items, x[1])
    bisect.insort(items, x[2])
    return weighted(items)


def unbound_methods(x):
    items, named = [x[0]], {}
    list.append(items, x[1])
    dict.__setitem__(named, "a", x[2])
    dict.update(named, b=x[0] * 2.0)
    operator.setitem(items, 0, x[2] * 5.0)
    return sum(items) + named["a"] * named["b"]


def queue_of_values(x):
    queue = collections.deque(maxlen=2)
    for v in x:
        queue.append(v * v)
    return sum(queue)


def counted_booleans(x):
    return sum(v > 0.4 for v in x) * x[0] + sum(x > 0.4) * x[1]


@pytest.mark.parametrize("f", [heapified, largest, inserted_in_order, unbound_methods,
                               queue_of_values, counted_booleans])
@pytest.mark.parametrize("x", [[1.3, 0.2, 0.5], [0.1, 0.9, 0.6]])
def test_native_arrangements_of_traced_values_are_right(f, x):
    x = np.array(x)
    value, g = ys.grad(f, x)
    assert value == pytest.approx(f(x))
    ys.check_grad(f, x)


@pytest.mark.parametrize("shuffle", [random.shuffle, np.random.shuffle],
                         ids=["random.shuffle", "np.random.shuffle"])
def test_a_draw_that_reorders_a_list_is_refused(shuffle):
    def f(x):
        items = [x[0], x[1], x[2]]
        shuffle(items)
        return weighted(items)

    with pytest.raises(MutationError, match="writes into its argument"):
        ys.grad(f, np.array([1.0, 2.0, 3.0]))


class Model:
    def __init__(self):
        self.W = np.array([1.0, 2.0])
        self.history = [1.0]
        self.config = {"a": 1.0}


def appends_through_list_append(x, model):
    list.append(model.history, 9.0)
    return np.sum(x * model.W) + sum(model.history)


def sets_through_operator(x, model):
    operator.setitem(model.config, "a", 9.0)
    return np.sum(x * model.W) * model.config["a"]


def pushes_onto_a_heap(x, model):
    heapq.heappush(model.history, 9.0)
    return np.sum(x * model.W) + sum(model.history)


@pytest.mark.parametrize("f", [appends_through_list_append, sets_through_operator,
                               pushes_onto_a_heap])
@pytest.mark.parametrize("make", [Model, lambda: types.SimpleNamespace(
    W=np.array([1.0, 2.0]), history=[1.0], config={"a": 1.0})], ids=["class", "namespace"])
def test_native_changes_to_what_an_argument_holds_are_refused_and_undone(f, make):
    model = make()
    with pytest.raises(MutationError, match="in-place change of"):
        ys.grad(f, np.array([0.5, 1.5]), model)
    assert model.history == [1.0] and model.config == {"a": 1.0}


@pytest.mark.parametrize("f, error, says", [
    (lambda x: np.sum(x * pickle.loads(pickle.dumps(x))), UnsupportedSyntaxError, "pickled"),
    (lambda x: struct.unpack("d", struct.pack("d", x[0]))[0] * x[1], UnsupportedSyntaxError,
     "cannot take a value computed"),
    (lambda x: np.array([x[0], "a"], dtype=object)[0] * x[1], NoDiffRuleError,
     "array of Python objects"),
    (lambda x: np.sum(x.astype(object) * 2.0), NoDiffRuleError, "array of Python objects"),
    (lambda x: float(str(x[0])) * x[1], UnsupportedSyntaxError, "of text made from"),
    (lambda x: np.sum(np.poly1d([1.0, 2.0])(x)), UnsupportedSyntaxError, "poly1d"),
], ids=["pickle", "struct", "object array", "astype(object)", "float(str())", "poly1d"])
def test_a_value_that_would_lose_its_gradient_on_the_way_is_refused(f, error, says):
    with pytest.raises(error, match=says):
        ys.grad(f, np.array([1.5, 0.7]))


@pytest.mark.parametrize("f", [
    lambda x: np.sum(x.astype(np.float64, copy=False) ** 2),
    lambda x: np.sum(x.astype(np.float64, order="C", casting="same_kind") ** 2),
    lambda x: np.sum(x) * float(len(("%.1f %d" % (x[0], 3)).split())),  # noqa: UP031
    lambda x: x[0] * len(f"{x[1]:g}".encode()) + x[1] * len(f"{x[0]:.0f}".split("1")),
], ids=["astype copy=False", "astype order casting", "percent formatting", "text lengths"])
def test_array_and_text_helpers(f):
    x = np.array([0.3, -1.5])
    assert ys.grad(f, x)[0] == pytest.approx(f(x))
    ys.check_grad(f, x)


def test_a_length_of_text_that_changes_is_refused():
    def f(x):
        return x[1] * len(f"{x[0]:g}".split("1"))

    ys.grad(f, np.array([2.5, 1.0]))
    with pytest.raises(ys.errors.ControlFlowChanged, match=r"len\(str.split"):
        ys.grad(f, np.array([11.5, 1.0]))


def test_the_standard_library_refuses_at_the_users_line():
    import statistics

    def f(x):
        return statistics.mean([x[0], x[1]])

    with pytest.raises(UnsupportedSyntaxError, match=r"test_native_code.py:\d+"):
        ys.grad(f, np.array([1.0, 2.0]))
