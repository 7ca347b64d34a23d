"""ys.grad's work arrays (passes/work_arrays.py): large temporaries written
into arrays kept from call to call, never into anything handed to the user."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import check_fast_code, programs

import yota_src as ys
from yota_src.passes import in_place, work_arrays


def logistic_sum(x):
    return np.sum(1 / (1 + np.exp(-x)))


def views_kept(x):
    t = x * 2.0
    v = t[::-1]
    w = t.T
    u = t + 1.0
    return np.sum(u * v) + np.sum(w * u)


def returned_in_part(W, x):
    h = np.tanh(W @ x)
    return np.sum(h * h) + np.sum(W * 0.5)


@pytest.fixture
def every_size(monkeypatch):
    """Work arrays and updates in place at every size, to see every chance taken."""
    monkeypatch.setattr(in_place, "MIN_BYTES", 0)
    monkeypatch.setattr(work_arrays, "MIN_BYTES", 0)


def test_a_large_chain_writes_its_temporaries_into_work_arrays(rng):
    x = rng.normal(size=50_000)
    value, (dx,) = ys.grad(logistic_sum, x)
    p = 1 / (1 + np.exp(-x))
    assert np.isclose(value, p.sum()) and np.allclose(dx, p * (1 - p))
    source = ys.grad(logistic_sum, x)[1].source
    assert "out=work[0]" in source and "spare_work.append(work)" in source
    assert "work[" not in ys.simplegrad(logistic_sum, x).source  # readable code keeps none
    assert "work[" not in ys.grad(logistic_sum, x[:100])[1].source  # small arrays keep none


@pytest.mark.parametrize("fn, shapes", [(logistic_sum, [(64,)]), (views_kept, [(40,)]),
                                        (returned_in_part, [(8, 8), (8,)])])
def test_a_result_is_never_overwritten_by_a_later_call(fn, shapes, rng, every_size):
    args = [rng.normal(size=shape) for shape in shapes]
    value, first = ys.grad(fn, *args)
    kept = [np.copy(g) for g in first]
    expected = ys.simplegrad(fn, *args)(*args)
    for _ in range(3):
        _, later = ys.grad(fn, *[arg * 1.5 for arg in args])
        for g, k in zip(first, kept):
            np.testing.assert_array_equal(g, k)
            assert not any(np.shares_memory(g, each) for each in later)
    assert "out=work[" in first.source
    for got, want in zip((value, *first), expected):
        np.testing.assert_array_equal(got, want)


def test_threads_never_share_a_set_of_work_arrays(rng, every_size):
    xs = [rng.normal(size=200) for _ in range(8)]
    expected = [ys.simplegrad(logistic_sum, x)(x)[1] for x in xs]
    ys.grad(logistic_sum, xs[0])
    failures = []

    def work(index):
        for _ in range(200):
            _, (dx,) = ys.grad(logistic_sum, xs[index])
            if not np.array_equal(dx, expected[index]):
                failures.append(index)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_work_arrays_change_no_bit_and_share_nothing(program, seed):
    """Random programs (loops, scatters, decisions, helpers) with a work array
    wherever the pass may put one, against the code without."""
    def everywhere(patch):
        patch.setattr(in_place, "MIN_BYTES", 0)
        patch.setattr(work_arrays, "MIN_BYTES", 0)

    check_fast_code(*program, seed, everywhere, np.testing.assert_array_equal)


# --- found by a hostile tester ------------------------------------------------------

def cast_down(x):
    y = x.astype(np.float32)
    return np.sum(np.exp(y) * y)


def masked(x):
    return np.sum(np.where(np.greater(x, 0.0), x * x, x))


@pytest.mark.parametrize("fn", [cast_down, masked])
def test_a_work_array_of_a_dtype_no_argument_has(fn, rng):
    x = rng.normal(size=40_000)
    value, (dx,) = ys.grad(fn, x)
    expected = ys.simplegrad(fn, x)(x)
    assert value == expected[0]
    np.testing.assert_array_equal(dx, expected[1])


def transposed(x, w):
    t = x.T * 2.0  # NumPy lays it out in F order, as x.T
    u = t + 1.0
    v = np.exp(t)
    return np.sum(np.ravel(u, order="K") * w) + np.sum(v * v)


def test_work_arrays_keep_numpy_s_memory_order(rng):
    """A C-ordered work array for an F-ordered result would change what an
    order-dependent read sees, and the order a sum adds in."""
    x, w = rng.normal(size=(200, 100)), rng.normal(size=20_000)
    value, g = ys.grad(transposed, x, w)
    assert value == transposed(x, w)
    for got, want in zip(g, ys.simplegrad(transposed, x, w)(x, w)[1:]):
        np.testing.assert_array_equal(got, want)


def diff_of_nothing(x, y):
    t = np.exp(x)
    d = np.diff(t, n=0)  # t itself
    u = np.sin(y) * 2.0
    return np.sum(d * u)


def test_a_value_that_is_its_operand_keeps_the_operand_alive(rng):
    x, y = rng.normal(size=40_000), rng.normal(size=40_000)
    value, g = ys.grad(diff_of_nothing, x, y, wrt=1)
    assert value == diff_of_nothing(x, y)
    np.testing.assert_array_equal(g[1], ys.simplegrad(diff_of_nothing, x, y, wrt=1)(x, y)[2])


_depth = []


def step_asking_for_its_users_gradient(x):
    if not _depth:  # the first call: while the primal using it is traced
        _depth.append(1)
        try:
            ys.grad(uses_the_step, x * 0.5)
        finally:
            _depth.pop()
    return np.tanh(x)


ys.diffrule(step_asking_for_its_users_gradient, "x", "dy * (1 - y * y)")


def uses_the_step(x):
    return np.sum(step_asking_for_its_users_gradient(x * 2.0) * x)


def test_a_gradient_asked_for_while_it_is_generated_is_refused(rng):
    """It would trace the function again without end (it hung, waiting for itself)."""
    with pytest.raises(RecursionError, match="while its gradient for these arguments"):
        ys.grad(uses_the_step, rng.normal(size=3))
