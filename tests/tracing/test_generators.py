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


def delegation_returns_a_value(weights, x):
    def sub():
        yield weights[0]
        return weights[1] * 5.0  # PEP 380: the value of `yield from sub()`

    def outer():
        r = yield from sub()
        yield weights[2] * r

    return sum(outer()) + np.sum(x)


def accumulator_driven_by_send(weights, x):
    def accumulator():
        total = 0.0
        while True:
            v = yield total
            total = total + v ** 2

    acc = accumulator()
    next(acc)
    acc.send(weights[0])
    return acc.send(weights[1] * x[0, 0])


def send_through_delegation(weights, x):
    def inner():
        got = yield 1.0
        while got is not None:
            got = yield got * weights[2]
        return "unused"

    def outer():
        yield from inner()

    g = outer()
    next(g)
    return g.send(weights[0]) + g.send(weights[1]) + np.sum(x)


@pytest.mark.parametrize("f", [predict, zipped_and_listed, next_then_the_rest,
                               consumer_changes_what_the_body_reads, delegates, stops_early,
                               delegation_returns_a_value, accumulator_driven_by_send,
                               send_through_delegation])
@pytest.mark.parametrize("seed", [0, 1])
def test_generators_are_unrolled_as_they_are_consumed(f, seed):
    rng = np.random.default_rng(seed)
    weights = rng.standard_normal(2 * 3 + 3 + 3 * 1 + 1)
    x = rng.standard_normal((1, 2))
    value, g = ys.grad(f, weights, x)
    assert value == pytest.approx(f(weights, x))
    ys.check_grad(f, weights, x)


def test_sending_a_value_to_a_generator_not_started_is_python_s_type_error():
    def f(x):
        def g():
            yield x

        return g().send(x)

    with pytest.raises(TypeError, match="just-started generator"):
        ys.grad(f, np.ones(2))


@pytest.mark.parametrize("thrown", [KeyError("stop here"), KeyError])
def test_an_error_thrown_into_a_generator_comes_out_as_in_python(thrown):
    def f(x):
        def inner():
            yield x
            yield x * 2.0

        def outer():
            yield from inner()

        g = outer()
        next(g)
        return g.throw(thrown)

    with pytest.raises(KeyError):
        ys.grad(f, np.ones(2))


def test_an_error_in_a_generator_body_names_its_line():
    def broken():
        yield np.ones(2)
        yield np.ones(2) @ np.ones(3)  # shapes that do not fit

    def f(x):
        return sum(np.sum(x * v) for v in broken())

    with pytest.raises(ValueError, match="matmul"):
        ys.grad(f, np.ones(2))
