"""Masked code inside a rolled loop (issue 25): a stable sigmoid selects
another number of values at every step, so its selections are sizes of the
body (the counts of its masks), made again in the reversed loop rather than
stacked; the loop rolls, and one module serves every mask count, sequence
length and batch."""

import numpy as np
import pytest
from test_sizes import _agrees

import yota_src as ys


def stable_sigmoid(x):
    """The numerically stable sigmoid of many courses: a mask per sign."""
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1 / (1 + np.exp(-x[pos]))
    neg = ~pos
    z = np.exp(x[neg])
    out[neg] = z / (1 + z)
    return out


def course_sigmoid(x):
    """cs231n's rnn_layers.sigmoid."""
    pos_mask = x >= 0
    neg_mask = x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


def lstm_step(x, prev_h, prev_c, Wx, Wh, b, sigmoid):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i, f, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    return o * np.tanh(next_c), next_c


def lstm_loss(xs, Wx, Wh, b, h0):
    T = xs.shape[0]
    h, c = h0, np.zeros_like(h0)
    loss = 0.0
    for t in range(T):
        h, c = lstm_step(xs[t], h, c, Wx, Wh, b, stable_sigmoid)
        loss = loss + np.sum(h * h)
    return loss


def course_lstm_loss(xs, Wx, Wh, b, h0):
    """As cs231n's lstm_forward: each step's state stored at its column."""
    T, N, _ = xs.shape
    hs = np.zeros((N, T, h0.shape[1]))
    h, c = h0, np.zeros_like(h0)
    for t in range(T):
        h, c = lstm_step(xs[t], h, c, Wx, Wh, b, course_sigmoid)
        hs[:, t, :] = h
    return np.sum(hs ** 2)


def _args(seed, steps, batch, features=3, hidden=4):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(steps, batch, features)), rng.normal(size=(features, 4 * hidden)),
            rng.normal(size=(hidden, 4 * hidden)), rng.normal(size=4 * hidden),
            rng.normal(size=(batch, hidden)))


@pytest.mark.parametrize("loss", [lstm_loss, course_lstm_loss])
def test_an_lstm_with_a_masked_sigmoid_rolls_and_serves_every_mask_count(loss):
    df = ys.simplegrad(loss, *_args(0, steps=8, batch=3))
    body = df.source.split("def grad_")[1]
    assert "for t in range(T):" in body and "for t in reversed(range(T)):" in body
    assert "np.shape(" not in body  # no count of a mask is checked
    assert len(df.source.splitlines()) < 300  # it was about 1,200 lines, unrolled
    for seed, steps, batch in ((1, 8, 3), (2, 11, 2), (3, 1, 1), (4, 5, 6)):
        _agrees(df, loss, _args(seed, steps, batch))
    _agrees(df, loss, _args(5, 6, 2, features=4, hidden=6))  # gates split by the state's size


def test_grad_serves_an_lstm_at_other_mask_counts_without_tracing_again():
    first = _args(0, steps=6, batch=3)
    ys.grad(lstm_loss, *first)
    for seed in (1, 2):
        args = _args(seed, steps=6, batch=3)
        value, grads = ys.grad(lstm_loss, *args)
        df = ys.simplegrad(lstm_loss, *args)
        expected = df(*args)
        assert np.isclose(value, expected[0])
        for got, want in zip(grads, expected[1:]):
            np.testing.assert_allclose(got, want, rtol=1e-10)


def selected_sum(W, xs):
    """A sum over what a mask selects at each step: its gradient is
    broadcast over the step's own count."""
    h = np.zeros((xs.shape[1], 3))
    total = 0.0
    for x in xs:
        h = np.tanh(h @ W + x)
        total = total + np.sum(h[h > 0.5])
    return np.sum(h ** 2) + total


def test_a_sum_over_a_selection_that_changes_at_each_step_rolls():
    rng = np.random.default_rng(30)
    W = rng.normal(size=(3, 3)) * 0.5
    df = ys.simplegrad(selected_sum, W, rng.normal(size=(4, 2, 3)))
    assert "for t in reversed(range(" in df.source and "np.shape(" not in df.source
    for steps, batch in ((4, 2), (7, 3), (1, 1), (3, 5)):
        _agrees(df, selected_sum, (W, rng.normal(size=(steps, batch, 3))))


def leaky_rnn(Wx, Wh, xs):
    """One sequence, a 1-D state scaled by a mask in place at each step."""
    h = np.zeros(Wh.shape[0])
    for x in xs:
        a = Wx @ x + Wh @ h
        a[a < 0] *= 0.1
        h = a
    return h.sum()


def test_a_state_scaled_by_a_mask_keeps_its_sizes_through_the_passes():
    rng = np.random.default_rng(3)
    Wx, Wh = rng.normal(size=(4, 2)), rng.normal(size=(4, 4)) * 0.3
    df = ys.simplegrad(leaky_rnn, Wx, Wh, rng.normal(size=(5, 2)))
    assert "(K, 4)" not in df.source and "np.shape(" not in df.source
    for steps in (5, 9, 1):
        _agrees(df, leaky_rnn, (Wx, Wh, rng.normal(size=(steps, 2))))
    wider = rng.normal(size=(6, 3)), rng.normal(size=(6, 6)) * 0.3, rng.normal(size=(7, 3))
    _agrees(df, leaky_rnn, wider)
