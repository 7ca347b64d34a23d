"""Functions that call NumPy functions writing into an argument, for
test_in_place_primitives.py."""

import numpy as np

INDEX = np.array([0, 2, 2, 1])
TABLE = np.zeros(4)


def add_at_local(x):
    y = np.zeros(4)
    np.add.at(y, INDEX, x)
    return np.sum(y ** 2)


def subtract_at_local(x):
    y = np.ones(3) * x[0]
    np.subtract.at(y, INDEX[:3], x[1:])
    return np.sum(np.sin(y))


def add_at_seen_through_alias(x):
    y = np.zeros(3)
    alias = y
    np.add.at(y, [1, 1], x[:2])
    return np.sum(alias * x[1:])


def add_at_scalar_values(x):
    y = x * 1.0
    np.add.at(y, [0, 0], 2.0)
    return np.sum(y ** 3)


def add_at_argument(x):
    np.add.at(x, [0], 1.0)
    return np.sum(x)


def add_at_global(x):
    np.add.at(TABLE, [0], x[0])
    return np.sum(TABLE * x)


def multiply_at_local(x):
    y = np.ones(4)
    np.multiply.at(y, [0, 0], x[:2])
    return np.sum(y)


def maximum_at_local(x):
    y = np.zeros(4)
    np.maximum.at(y, [0, 1], x[:2])
    return np.sum(y)


def negative_at_local(x):
    y = x * 2.0
    np.negative.at(y, [0])
    return np.sum(y)


def random_shuffle(x):
    y = x.copy()
    np.random.shuffle(y)
    return np.sum(y * np.arange(4))


def generator_shuffle(x):
    y = x * 1.0
    np.random.default_rng(0).shuffle(y)
    return np.sum(y * np.arange(4))


def copyto_local(x):
    y = np.zeros(4)
    np.copyto(y, x)
    return np.sum(y)


def fill_diagonal_local(x):
    y = np.outer(x, x)
    np.fill_diagonal(y, 0.0)
    return np.sum(y)


def putmask_local(x):
    y = x * 1.0
    np.putmask(y, x > 0.5, 0.0)
    return np.sum(y)


def shuffle_global(x):
    np.random.shuffle(TABLE)
    return np.sum(TABLE * x)

