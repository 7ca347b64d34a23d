"""An `if` decided by the data inside a loop: where the iterations took
both arms, the loop rolls with the `if` in its body (ir/branches.py), and
the one module serves data that go either way at each iteration. An arm no
iteration took is refused, never guessed. Every case is checked against
finite differences and against the unrolled gradient at the same data."""

import numpy as np
import pytest
from helpers_loops import rows_with_a_branch
from hypothesis import given, settings
from hypothesis import strategies as st

import yota_src as ys


def svm_loss_naive(W, X, y, reg):
    """The multiclass SVM loss as course code writes it (CS231n)."""
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1
            if margin > 0:
                loss += margin
    loss /= num_train
    loss += reg * np.sum(W * W)
    return loss


def hinge(w, xs):
    total = 0.0 * w
    for t in range(xs.shape[0]):
        m = 1.0 - xs[t] * w
        if m > 0:
            total = total + m
    return total


def two_names(w, xs):
    """Each arm assigns both names; the first iteration's values are numbers."""
    a, b = 0.0, 1.0
    for t in range(xs.shape[0]):
        if xs[t] * w > 0:
            a = a + xs[t] * w
            b = b * 0.5
        else:
            a = a - w
            b = b + xs[t] ** 2
    return a * b


def nested_ifs(w, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        v = xs[t] * w
        if v > 0:
            if v > 1:
                total = total + v ** 2
            else:
                total = total + v
        else:
            total = total - 0.5 * v
    return total


def counted(w, xs):
    """A count an arm keeps in a Python int: the code counts too."""
    total, hits = 0.0, 0
    for t in range(xs.shape[0]):
        if xs[t] > 0:
            total = total + w * xs[t]
            hits += 1
    return total * hits if hits > 3 else total


def remembered(w, xs):
    """An arm that changes an object no op shows: the decisions stay guards."""
    seen = []
    total = 0.0
    for t in range(xs.shape[0]):
        if xs[t] > 0:
            total = total + w * xs[t]
            seen.append(t)
    return total * len(seen)


# The classes a hostile review of the first version found silently wrong:
# one variable for two joined names, a swap, a value pasted into an
# expression unparenthesised, a number that depends on the counter.

def half_then_add(w, xs):
    a = w
    for t in range(len(xs)):
        v = xs[t] * w
        if v > 0:
            a = a * 0.5 + v
    return a


def two_accumulators(w, xs):
    b, c = 0.5 * w, 0.0
    for t in range(len(xs)):
        v = xs[t] * w
        if xs[t] > 0.2:
            b = b + v
        else:
            c = c * 0.5 + v
    return 2.0 * b + 3.0 * c


def running_max(w, xs):
    m = -10.0
    for t in range(len(xs)):
        v = xs[t] * w
        if v > m:
            m = v
    return m


def swapped(w, xs):
    a, b = w, 2.0 * w
    for t in range(len(xs)):
        if xs[t] > 0:
            a, b = b, a
        a = a + xs[t] * b
    return a + 3 * b


def two_ifs(w, xs):
    b, c = w, 0.0
    for t in range(len(xs)):
        if xs[t] > 0:
            b = b * 0.5
        else:
            b = b * 0.9
        if xs[t] > 1:
            c = c + w * b
        else:
            c = c - w * b
    return b + c


def ratio_in_arm(w, xs):
    total = 0.0
    for t in range(len(xs)):
        s = xs[t] + w
        d = xs[t] - w
        if xs[t] > 0:
            total = total + s / d
    return total


def alternating(w, xs):
    total = 0.0
    for t in range(len(xs)):
        v = xs[t] * w
        if v > 0:
            total = total + v * (-1) ** t
        else:
            total = total - v
    return total


def int_start(w, xs):
    total = 0
    for t in range(len(xs)):
        v = xs[t] * w
        if v > 0:
            total += v
    return total * 1.0


def copies(w, xs):
    total = 0.0
    for t in range(len(xs)):
        if xs[t] > 0:
            m = w
        else:
            m = xs[t]
        total = total + m * xs[t]
    return total


# ... and a second review: values rebound after the `if`, two names carried
# out as one value, and chains the branch op does not take yet (made with
# guards instead, never wrong).

def swap_after(w, xs):
    a, b = w, 0.5 * w
    for t in range(len(xs)):
        if xs[t] > 0:
            a = np.sin(a) + 0.53
        a, b = b * 0.9, a
    return a + 2.0 * b


def copied_after(w, xs):
    a, b = w, 0.0
    for t in range(len(xs)):
        if xs[t] > 0:
            a = a * 0.5 + xs[t] * w
        b = a
        a = b * 0.9 + 0.1
    return a + b


def always_copied(w, xs):
    a, b = w, 0.5 * w
    for t in range(len(xs)):
        a = a * 0.9 - xs[t] * w
        if xs[t] < 50.0:
            b = a
    return a + 2.0 * b


def optional_step(w, xs):
    h = 0.5 * w
    for t in range(len(xs)):
        if xs[t] > 0:
            h = np.tanh(w * h + xs[t])
        h = np.tanh(w * h - xs[t])
    return h


def chain(w, xs):
    total = 0.0
    for t in range(len(xs)):
        v = xs[t] * w
        if v > 1:
            if v > 2:
                if v > 3:
                    total = total + v
                total = total + 2 * v
            total = total - v
        elif v > 0:
            total = total + v * v
        elif v > -1:
            total = total - 3 * v
        else:
            total = total + 0.5
    return total


def loops(source: str, counter: str = "t") -> int:
    """The `for` statements over `counter` in generated code (not its comments)."""
    return sum(line.strip().startswith(f"for {counter} in") for line in source.splitlines())


def finite_differences(f, args, index, eps=1e-6):
    args = [np.array(a, dtype=float, copy=True) if isinstance(a, np.ndarray) and
            np.issubdtype(a.dtype, np.floating) else a for a in args]
    value = np.array(args[index], dtype=float, copy=True)
    grad = np.zeros_like(value)
    for place in np.ndindex(value.shape):
        for sign in (1, -1):
            moved = value.copy()
            moved[place] += sign * eps
            shifted = list(args)
            shifted[index] = moved if moved.shape else float(moved)
            grad[place] += sign * f(*shifted) / (2 * eps)
    return grad


def assert_right(f, df, args, wrt):
    got = df(*args)
    np.testing.assert_allclose(got[0], f(*args), rtol=1e-12, atol=1e-12)
    for index in wrt:
        np.testing.assert_allclose(got[1 + index], finite_differences(f, args, index),
                                   rtol=1e-5, atol=1e-6)


def test_a_branch_that_changes_rolls_with_both_arms(rng):
    X = rng.normal(size=(10, 3))
    X[:5, 0], X[5:, 0] = 1.0, -1.0
    df = ys.simplegrad(rows_with_a_branch, X)
    assert loops(df.source) == 2 and "if X[t, 0] > 0:" in df.source
    assert "np.zeros((N, M))" in df.source.split("for t in reversed")[0]  # not in each step
    for other in (X[::-1].copy(), rng.normal(size=(7, 3)), rng.normal(size=(1, 3))):
        assert_right(rows_with_a_branch, df, (other,), [0])


def test_the_naive_svm_loss_is_two_nested_loops(rng):
    W, X = rng.normal(size=(10, 4)) * 0.1, rng.normal(size=(24, 10))
    y = np.tile(np.arange(4), 6)
    df = ys.simplegrad(svm_loss_naive, W, X, y, 0.1)
    source = df.source
    assert len(source.splitlines()) <= 120, source
    assert loops(source, "u") == 2 and "if u == y[t]:" in source
    assert "for t in range(num_train):" in source  # any batch
    for n in (24, 13, 1):  # other data, each sample's class anywhere
        W2, X2 = rng.normal(size=(10, 4)) * 0.1, rng.normal(size=(n, 10))
        y2 = rng.integers(0, 4, n)
        assert_right(svm_loss_naive, df, (W2, X2, y2, 0.1), [0, 1])


def test_an_arm_no_iteration_took_is_refused(rng):
    W, X = np.zeros((10, 4)), rng.normal(size=(24, 10))
    y = np.tile(np.arange(4), 6)
    df = ys.simplegrad(svm_loss_naive, W, X, y, 0.1)  # every margin is 1
    W2 = rng.normal(size=(10, 4)) * 5.0  # some margins are not
    with pytest.raises(ys.errors.ControlFlowChanged, match="margin > 0"):
        df(W2, X, y, 0.1)


@pytest.mark.parametrize("f", [hinge, two_names, nested_ifs])
def test_both_arms_serve_new_data(f, rng):
    xs = rng.normal(size=12) * 2
    df = ys.simplegrad(f, 0.7, xs)
    assert loops(df.source) == 2, df.source
    for _ in range(4):
        assert_right(f, df, (0.7, rng.normal(size=12) * 2), [0, 1])


def test_a_count_an_arm_keeps_is_right_or_refused(rng):
    xs = rng.normal(size=12)
    df = ys.simplegrad(counted, 0.5, xs)
    assert_right(counted, df, (0.5, xs), [0, 1])
    for other in (xs[::-1].copy(), -xs, rng.normal(size=12), np.abs(xs)):
        try:
            assert_right(counted, df, (0.5, other), [0, 1])
        except ys.errors.ControlFlowChanged:
            pass  # the Python count's first steps, or `hits > 3`, went another way


def test_state_an_arm_keeps_in_an_object_stays_a_decision(rng):
    xs = rng.normal(size=12)
    df = ys.simplegrad(remembered, 0.5, xs)
    assert_right(remembered, df, (0.5, xs), [0, 1])
    flipped = xs.copy()
    flipped[3] = -flipped[3]
    with pytest.raises(ys.errors.ControlFlowChanged):
        df(0.5, flipped)


def test_ys_grad_serves_the_next_batch_from_its_cache(rng):
    xs = rng.normal(size=20) * 2
    value, (gw, gx) = ys.grad(hinge, 0.3, xs)
    other = rng.normal(size=20) * 2
    value, (gw, gx) = ys.grad(hinge, 0.3, other)
    np.testing.assert_allclose(gw, finite_differences(hinge, (0.3, other), 0), rtol=1e-6)


@pytest.mark.parametrize("f", [half_then_add, two_accumulators, running_max, swapped, two_ifs,
                               ratio_in_arm, alternating, int_start, copies, swap_after,
                               copied_after, always_copied, optional_step, chain])
def test_right_or_refused_at_the_example_and_on_new_data(f, rng):
    example = np.array([1.45, -1.3, 2.15, -1.55, 0.55, -0.65, 2.8, -1.2, 1.1, -0.4, 4.6, -2.1,
                        3.1, 0.35, -0.9, 5.1])  # (no step at a test's threshold)
    df = ys.simplegrad(f, 0.8, example)
    assert_right(f, df, (0.8, example), [0, 1])
    for data in (-example, example[::-1].copy(), rng.normal(size=16) * 2,
                 rng.normal(size=7) * 2):
        try:
            assert_right(f, df, (0.8, data), [0, 1])
        except (ys.errors.ControlFlowChanged, ys.errors.SignatureMismatch):
            pass  # an arm, a step or a size the example did not show


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3).filter(lambda v: abs(v) > 1e-3), min_size=8, max_size=8),
       st.lists(st.floats(-3, 3).filter(lambda v: abs(v) > 1e-3), min_size=5, max_size=14))
def test_any_data_either_arm(example, data):
    """Traced on one sample that takes both arms, right on any other data."""
    example = np.array(example)
    example[:6] = 2.0, -2.0, 0.5, 2.5, -1.0, 0.8  # each arm twice: the loop rolls
    df = ys.simplegrad(nested_ifs, 0.9, example)
    xs = np.array(data)
    if np.any(np.abs(xs * 0.9 - 1) < 1e-4) or np.any(np.abs(xs * 0.9) < 1e-4):
        return  # (at v == 0 and v == 1 two arms meet: no derivative there)
    assert_right(nested_ifs, df, (0.9, xs), [0, 1])
