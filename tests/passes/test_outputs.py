"""Returned gradients own their memory: updating one in place (`dw *= -lr`)
never changes an argument, an array from outside, or another gradient."""

import numpy as np
import pytest

import yota_src as ys

WEIGHTS = np.array([1.0, 2.0, 3.0])


def times_itself(x, w):
    return np.sum(x * w)


def times_a_slice(x, w):
    return np.sum(x * w[1:])


def times_a_transpose(X, W):
    return np.sum(X * np.transpose(W))


def times_a_reshape(x, w):
    return np.sum(x * w.reshape(3))


def times_a_global(x, w):
    return np.sum(x * WEIGHTS) + np.sum(w)


def times_a_cast_without_copy(x, w):
    return np.sum(x * w.astype(np.float64, copy=False))


CASES = {
    "argument": (times_itself, (np.ones(3), np.arange(3.0))),
    "slice": (times_a_slice, (np.ones(3), np.arange(4.0))),
    "transpose": (times_a_transpose, (np.ones((2, 3)), np.arange(6.0).reshape(3, 2))),
    "reshape": (times_a_reshape, (np.ones(3), np.arange(3.0).reshape(1, 3))),
    "global": (times_a_global, (np.ones(3), np.ones(2))),
    "astype(copy=False)": (times_a_cast_without_copy, (np.ones(3), np.arange(3.0))),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("api", ["grad", "simplegrad"])
def test_a_returned_gradient_shares_memory_with_nothing(name, api):
    fn, args = CASES[name]
    if api == "grad":
        _, gradients = ys.grad(fn, *args)
    else:
        _, *gradients = ys.simplegrad(fn, *args)(*args)
    held = [*args, WEIGHTS]
    for index, gradient in enumerate(gradients):
        others = held + [g for j, g in enumerate(gradients) if j != index]
        assert not any(np.shares_memory(gradient, other) for other in others), index
        assert gradient.flags.writeable


def squares(x):
    return np.sum(x ** 2)


def test_a_new_array_of_the_reverse_pass_is_returned_without_a_copy():
    source = ys.simplegrad(squares, np.ones(3)).source
    assert "np.copy" not in source and "dx = 2.0 * x" in source
