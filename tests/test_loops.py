"""Loops stay loops: runs of iterations that do the same work are rolled
into a loop op (passes/roll.py), differentiated as a reversed loop
(loop_adjoint.py) and written as `for` loops (loop_code.py). Every case is
checked against finite differences and against the unrolled gradient."""

import numpy as np
import pytest
from golden_programs import newton_sqrt, rnn

import yota_src as ys
from yota_src.loops import Loop
from yota_src.passes import optimize_forward
from yota_src.tape import Tape, TapeError


def rows_with_a_branch(X):
    total = 0.0
    for t in range(X.shape[0]):
        if X[t, 0] > 0:
            total = total + np.sum(X[t] ** 2)
        else:
            total = total - np.sum(X[t])
    return total


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


def nested(A):
    total = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            total = total + A[i, j] * A[i, j]
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


def test_an_rnn_reads_like_backpropagation_through_time(rng):
    args = (rng.normal(size=(64, 8)) * 0.3, rng.normal(size=(64, 64)) * 0.1,
            rng.normal(size=(50, 8)))
    rolled, unrolled = both_ways(rnn, *args)
    body = rolled.split("def grad_rnn")[1]
    assert len(rolled.splitlines()) <= 60, rolled
    assert "for t in range(50):" in body and "for t in reversed(range(50)):" in body
    assert "h = np.tanh(Wx @ x + Wh @ h)" in body
    assert "dWh += np.outer(" in body and "dxs[t] += dx" in body
    assert loop_count(unrolled) == 0 and len(unrolled.splitlines()) > 200


def test_the_module_is_as_long_for_a_thousand_steps_as_for_ten(rng):
    W, h = rng.normal(size=(5, 5)) * 0.2, rng.normal(size=5)
    ten = ys.simplegrad(rnn, W[:, :3], W, rng.normal(size=(10, 3))).source
    thousand = ys.simplegrad(rnn, W[:, :3], W, rng.normal(size=(1000, 3))).source
    assert len(ten.splitlines()) == len(thousand.splitlines())
    assert h is not None


def test_newton_s_while_loop_rolls_and_checks_each_test(rng):
    rolled, _ = both_ways(newton_sqrt, 2.0)
    assert loop_count(rolled) == 2
    df = ys.simplegrad(newton_sqrt, 2.0)
    with pytest.raises(ys.errors.ControlFlowChanged):  # needs another number of iterations
        df(1e6)


def test_rows_of_an_array_and_a_row_loop(rng):
    X, w = rng.normal(size=(12, 4)), rng.normal(size=4)
    rolled, _ = both_ways(row_norms, X, w)
    assert "for t in range(12):" in rolled and "row = X[t]" in rolled


def test_reads_at_the_counter_and_the_next_place(rng):
    x = rng.normal(size=9)
    rolled, _ = both_ways(shifted, x, 0.7)
    assert "x[t + 1]" in rolled and loop_count(rolled) == 2


def test_a_branch_that_changes_splits_the_runs(rng):
    X = rng.normal(size=(10, 3))
    X[:5, 0], X[5:, 0] = 1.0, -1.0
    rolled, _ = both_ways(rows_with_a_branch, X)
    assert loop_count(rolled) == 4  # a forward and a reversed loop per branch
    df = ys.simplegrad(rows_with_a_branch, X)
    other = X.copy()
    other[7, 0] = 1.0
    with pytest.raises(ys.errors.ControlFlowChanged):
        df(other)


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
    assert "loop(" in text and "\nfor t in range(0, 5):\n    b1 = " in text
    assert np.isclose(tape.play(*args), rnn(*args))


def test_verify_catches_a_body_that_reads_from_outside(rng):
    args = (rng.normal(size=(4, 3)), rng.normal(size=(4, 4)), rng.normal(size=(5, 3)))
    tape = forward_tape(rnn, *args)
    (call,) = [op for op in tape.ops if isinstance(getattr(op, "fn", None), Loop)]
    body = call.fn.ops
    body[-1].args = (tape.ops[0],)  # the body reads an outside op directly
    with pytest.raises(TapeError, match="neither a parameter"):
        tape.verify()
