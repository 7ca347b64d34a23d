"""Passes that remove work from the reverse pass (issue 11): each keeps the
gradient right (central differences) and is checked for what it removes."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys
from yota_src.passes import in_place


def backward_of(fn, *args) -> str:
    source = ys.simplegrad(fn, *args).source
    return source[source.index("# backward"):]


def logistic_sum(x):
    return np.sum(1 / (1 + np.exp(-x)))


def kept_sign(x):
    z = -(x * 2.0)
    return np.sum(np.broadcast_to(z, (2, 3)) * x)


def test_negations_meet_and_cancel(rng):
    """-(-(t3 / t2) * t1), as the templates write it, is t3 / t2 * t1."""
    x = rng.normal(size=5)
    ys.check_grad(logistic_sum, x)
    backward = backward_of(logistic_sum, x)
    code = [line for line in backward.splitlines()[1:] if not line.strip().startswith("#")]
    assert code and not any("-" in line for line in code), backward


def test_a_sign_with_nothing_to_cancel_stays(rng):
    x = rng.normal(size=3)
    ys.check_grad(kept_sign, x)


def test_flipped_signs_give_the_same_bits(rng):
    x = rng.normal(size=1000)
    value, dx = ys.simplegrad(logistic_sum, x)(x)
    t1 = np.exp(-x)
    t2 = 1 + t1
    t3 = 1 / t2
    assert np.array_equal(dx, -(-(t3 * t3) * t1))  # 1 / t2's gradient: -dy * t3 * t3


# --- updates in place of dead temporaries (passes/in_place.py) -------------------

def test_a_large_chain_updates_its_dead_temporaries_in_place(rng):
    x = rng.normal(size=50_000)
    df = ys.simplegrad(logistic_sum, x)
    value, dx = df(x)
    p = 1 / (1 + np.exp(-x))
    assert np.isclose(value, p.sum()) and np.allclose(dx, p * (1 - p))
    assert re.search(r"np\.divide\(1, (t\d+_2), out=\1\)", df.source), df.source  # any operand
    assert re.search(r"(t\d+_2) \*= \1", df.source)
    assert re.search(r"np\.exp\((t\d+), out=\1\)", df.source)
    small = ys.simplegrad(logistic_sum, x[:10]).source
    assert "out=" not in small and "/=" not in small  # small arrays keep the plainer code


def views_kept(x):
    t = x * 2.0
    v = t[::-1]
    w = t.T
    u = t + 1.0  # the last read of t (its gradient needs none), but v and w look into it
    return np.sum(u * v) + np.sum(w * u)


def returned_twice(x, y):
    s = x * y
    return np.sum(s * s) + np.sum(x)


@pytest.mark.parametrize("fn, n_args", [(views_kept, 1), (returned_twice, 2)])
def test_nothing_shared_is_written_in_place(fn, n_args, rng, monkeypatch):
    args = [rng.normal(size=40) for _ in range(n_args)]
    kept = [arg.copy() for arg in args]
    reference = ys.simplegrad(fn, *args)(*args)
    monkeypatch.setattr(in_place, "MIN_BYTES", 0)  # every size, to see every chance taken
    df = ys.simplegrad(fn, *args)
    first = df(*args)
    second = df(*[arg * 2 for arg in args])
    for a, b in zip(first, reference):
        np.testing.assert_array_equal(a, b)
    assert all(np.array_equal(a, b) for a, b in zip(args, kept))
    assert not any(a is b for a in first for b in second if isinstance(a, np.ndarray))
    assert len({id(g) for g in first[1:]}) == n_args
    ys.check_grad(fn, *args)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(0, 2**16))
@pytest.mark.slow
def test_updates_in_place_change_no_bit_of_any_program(monkeypatch, program, seed):
    """Random programs (loops, scatters, decisions, helpers) with every
    update in place the pass may make, at any size, against none."""
    source, shapes = program
    module = load_program(source)
    args = arguments(shapes, seed)
    with monkeypatch.context() as patch:
        patch.setattr(in_place, "MIN_BYTES", 2**62)
        expected = ys.simplegrad(module.program, *args)(*args)
    monkeypatch.setattr(in_place, "MIN_BYTES", 0)
    got = ys.simplegrad(module.program, *args)(*args)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


# --- products with a row of an argument, hoisted out of loops (passes/batch.py) ------

def rows_on_the_left(W, xs):
    h = np.zeros(W.shape[1])
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + 0.5 * h)
    return np.sum(h)


def matrices_on_the_right(W, xs):
    h = np.zeros((W.shape[0], xs.shape[2]))
    for t in range(xs.shape[0]):
        h = np.sin(W @ xs[t] + h)
    return np.sum(h * h)


def few_rows(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(2):
        h = np.tanh(W @ xs[t] + h)
    return np.sum(h)


def shifted_rows(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(1, xs.shape[0]):
        h = np.tanh(W @ xs[t - 1] + h)
    return np.sum(h)


def partial_rows(W, xs, n):
    h = np.zeros(W.shape[0])
    for t in range(n):
        h = np.tanh(W @ xs[t] + h)
    return np.sum(h)


@pytest.mark.parametrize("n", [3, 4])
def test_a_buffer_the_loop_fills_only_in_part_keeps_its_updates(n, rng):
    W, xs = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    ys.check_grad(partial_rows, W, xs, n)
    df = ys.simplegrad(partial_rows, W, xs, 3)
    assert "dxs[t] +=" in df.source
    unrolled = ys.simplegrad(partial_rows, W, xs, n, loops="unroll")(W, xs, n)
    for a, b in zip(df(W, xs, n)[:3], unrolled[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, shapes, hoisted", [
    (rows_on_the_left, [(3, 4), (6, 3)], "xs @ W"),
    (matrices_on_the_right, [(2, 3), (5, 3, 2)], "W @ xs"),
    (few_rows, [(2, 3), (9, 3)], None),  # two steps of nine rows: not worth all nine
    (shifted_rows, [(2, 3), (5, 3)], None),  # a row beside the counter's
])
def test_row_products_move_before_the_loop(fn, shapes, hoisted, rng):
    args = [rng.normal(size=shape) * 0.5 for shape in shapes]
    ys.check_grad(fn, *args)
    source = ys.simplegrad(fn, *args).source
    forward = source[:source.index("# backward")]
    products = re.findall(r"= (xs @ W(?:\.T)?|W @ xs)$", forward, re.M)
    assert products == ([hoisted] if hoisted else []), forward
    backward = source[source.index("# backward"):]
    batched = re.search(r"dxs = \w+ @ W", backward)  # every step's update in one product
    assert bool(batched) == (fn is rows_on_the_left), backward
    rolled = ys.simplegrad(fn, *args)(*args)
    unrolled = ys.simplegrad(fn, *args, loops="unroll")(*args)
    for a, b in zip(rolled, unrolled):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
