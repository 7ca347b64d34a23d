"""The one walk over nested values (nested.py), and what it makes possible:
a namedtuple or an OrderedDict of computed arrays handed to NumPy."""

from collections import OrderedDict, namedtuple

import numpy as np

import yota_src as ys
from yota_src.core import nested

Pair = namedtuple("Pair", "a b")


def test_map_keeps_namedtuples_and_reaches_every_container():
    structure = (Pair(1, [2, {"k": 3}]), slice(4, None), OrderedDict(z=5))
    doubled = nested.map_leaves(structure, lambda n: n * 2, lambda v: isinstance(v, int))
    assert doubled == (Pair(2, [4, {"k": 6}]), slice(8, None), {"z": 10})
    assert type(doubled[0]) is Pair
    assert list(nested.leaves(structure, lambda v: isinstance(v, int))) == [1, 2, 3, 4, 5]


def test_shape_of_tells_structures_apart():
    assert nested.shape_of((1, [2]), id) == nested.shape_of((1, [2]), id)
    assert nested.shape_of((1, [2]), id) != nested.shape_of((1, (2,)), id)


def concatenated_pair(x, y):
    p = Pair(x * 2.0, np.sin(y))
    return np.sum(np.concatenate(p) ** 2)


def stacked_ordered_dict(x):
    d = OrderedDict(a=x, b=x * 3.0)
    return np.sum(np.stack(list(d.values())) ** 2)


def test_a_namedtuple_of_computed_arrays_reaches_numpy():
    ys.check_grad(concatenated_pair, np.arange(3.0), np.ones(2))
    ys.check_grad(stacked_ordered_dict, np.arange(3.0))


Shape = namedtuple("Shape", "r c")


def reshaped_by_a_namedtuple(x):
    return np.sum(np.reshape(x, Shape(2, 6)) ** 2)


def namedtuple_made_inside(x):
    Q = namedtuple("Q", "u v")
    q = Q(x, x * 2)
    return np.sum(q.u * q.v)


def test_namedtuples_as_static_arguments_and_made_inside():
    ys.check_grad(reshaped_by_a_namedtuple, np.arange(12.0))
    ys.check_grad(namedtuple_made_inside, np.arange(3.0))
