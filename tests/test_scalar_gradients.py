"""Code that reads a small array element by element gets its gradient as one
array literal (passes/gather.py), and stays right (central differences)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yota_src as ys
from yota_src.api import numerical_gradient


def backward_of(fn, *args, **options) -> str:
    source = ys.simplegrad(fn, *args, **options).source
    return source[source.index("# backward"):]


def three_reads(x):
    a, b, c = x[0], x[1], x[2]
    return a * b + b * c * c - 0.5 * a


def gaps(x):
    return x[0] * x[3] + x[-1]


def matrix_reads(A):
    return A[0, 1] * A[1, 0] + A[1, 1] * A[-2, -1]


CASES = {"every element": (three_reads, (3,), "np.array([da, db, dc])"),
         "unread elements are zeros": (gaps, (6,), "0.0, 0.0"),
         "two dimensions": (matrix_reads, (2, 2), "np.array([["),
         }


@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_reads_give_one_array_literal(name, rng):
    fn, shape, spelled = CASES[name]
    x = rng.normal(size=shape)
    ys.check_grad(fn, x)
    backward = backward_of(fn, x)
    assert spelled in backward and "np.zeros" not in backward and "+=" not in backward, backward


def test_float32_and_large_arrays_keep_their_buffer(rng):
    small32 = rng.normal(size=3).astype(np.float32)
    _, dx = ys.simplegrad(three_reads, small32)(small32)
    assert dx.dtype == np.float32
    assert "np.array([" not in backward_of(three_reads, small32)
    large = rng.normal(size=200)
    ys.check_grad(gaps, large)
    assert "np.zeros" in backward_of(gaps, large)


def slice_and_element(x):
    return x[0] * np.sum(x[1:] ** 2)


def test_a_slice_read_keeps_the_buffer(rng):
    x = rng.normal(size=4)
    ys.check_grad(slice_and_element, x)
    assert "np.array([" not in backward_of(slice_and_element, x)


def weighted_reads(x, positions):
    total = 0.0
    for k, p in enumerate(positions):
        total = total + (k + 1.0) * x[p] * x[-1 - p]
    return total


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(-n, n - 1), min_size=1, max_size=6).map(tuple))),
    st.sampled_from(["roll", "unroll"]))
def test_any_pattern_of_reads_gets_the_right_gradient(size_and_positions, loops):
    size, positions = size_and_positions
    x = np.linspace(-1.5, 2.0, size)
    expected = numerical_gradient(weighted_reads, (x, positions), 0)
    value, dx, _ = ys.simplegrad(weighted_reads, x, positions, loops=loops)(x, positions)
    assert np.isclose(value, weighted_reads(x, positions))
    assert dx.dtype == np.float64 and np.allclose(dx, expected, atol=1e-6)
