"""Loops stay loops: runs of iterations that do the same work are rolled
into a loop op (passes/roll.py), differentiated as a reversed loop
(loop_adjoint.py) and written as `for` loops (loop_code.py). Every case is
checked against finite differences and against the unrolled gradient."""

import re

import numpy as np
import pytest
from golden_programs import newton_sqrt, rnn
from helpers_loops import nested, rows_with_a_branch
from hypothesis import given, settings
from hypothesis import strategies as st

import yota_src as ys
from yota_src.ir.loops import Loop
from yota_src.ir.tape import Tape, TapeError
from yota_src.passes import optimize_forward


def row_norms(X, w):
    total = 0.0
    for row in X:
        total = total + np.tanh(row @ w) ** 2
    return total


def shifted(x, w):
    """Reads at `t` and `t + 1`: the counter follows the first."""
    total = 0.0
    for t in range(x.shape[0] - 1):
        total = total + w * (x[t + 1] - x[t]) ** 2
    return total


def history(W, h, steps):
    """Every state is kept and used after the loop: its values are stacked."""
    states = []
    for _ in range(steps):
        h = np.tanh(W @ h)
        states.append(h)
    return np.sum(np.stack(states) ** 2) + np.sum(states[1])


def draws(x, rng):
    total = 0.0
    for _ in range(4):
        total = total + x * rng.normal()
    return total


def both_ways(f, *args, **keywords):
    """The rolled gradient: right, and equal to the unrolled one."""
    rolled = ys.simplegrad(f, *args, **keywords)
    unrolled = ys.simplegrad(f, *args, loops="unroll", **keywords)
    got, expected = rolled(*args), unrolled(*args)
    for a, b in zip(got, expected):
        if a is None:
            assert b is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    ys.check_grad(f, *args)
    return rolled.source, unrolled.source


def loop_count(source: str) -> int:
    return sum(line.lstrip().startswith("for ") for line in source.splitlines())


@pytest.fixture
def rng():
    return np.random.default_rng(7)


@pytest.mark.slow
def test_an_rnn_reads_like_backpropagation_through_time(rng):
    args = (rng.normal(size=(64, 8)) * 0.3, rng.normal(size=(64, 64)) * 0.1,
            rng.normal(size=(50, 8)))
    rolled, unrolled = both_ways(rnn, *args)
    body = rolled.split("def grad_rnn")[1]
    assert len(rolled.splitlines()) <= 66, rolled  # 3 of them: the dtype guards compare with
    # the count is the sequence's length, read at run time with the other sizes
    assert "K = xs.shape[0]" in body and "for t in range(K):" in body
    assert "for t in reversed(range(K)):" in body
    # every step's input product at once, before the loop
    product = re.search(r"(t\d+) = xs @ Wx.T", body)
    assert product and f"h = np.tanh({product.group(1)}[t] + Wh @ h)" in body
    assert re.search(r"dxs = t\d+(_\d+)?s @ Wx", body) and "dxs[t]" not in body  # after
    # the outer products of all steps, as one product after the loop
    assert "np.outer" not in body and "dWx = " in body and " @ xs" in body
    assert loop_count(unrolled) == 0 and len(unrolled.splitlines()) > 200


def test_the_module_is_as_long_for_a_thousand_steps_as_for_ten(rng):
    W, h = rng.normal(size=(5, 5)) * 0.2, rng.normal(size=5)
    ten = ys.simplegrad(rnn, W[:, :3], W, rng.normal(size=(10, 3))).source
    thousand = ys.simplegrad(rnn, W[:, :3], W, rng.normal(size=(1000, 3))).source
    assert len(ten.splitlines()) == len(thousand.splitlines())
    assert h is not None


def iterations_of_newton(a: float) -> int:
    x, err, count = a, 1.0, 0
    while err > 1e-3:
        x_next = 0.5 * (x + a / x)
        err, x, count = abs(x_next - x), x_next, count + 1
    return count


def test_newton_s_while_loop_stays_a_while_loop_for_any_iteration_count():
    rolled, _ = both_ways(newton_sqrt, 2.0)
    assert "    while err > 0.001:" in rolled and "for t in reversed(range(steps)):" in rolled
    df = ys.simplegrad(newton_sqrt, 2.0)
    counts = set()
    for a in (0.54, 0.034, 162.0, 1.0, 2.0, 4e4, 1e6, 3e8):
        counts.add(iterations_of_newton(a))
        value, grad = df(a)
        assert value == newton_sqrt(a)
        eps = 1e-6 * a
        numeric = (newton_sqrt(a + eps) - newton_sqrt(a - eps)) / (2 * eps)
        np.testing.assert_allclose(grad, numeric, rtol=1e-6)
    assert {3, 5, 8} <= counts, counts


def halving_until_small(x, w):
    """A while loop over arrays whose test reads the carried value."""
    while np.sum(x * x) > 0.01:
        x = 0.5 * np.tanh(w * x)
    return np.sum(x)


def test_a_while_loop_over_arrays(rng):
    w = rng.normal(size=4)
    df = ys.simplegrad(halving_until_small, np.ones(4), w)
    assert "while " in df.source
    for scale in (0.3, 1.0, 5.0):
        x = scale * np.ones(4)
        got = df(x, w)
        expected = ys.simplegrad(halving_until_small, x, w, loops="unroll")(x, w)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        ys.check_grad(halving_until_small, x, w)


def test_rows_of_an_array_and_a_row_loop(rng):
    X, w = rng.normal(size=(12, 4)), rng.normal(size=4)
    rolled, _ = both_ways(row_norms, X, w)
    assert "for t in range(N):" in rolled and "row = X[t]" in rolled


def test_reads_at_the_counter_and_the_next_place(rng):
    x = rng.normal(size=9)
    rolled, _ = both_ways(shifted, x, 0.7)
    assert "x[t + 1]" in rolled and loop_count(rolled) == 2


def test_a_branch_that_changes_is_an_if_in_one_loop(rng):
    X = rng.normal(size=(10, 3))
    X[:5, 0], X[5:, 0] = 1.0, -1.0
    rolled, _ = both_ways(rows_with_a_branch, X)
    assert loop_count(rolled) == 2  # the forward loop and the reversed one, each with the `if`
    df = ys.simplegrad(rows_with_a_branch, X)
    other = X.copy()
    other[7, 0] = 1.0
    for a, b in zip(df(other), ys.simplegrad(rows_with_a_branch, other, loops="unroll")(other)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_nested_loops_roll_the_outer_one(rng):
    A = rng.normal(size=(6, 3))
    rolled, _ = both_ways(nested, A)
    assert loop_count(rolled) >= 2


def test_values_used_after_the_loop_are_stacked(rng):
    W, h = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=4)
    both_ways(history, W, h, 6)


def test_random_draws_stay_unrolled(rng):
    x = 1.5
    rolled = ys.simplegrad(draws, x, np.random.default_rng(0)).source
    assert loop_count(rolled) == 0


def test_short_loops_stay_unrolled():
    def two(x):
        for _ in range(2):
            x = x * x
        return x
    assert loop_count(ys.simplegrad(two, 1.5).source) == 0


def test_the_loops_option_is_checked():
    with pytest.raises(ValueError, match="loops="):
        ys.simplegrad(newton_sqrt, 2.0, loops="fold")


def test_grad_rolls_too_and_caches_per_option(rng):
    args = (rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(7, 3)))
    _, rolled = ys.grad(rnn, *args)
    _, unrolled = ys.grad(rnn, *args, loops="unroll")
    assert loop_count(rolled.source) == 2 and loop_count(unrolled.source) == 0
    for a, b in zip(rolled, unrolled):
        np.testing.assert_allclose(a, b)


def forward_tape(f, *args) -> Tape:
    _, tape = ys.trace(f, *args)
    return optimize_forward(tape)


def test_the_tape_shows_the_loop_indented_and_plays_it(rng):
    args = (rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(5, 3)))
    tape = forward_tape(rnn, *args)
    text = str(tape)
    assert "loop(" in text and "\nfor t in range(0, n+0):\n    b1 = " in text
    assert np.isclose(tape.play(*args), rnn(*args))


def test_verify_catches_a_body_that_reads_from_outside(rng):
    args = (rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(5, 3)))
    tape = forward_tape(rnn, *args)
    (call,) = [op for op in tape.ops if isinstance(getattr(op, "fn", None), Loop)]
    body = call.fn.ops
    body[-1].args = (tape.ops[0],)  # the body reads an outside op directly
    with pytest.raises(TapeError, match="neither a parameter"):
        tape.verify()


# --- trip counts read at run time -------------------------------------------

def double(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


def rnn_steps(W, U, xs, n):
    h = np.zeros(W.shape[0])
    for t in range(n):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h ** 2)


def scaled_by_count(x, n):
    for _ in range(n):
        x = x * 2.0
    return x * n


def counter_decides(x, n):
    for t in range(n):
        x = x * 2.0 if t < 4 else x  # a static use of the counter
    return x


def stops_early(x, n):
    for t in range(n):
        if t == 5:
            break
        x = x * 2.0
    return x


def warm_start(x, n):
    total = x * x
    for _ in range(n):
        total = np.sin(total) + x
    return total


def test_one_gradient_serves_every_count(tmp_path):
    df = ys.simplegrad(double, 1.5, 3)
    assert "for _ in range(n):" in df.source and "n == 3" not in df.source
    for n in range(0, 11):
        assert df(1.5, n)[:2] == (1.5 * 2 ** n, 2.0 ** n)
    df.save(tmp_path / "grad_double.py")
    import importlib.util
    spec = importlib.util.spec_from_file_location("grad_double", tmp_path / "grad_double.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.grad_double(0.5, 10)[1] == 1024.0


def test_an_rnn_over_the_first_n_steps(rng):
    W, U, xs = rng.normal(size=(5, 5)) * 0.4, rng.normal(size=(5, 3)), rng.normal(size=(12, 3))
    df = ys.simplegrad(rnn_steps, W, U, xs, 4)
    assert "range(n)" in df.source
    for n in (1, 4, 9, 12):
        got = df(W, U, xs, n)
        expected = ys.simplegrad(rnn_steps, W, U, xs, n, loops="unroll")(W, U, xs, n)
        for a, b in zip(got[:4], expected[:4]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        ys.check_grad(rnn_steps, W, U, xs, n)


@pytest.mark.parametrize("f", [scaled_by_count, counter_decides, stops_early])
def test_a_count_used_otherwise_stays_specialised(f):
    df = ys.simplegrad(f, 1.5, 6)
    assert "n != 6" in df.source
    with pytest.raises(ys.errors.SignatureMismatch):
        df(1.5, 7)
    ys.check_grad(f, 1.5, 6)


def test_fewer_iterations_than_the_code_runs_before_its_loop_are_refused():
    df = ys.simplegrad(warm_start, 0.3, 6)
    for n in (1, 6, 9):
        np.testing.assert_allclose(df(0.3, n)[1], ys.simplegrad(warm_start, 0.3, n)(0.3, n)[1])
    if "range(1, n)" in df.source:  # the first iteration was written before the loop
        with pytest.raises(ys.errors.ControlFlowChanged, match="n >= 1"):
            df(0.3, 0)


# --- lengths read at run time ----------------------------------------------

def over_rows(w, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.sin(w * x))
    return total


def over_len(w, xs):
    total = 0.0
    for t in range(len(xs)):
        total = np.tanh(total + np.sum(w * xs[t]))
    return total


def over_shape(w, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.sin(w * xs[t]))
    return total


def only_counts(w, xs):
    total = 0.0
    for _ in xs:
        total = total + np.sum(w * w)
    return total


def consecutive(w, xs):
    total = 0.0
    for t in range(len(xs) - 1):
        total = np.tanh(total + np.sum(w * xs[t] * xs[t + 1]))
    return total


def two_apart(w, xs):
    total = 0.0
    for t in range(xs.shape[0] - 2):
        total = total + np.sum(np.sin(w * (xs[t + 2] - xs[t])))
    return total


def column_at_counter(w, xs):
    h = 0.0
    for t in range(len(xs)):
        h = np.tanh(w * h + xs[:, 0][t])
    return np.sum(h)


def divided_by_len(w, xs):
    return over_rows(w, xs) / len(xs)


def shape_inside(w, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.sin(w * x)) * np.shape(xs)[0]
    return total


def last_row_too(w, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.sin(w * x))
    return total + np.sum(x)


def sum_of_all_too(w, xs):
    total = np.sum(xs ** 2)
    for t in range(len(xs)):
        total = total + np.sum(np.sin(w * xs[t]))
    return total


def iterated_twice(w, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.sin(w * x))
    return total + sum(np.sum(x) for x in xs)


@settings(max_examples=15, deadline=None)
@given(f=st.sampled_from([over_rows, over_len, over_shape, only_counts]),
       example=st.integers(4, 12), others=st.lists(st.integers(0, 20), min_size=1, max_size=3),
       width=st.sampled_from([(), (1,), (3,)]), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_one_gradient_serves_every_sequence_length(f, example, others, width, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=width)
    df = ys.simplegrad(f, w, rng.normal(size=(example, *width)))
    assert re.search(r"for \w+ in range\([A-Z]\):", df.source) and f"({example}," not in df.source
    for length in others:
        xs = rng.normal(size=(length, *width))
        value, dw, dxs = df(w, xs)
        expected = ys.grad(f, w, xs)
        np.testing.assert_allclose(value, f(w, xs), rtol=1e-12)
        np.testing.assert_allclose(dw, expected[1][0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dxs, expected[1][1], rtol=1e-10, atol=1e-12)
        assert dxs.shape == xs.shape
        if length:
            ys.check_grad(f, w, xs)


@pytest.mark.parametrize("f, fewer", [(consecutive, 1), (two_apart, 2)])
def test_a_count_of_rows_less_a_few(f, fewer, rng):
    w = rng.normal(size=3)
    df = ys.simplegrad(f, w, rng.normal(size=(6, 3)))
    assert f"for t in range(M - {fewer}):" in df.source
    for length in (fewer, fewer + 1, 4, 17):
        xs = rng.normal(size=(length, 3))
        value, dw, dxs = df(w, xs)
        np.testing.assert_allclose(value, f(w, xs), rtol=1e-12)
        np.testing.assert_allclose(dw, ys.grad(f, w, xs)[1][0], rtol=1e-10, atol=1e-12)
        if length > fewer:
            ys.check_grad(f, w, xs)
    with pytest.raises(ys.errors.ControlFlowChanged, match=f"M >= {fewer}"):
        df(w, rng.normal(size=(fewer - 1, 3)))  # range() of a negative number: refused


def test_the_signature_checks_all_but_the_length():
    df = ys.simplegrad(over_rows, np.ones(3), np.ones((5, 3), np.float32))
    assert "xs float32 (M, N)" in df.source  # the rows, and a width shared with w
    assert df(np.ones(3), np.ones((9, 3), np.float32))[2].dtype == np.float32
    expected = r"float32 \(M, 3\), got ndarray float32 \(5, 4\)"
    with pytest.raises(ys.errors.SignatureMismatch, match=expected):
        df(np.ones(3), np.ones((5, 4), np.float32))
    with pytest.raises(ys.errors.SignatureMismatch, match="got ndarray float64"):
        df(np.ones(3), np.ones((5, 3)))
    one_d = ys.simplegrad(over_rows, 0.5, np.ones(4))
    assert "xs.ndim != 1" in one_d.source and len(one_d(0.5, np.ones(7))) == 3
    with pytest.raises(ys.errors.SignatureMismatch, match=r"\(N,\)"):
        one_d(0.5, np.ones((7, 1)))


@pytest.mark.parametrize("f", [shape_inside, last_row_too, iterated_twice, column_at_counter])
def test_a_length_read_otherwise_stays_specialised(f, rng):
    """The rows read other than by the loop at its counter (a row after the
    loop, the length inside it, a second pass): the count is the example's."""
    w, xs = rng.normal(size=3), rng.normal(size=(6, 3))
    df = ys.simplegrad(f, w, xs)
    assert "xs float64 (6, " in df.source and "range(M" not in df.source
    with pytest.raises(ys.errors.SignatureMismatch):
        df(w, rng.normal(size=(7, 3)))
    ys.check_grad(f, w, xs)


@pytest.mark.parametrize("f", [divided_by_len, sum_of_all_too])
def test_a_length_also_read_as_a_size_still_serves_every_length(f, rng):
    """`len(xs)` as a number and `np.sum(xs)` are sizes read at run time too."""
    w = rng.normal(size=3)
    df = ys.simplegrad(f, w, rng.normal(size=(6, 3)))
    assert "range(M)" in df.source and "(6" not in df.source
    for length in (1, 2, 7, 11):
        xs = rng.normal(size=(length, 3))
        value, dw, dxs = df(w, xs)
        expected = ys.grad(f, w, xs)
        np.testing.assert_allclose(value, f(w, xs), rtol=1e-12)
        np.testing.assert_allclose(dw, expected[1][0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dxs, expected[1][1], rtol=1e-10, atol=1e-12)
        ys.check_grad(f, w, xs)


# --- rolled while traced ----------------------------------------------------

def late_branch(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        if t == 40:  # a static decision on the counter, late in the loop
            h = h * 0.5
    return np.sum(h ** 2)


def late_data_branch(w, xs):
    total = 0.0
    for x in xs:
        if np.sum(x) > 0:  # the data go the other way from row 30 on
            total = total + np.sum(np.tanh(w * x))
        else:
            total = total - np.sum(w * x)
    return total


def helper_step(h, x, W):
    return np.tanh(W @ h + x)


def with_helper(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = helper_step(h, xs[t], W)
    return np.sum(h)


@pytest.mark.slow
def test_a_long_loop_is_traced_as_one_loop_op(rng):
    W, U, xs = rng.normal(size=(6, 6)) * 0.3, rng.normal(size=(6, 2)), rng.normal(size=(400, 2))
    _, tape = ys.trace(rnn, U, W, xs)
    assert len(tape.ops) < 15, str(tape)  # the iterations after the first few ran natively
    both_ways(rnn, U, W, xs)


@pytest.mark.slow
def test_a_static_decision_late_in_the_loop_is_seen(rng):
    W, xs = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=(60, 4))
    both_ways(late_branch, W, xs)


@pytest.mark.slow
def test_a_data_decision_late_in_the_loop_is_traced(rng):
    xs = np.abs(rng.normal(size=(50, 3)))
    xs[30:] *= -1.0
    w = rng.normal(size=3)
    rolled, _ = both_ways(late_data_branch, w, xs)
    assert loop_count(rolled) == 2


def remembering_step(h, x, W, seen):
    seen["last"] = h  # state no op shows: a later count could not be served
    return np.tanh(W @ h + x)


def with_remembering_helper(W, xs):
    seen = {}
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = remembering_step(h, xs[t], W, seen)
    return np.sum(h)


def test_a_helper_that_only_computes_rolls_while_traced(rng):
    W, xs = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=(40, 4))
    _, tape = ys.trace(with_helper, W, xs)
    assert len(tape.ops) < 40  # its body assigns, stores into arrays and returns: as a loop's
    rolled, _ = both_ways(with_helper, W, xs)
    assert loop_count(rolled) == 2


def test_a_helper_that_changes_state_is_traced_every_iteration_and_still_rolled(rng):
    W, xs = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=(40, 4))
    _, tape = ys.trace(with_remembering_helper, W, xs)
    assert len(tape.ops) > 40 * 4  # it may change what the trace cannot see: traced
    rolled, _ = both_ways(with_remembering_helper, W, xs)  # and rolled afterwards
    assert loop_count(rolled) == 2


# --- state the ops do not show ---------------------------------------------

COEFFS = [1.0] * 12 + [5.0] + [1.0] * 20


def python_coefficients(xs, w, n):
    total = 0.0
    for t in range(n):
        total = total + COEFFS[t] * np.tanh(w @ xs[t])  # a Python list read at the counter
    return total


def python_order(X, w, n):
    order = list(range(X.shape[0]))[::-1]
    total = 0.0
    for t in range(n):
        total = total + np.tanh(X[order[t]] @ w)
    return total


def hidden_iterator(x, factors):
    it = iter(factors)
    while np.sum(x * x) > 0.01:
        x = x * next(it)  # state the loop's ops do not show
    return np.sum(x)


@pytest.mark.parametrize("f", [python_coefficients, python_order])
@pytest.mark.slow
def test_python_values_read_at_the_counter_are_traced_every_time(f, rng):
    xs, w = rng.normal(size=(30, 3)), rng.normal(size=3)
    for n in (6, 25):
        both_ways(f, xs, w, n)
    df = ys.simplegrad(f, xs, w, 6)
    assert "n != 6" in df.source  # n stays part of the specialisation
    with pytest.raises(ys.errors.SignatureMismatch):
        df(xs, w, 25)


def test_a_while_loop_that_changes_hidden_state_is_refused_for_other_counts():
    factors = [0.5] * 40
    x = np.array([0.3, 0.2])
    df = ys.simplegrad(hidden_iterator, x, factors)
    with pytest.raises(ys.errors.ControlFlowChanged):
        df(np.array([3.0, 1.0]), factors)


def test_a_negative_count_is_refused(rng):
    df = ys.simplegrad(double, 1.5, 5)
    with pytest.raises(ys.errors.ControlFlowChanged, match="n >= 0"):
        df(1.5, -1)


@pytest.mark.slow
def test_a_count_read_at_run_time_for_a_loop_rolled_while_traced(rng):
    W, U, xs = rng.normal(size=(5, 5)) * 0.4, rng.normal(size=(5, 3)), rng.normal(size=(60, 3))
    df = ys.simplegrad(rnn_steps, W, U, xs, 50)
    assert "range(n)" in df.source and "n != 50" not in df.source
    for n in (3, 50, 60):
        got = df(W, U, xs, n)
        expected = ys.simplegrad(rnn_steps, W, U, xs, n, loops="unroll")(W, U, xs, n)
        for a, b in zip(got[:3], expected[:3]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def swapped_carries(w):
    h, c = 0.0, 1.0
    for _ in range(4):
        h, c = w * c, c + h  # backwards, the old `dc` goes on as `dh`
    return h + c


def three_carries(w, x):
    a, b, c = 1.0, 0.5, 0.25
    for _ in range(5):
        a, b, c = c * w, a + c, b + a * x
    return a + b * c


def gru_like(w, xs):
    m, h = 0.0, np.zeros(2)
    for t in range(xs.shape[0]):
        m, h = h + m, np.tanh(w * m + xs[t])
    return np.sum(h) + np.sum(m)


def swapped_while(a):
    h, c = 1.0, 1.0
    while c < 20:
        h, c = a * c, h + c
    return h + c


@pytest.mark.parametrize("f, args", [
    (swapped_carries, (0.7,)), (three_carries, (0.7, 0.3)),
    (gru_like, (0.3, np.linspace(-1, 1, 12).reshape(6, 2))), (swapped_while, (1.5,))],
    ids=["two", "three", "gru-like", "while"])
def test_carried_values_that_pass_into_each_other(f, args):
    both_ways(f, *args)


# --- loops inside loops ---------------------------------------------------------------------

def pairs(W, X):
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(W.shape[0]):
            total = total + np.tanh(X[i] @ W[j])
    return total


def naive_convolution(x, w, b):
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    out = np.zeros((N, F, H - HH + 1, W - WW + 1))
    for n in range(N):
        for f in range(F):
            for i in range(H - HH + 1):
                for j in range(W - WW + 1):
                    out[n, f, i, j] = np.sum(x[n, :, i:i + HH, j:j + WW] * w[f]) + b[f]
    return np.sum(out ** 2)


def test_a_loop_inside_a_rolled_loop_rolls_too(rng):
    W, X = rng.normal(size=(5, 3)), rng.normal(size=(6, 3))
    df = ys.simplegrad(pairs, W, X)
    body = df.source.split("def grad_pairs")[1]
    assert "for t in range(K):" in body and "for u in range(N):" in body
    assert loop_count(body) == 5  # forward, and backward with the inner forward run again
    for rows, inner in ((6, 5), (2, 9), (1, 1)):
        W2, X2 = rng.normal(size=(inner, 3)), rng.normal(size=(rows, 3))
        got, expected = df(W2, X2), ys.simplegrad(pairs, W2, X2, loops="unroll")(W2, X2)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    ys.check_grad(pairs, W, X)


@pytest.mark.slow
def test_a_naive_convolution_rolls_four_deep_and_serves_other_batches(rng):
    x, w, b = rng.normal(size=(2, 3, 8, 8)), rng.normal(size=(4, 3, 3, 3)), rng.normal(size=4)
    df = ys.simplegrad(naive_convolution, x, w, b)
    assert len(df.source.splitlines()) <= 120 and loop_count(df.source) >= 8
    for batch in (1, 3):
        x2 = rng.normal(size=(batch, 3, 8, 8))
        got = df(x2, w, b)
        expected = ys.simplegrad(naive_convolution, x2, w, b, loops="unroll")(x2, w, b)
        for a, c in zip(got, expected):
            np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-10)
    ys.check_grad(naive_convolution, x, w, b)


def per_sample(weights, biases, X, y):
    total = 0.0
    for i in range(X.shape[0]):
        h = X[i]
        for W, b in zip(weights, biases):
            h = np.tanh(W @ h + b)
        total = total + np.sum((h - y[i]) ** 2)
    return total / X.shape[0]


def test_a_loop_over_samples_rolls_around_its_layers_and_serves_every_batch(rng):
    sizes = [4, 8, 8, 3]
    weights = [rng.normal(size=(o, i)) * 0.5 for i, o in zip(sizes[:-1], sizes[1:])]
    biases = [rng.normal(size=o) for o in sizes[1:]]
    df = ys.simplegrad(per_sample, weights, biases, rng.normal(size=(16, 4)),
                       rng.normal(size=(16, 3)))
    assert len(df.source.splitlines()) < 150 and "range(16)" not in df.source
    for batch in (16, 3, 1, 40):
        X, y = rng.normal(size=(batch, 4)), rng.normal(size=(batch, 3))
        got = df(weights, biases, X, y)
        expected = ys.simplegrad(per_sample, weights, biases, X, y, loops="unroll")(
            weights, biases, X, y)
        assert np.isclose(got[0], expected[0], rtol=1e-12)
        for path in expected[1]:
            np.testing.assert_allclose(got[1][path], expected[1][path], rtol=1e-10)
        np.testing.assert_allclose(got[3], expected[3], rtol=1e-10, atol=1e-12)


# --- state a loop changes that its ops do not show ----------------------------------------

def counted_in_a_list(x):
    acc, h = [], x * 0
    for _ in range(11):
        h = h + x
        acc += [1]  # a list changed in place
    return np.sum(h) * len(acc)


def counted_by_walrus(x):
    k, h = 0, x * 0
    for _ in range(20):
        if (k := k + 1) > 10:
            h = h * 0.5 + x
        else:
            h = h + x
    return np.sum(h)


def averaged_over_a_list(W, xs):
    total, seen = 0.0, []
    for x in xs:
        total = total + np.sum(np.tanh(W @ x))
        seen += [1]
    return total / len(seen)


def states_in_a_list(x):
    h, hs = x, []
    for _ in range(11):
        h = np.tanh(h + x)
        hs += [h]
    return np.sum(np.stack(hs))


def inner_sum_from_a_number(A):
    total = 0.0
    for i in range(A.shape[0]):
        s = 0.0
        for k in range(A.shape[1]):
            s = s + A[i, k]
        total = total + s * s
    return total


def reads_the_row_before(W, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ xs[t - 1] + h)  # xs[-1] at t = 0
    return np.sum(h)


@pytest.mark.parametrize("f, shapes", [
    (counted_in_a_list, [(2,)]), (counted_by_walrus, [(2,)]),
    (averaged_over_a_list, [(2, 2), (5, 2)]), (states_in_a_list, [(2,)]),
    (inner_sum_from_a_number, [(3, 4)]), (reads_the_row_before, [(3, 2), (5, 2)])])
def test_state_changed_in_place_is_seen_and_such_loops_are_right(f, shapes, rng):
    """A list grown with `+=`, a walrus counter: the loop's work depends on
    them, so it is neither rolled as if it did not nor its count freed."""
    args = [rng.normal(size=shape) for shape in shapes]
    both_ways(f, *args)
    if f is averaged_over_a_list:  # the list's length follows the rows: refused at others
        df = ys.simplegrad(f, *args)
        with pytest.raises((ys.errors.SignatureMismatch, ys.errors.ControlFlowChanged)):
            df(args[0], rng.normal(size=(8, 2)))
