"""Generator functions (issue 8, item 2): a helper that `yield`s is unrolled
as it is consumed, with Python's laziness, by `for`, `list`, `sum`, `zip`,
`enumerate`, `next` and `yield from`."""

from __future__ import annotations

import numpy as np
import pytest

import yota_src as ys

SHAPES = [(2, 3), (3, 1)]


def unpack_layers(weights):
    """Autograd's Bayesian-net style: layers from a flat vector."""
    for m, n in SHAPES:
        yield weights[:m * n].reshape((m, n)), weights[m * n:m * n + n]
        weights = weights[(m + 1) * n:]


def predict(weights, x):
    for W, b in unpack_layers(weights):
        x = np.tanh(x @ W + b)
    return np.sum(x ** 2)


def zipped_and_listed(weights, x):
    layers = list(unpack_layers(weights))
    total = 0.0
    for i, (W, _) in enumerate(unpack_layers(weights)):
        total = total + np.sum(W * layers[i][0]) * (i + 1)
    return total + sum(np.sum(b) for _, b in unpack_layers(weights))


def next_then_the_rest(weights, x):
    def doubled():
        k = 0
        while k < 3:
            yield weights[k] * 2.0
            k += 1

    items = doubled()
    first = next(items)
    return first * 10.0 + sum(items) + np.sum(x)


def consumer_changes_what_the_body_reads(weights, x):
    scale = [1.0]

    def scaled():
        for v in weights[:3]:
            yield v * scale[0]

    total = 0.0
    for v in scaled():
        total = total + v
        scale[0] = scale[0] * 2.0  # seen by the body's next step, as in Python
    return total + np.sum(x)


def delegates(weights, x):
    def inner():
        yield weights[0]
        yield weights[1]

    def outer():
        yield from inner()
        yield weights[2] * 3.0

    return sum(outer()) + sum(a * b for a, b in zip(outer(), inner())) + np.sum(x)


def stops_early(weights, x):
    def values():
        for v in weights:
            yield v * 1.0

    for v in values():
        if v > 0.5:
            return v * 2.0 + np.sum(x)
    return np.sum(x)


@pytest.mark.parametrize("f", [predict, zipped_and_listed, next_then_the_rest,
                               consumer_changes_what_the_body_reads, delegates, stops_early])
@pytest.mark.parametrize("seed", [0, 1])
def test_generators_are_unrolled_as_they_are_consumed(f, seed):
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal(2 * 3 + 3 + 3 * 1 + 1)
    x = rng.standard_normal((1, 2))
    value, g = ys.grad(f, weights, x)
    assert value == pytest.approx(f(weights, x))
    ys.check_grad(f, weights, x)


def test_an_error_in_a_generator_body_names_its_line():
    def broken():
        yield np.ones(2)
        yield np.ones(2) @ np.ones(3)  # shapes that do not fit

    def f(x):
        return sum(np.sum(x * v) for v in broken())

    with pytest.raises(ValueError, match="matmul"):
        ys.grad(f, np.ones(2))
