"""`for t, x in enumerate(xs)` and `for x, y in zip(xs, ys)` over arrays roll
as `for x in xs` does, their count read at run time: one gradient serves
every sequence length (issue 25: enumerate pinned the length)."""

import helpers_together as h
import numpy as np
import pytest

import yota_src as ys


def data(rng, steps: int, width: int = 4):
    return rng.normal(size=(steps, width)), rng.normal(size=(steps, width))


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def held(f, args, index):
    return ys.api.numerical_gradient(f, args, index)


@pytest.mark.parametrize("f", [h.enumerated, h.zipped], ids=lambda f: f.__name__)
def test_one_gradient_serves_every_length(f, rng):
    W = rng.normal(size=(4, 4)) * 0.4
    df = ys.simplegrad(f, W, *data(rng, 12))
    assert "for t in range(" in df.source
    for steps in (12, 7, 1, 30):
        args = (W, *data(rng, steps))
        value, *grads = df(*args)
        assert np.isclose(value, f(*args))
        for index, grad in enumerate(grads):
            np.testing.assert_allclose(grad, held(f, args, index), rtol=1e-5, atol=1e-7)


def test_names_read_after_the_loop_hold_its_last_items(rng):
    """`t` read as a number after the loop: the length is the example's."""
    W = rng.normal(size=(4, 4)) * 0.4
    args = (W, *data(rng, 12))
    df = ys.simplegrad(h.names_after, *args)
    value, *grads = df(*args)
    assert np.isclose(value, h.names_after(*args))
    for index, grad in enumerate(grads):
        np.testing.assert_allclose(grad, held(h.names_after, args, index), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):
        df(W, *data(rng, 7))


def test_a_counter_read_as_a_number_keeps_the_length(rng):
    W = rng.normal(size=(4, 4)) * 0.4
    xs, _ = data(rng, 12)
    df = ys.simplegrad(h.counter_as_number, W, xs)
    _, dW, dxs = df(W, xs)
    np.testing.assert_allclose(dxs, held(h.counter_as_number, (W, xs), 1), rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError):  # the length it was made for, or refused: never reused
        df(W, data(rng, 7)[0])


def test_a_short_loop_is_right(rng):
    W = rng.normal(size=(4, 4)) * 0.4
    xs, _ = data(rng, 2)
    ys.check_grad(h.short, W, xs)


def test_zip_of_unequal_lengths_stops_at_the_shortest_and_is_checked(rng):
    W = rng.normal(size=(4, 4)) * 0.4
    xs, ys_ = rng.normal(size=(9, 4)), rng.normal(size=(6, 4))
    df = ys.simplegrad(h.zipped_unequal, W, xs, ys_)
    _, dW, dxs, dys = df(W, xs, ys_)
    np.testing.assert_allclose(dxs, held(h.zipped_unequal, (W, xs, ys_), 1), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(dys, held(h.zipped_unequal, (W, xs, ys_), 2), rtol=1e-5,
                               atol=1e-7)


def test_zip_of_equal_lengths_refuses_unequal_ones(rng):
    W = rng.normal(size=(4, 4)) * 0.4
    df = ys.simplegrad(h.zipped, W, *data(rng, 8))
    with pytest.raises(ValueError):  # made for equal lengths: another call is refused
        df(W, rng.normal(size=(8, 4)), rng.normal(size=(5, 4)))
