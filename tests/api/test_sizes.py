"""One module for every size (issue 25): the arrays' sizes are read at run
time, what is computed from them is written as expressions of them, and
what the code decides from a size is checked at run time."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import load_example

import yota_src as ys
from yota_src.api.finite_differences import numerical_gradient
from yota_src.core.values import flatten
from yota_src.errors import ControlFlowChanged, SignatureMismatch


def _agrees(df, f, args, rtol=1e-6):
    """The module's value and gradients at `args` are f's and central differences'."""
    value, *grads = df(*args)
    assert np.isclose(value, f(*args), rtol=1e-12)
    for index, grad in enumerate(grads):
        arg = args[index]
        if grad is None:
            continue
        if isinstance(grad, dict):
            for path, _leaf in flatten(arg):
                expected = numerical_gradient(f, args, index, path)
                np.testing.assert_allclose(grad[tuple(key for _, key in path)], expected,
                                           rtol=rtol, atol=1e-7)
        else:
            np.testing.assert_allclose(grad, numerical_gradient(f, args, index, ()),
                                       rtol=rtol, atol=1e-7)
        assert np.shape(grad) == np.shape(arg) or isinstance(grad, dict)


@pytest.mark.parametrize("batch", [1, 7, 100])
def test_one_mlp_module_serves_every_batch(batch):
    mlp = load_example("mlp")
    params, x, labels = mlp.example()
    df = ys.simplegrad(mlp.loss, params, x, labels)
    assert "x float64 (M, L)" in df.source and "np.arange(P)" in df.source
    rng = np.random.default_rng(batch)
    _agrees(df, mlp.loss, (params, rng.standard_normal((8, batch)),
                           rng.integers(0, 3, size=batch)))


def test_hidden_and_class_counts_are_sizes_too():
    mlp = load_example("mlp")
    df = ys.simplegrad(mlp.loss, *mlp.example())
    rng = np.random.default_rng(0)
    params = mlp.MLP(rng.standard_normal((5, 8)), np.zeros(5), rng.standard_normal((4, 5)),
                     np.zeros(4))
    _agrees(df, mlp.loss, (params, rng.standard_normal((8, 9)), rng.integers(0, 4, size=9)))


def test_sizes_that_must_agree_are_checked():
    mlp = load_example("mlp")
    params, x, labels = mlp.example()
    df = ys.simplegrad(mlp.loss, params, x, labels)
    expected = r"x float64 \(8, L\), got ndarray float64 \(9, 32\)"
    with pytest.raises(SignatureMismatch, match=expected):
        df(params, np.ones((9, 32)), labels)


def branch_on_rows(x):
    if x.shape[0] > 4:
        return np.sum(x ** 2)
    return np.sum(x)


def test_a_decision_on_a_size_is_refused_where_it_goes_the_other_way():
    df = ys.simplegrad(branch_on_rows, np.ones(6))
    assert "if not (N > 4):" in df.source
    np.testing.assert_allclose(df(np.full(5, 3.0))[1], np.full(5, 6.0))
    with pytest.raises(ControlFlowChanged, match="> 4"):
        df(np.ones(3))


def weighted(x, w):
    return np.sum(x * w)


def test_a_size_of_one_that_broadcasts_stays_one():
    df = ys.simplegrad(weighted, np.ones((3, 1)), np.ones((3, 4)))
    rng = np.random.default_rng(1)
    _agrees(df, weighted, (rng.standard_normal((5, 1)), rng.standard_normal((5, 7))))
    with pytest.raises(SignatureMismatch):
        df(np.ones((3, 4)), np.ones((3, 4)))


def mean_and_slices(x):
    n = x.shape[0]
    centred = x - np.sum(x, axis=0) / n
    return np.sum(centred[1:] * centred[:-1]) + np.mean(x[:, :2] ** 2)


def test_arithmetic_on_sizes_is_written_as_expressions():
    x = np.random.default_rng(2).standard_normal((6, 5))
    df = ys.simplegrad(mean_and_slices, x)
    assert "/ n" in df.source  # the user's name for the size
    _agrees(df, mean_and_slices, (np.random.default_rng(3).standard_normal((9, 3)),))
    with pytest.raises(ControlFlowChanged):  # x[:, :2] needs two columns
        df(np.ones((4, 1)))


def test_a_saved_module_serves_another_batch_in_a_fresh_interpreter(tmp_path):
    mlp = load_example("mlp")
    params, x, labels = mlp.example()
    ys.simplegrad(mlp.loss, params, x, labels).save(tmp_path / "grad_loss.py")
    script = (
        "import sys, numpy as np\n"
        f"sys.path[:0] = [{str(tmp_path)!r}, 'examples']\n"
        "import mlp\n"
        "from grad_loss import grad_loss\n"
        "params, x, labels = mlp.example()\n"
        "rng = np.random.default_rng(0)\n"
        "x, labels = rng.standard_normal((8, 5)), rng.integers(0, 3, size=5)\n"
        "value, dparams, dx, _ = grad_loss(params, x, labels)\n"
        "assert 'yota_src' not in sys.modules and dx.shape == (8, 5)\n"
        "print(round(float(value - mlp.loss(params, x, labels)), 12))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=load_example("mlp").__file__.rsplit("/examples/", 1)[0])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("0.0", "-0.0")


def unknown_to_the_rules(x):
    return np.sum(np.linalg.qr(x)[0] * x)


def test_an_operation_without_a_rule_keeps_its_sizes():
    df = ys.simplegrad(unknown_to_the_rules, np.random.default_rng(4).standard_normal((4, 3)))
    assert "(4, 3)" in df.source
    with pytest.raises(SignatureMismatch):
        df(np.ones((5, 3)))


def stable_sigmoid(x):
    positive = x >= 0
    z = np.empty_like(x)
    z[positive] = 1 / (1 + np.exp(-x[positive]))
    e = np.exp(x[~positive])
    z[~positive] = e / (1 + e)
    return z


def masked_loss(W, x):
    h = W @ x
    leaky = h.copy()
    leaky[h < 0] *= 0.01
    return np.sum(stable_sigmoid(h) ** 2) + np.sum(leaky ** 2) + np.mean(h[h > 0])


def test_masked_code_serves_other_mask_counts_and_sizes(tmp_path):
    rng = np.random.default_rng(8)
    df = ys.simplegrad(masked_loss, rng.standard_normal((4, 3)), rng.standard_normal((3, 5)))
    assert "_other_path" not in df.source  # no count of the example is relied on
    df.save(tmp_path / "grad_masked.py")
    for shape in ((3, 5), (3, 11), (3, 1)):
        args = (rng.standard_normal((4, 3)), rng.standard_normal(shape))
        _agrees(df, masked_loss, args)


def count_used_as_a_number(x):
    kept = x[x > 0]
    return np.sum(kept) * (2.0 if len(kept) > 3 else 1.0)


def test_a_decision_on_a_count_is_guarded_where_the_mask_is():
    x = np.array([1.0, 2.0, 3.0, 4.0, -1.0])
    df = ys.simplegrad(count_used_as_a_number, x)
    _agrees(df, count_used_as_a_number, (np.array([1.0, 2.0, -3.0, 5.0, 6.0]),))
    with pytest.raises(ControlFlowChanged):
        df(np.array([1.0, -2.0, -3.0, 4.0, -1.0]))


def centred_rows(x):
    return np.sum((x - x.mean(axis=1)) ** 2)


def with_its_transpose(x):
    return np.sum(x * x.transpose(1, 0, 2))


@pytest.mark.parametrize("f, example, served, refused", [
    (centred_rows, (4, 4), (6, 6), [(3, 1), (3, 5)]),
    (with_its_transpose, (4, 4, 3), (5, 5, 2), [(3, 1, 3), (2, 3, 3)]),
])
def test_a_size_held_twice_by_one_argument_is_checked_equal(f, example, served, refused):
    """(N, N): NumPy broadcasts (3, 1) where the code was made for a square."""
    rng = np.random.default_rng(9)
    df = ys.simplegrad(f, rng.standard_normal(example))
    _agrees(df, f, (rng.standard_normal(served),))
    for shape in refused:
        with pytest.raises(SignatureMismatch):
            df(rng.standard_normal(shape))


def sizes_as_numbers(x):
    n = x.shape[0]
    return np.sum(x ** 2 / (n - 1)) + np.sum(x * (x.shape[0] + x.shape[1]))


def test_sizes_used_as_numbers_in_the_code():
    df = ys.simplegrad(sizes_as_numbers, np.ones((4, 6)))
    assert "x float64 (n, N)" in df.source
    _agrees(df, sizes_as_numbers, (np.random.default_rng(10).standard_normal((5, 2)),))


def leaky_loss(W, x):
    h = W @ x
    out = h * 1.0
    out[h < 0] *= 0.01
    return np.sum(out ** 2)


def test_grad_serves_every_mask_count_of_a_shape():
    """A leaky ReLU by mask in a training loop: each batch selects another
    number of negative values, and the cached code serves each."""
    rng = np.random.default_rng(11)
    W = rng.standard_normal((4, 3))
    for _ in range(4):
        x = rng.standard_normal((3, 6))
        value, (dW, dx) = ys.grad(leaky_loss, W, x)
        assert np.isclose(value, leaky_loss(W, x))
        np.testing.assert_allclose(dW, numerical_gradient(leaky_loss, (W, x), 0), rtol=1e-6)


def mean_of_positives(h):
    return np.mean(h[h > 0])


def test_an_empty_selection_gives_nan_as_numpy_does():
    df = ys.simplegrad(mean_of_positives, np.array([1.0, -2.0, 3.0]))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, dh = df(np.array([-1.0, -2.0]))
        assert np.isnan(value) and np.isnan(mean_of_positives(np.array([-1.0, -2.0])))
    np.testing.assert_array_equal(dh, [0.0, 0.0])


# --- loops over sizes -----------------------------------------------------------------------

def rnn_over_time(Wx, Wh, b, xs, targets):
    """A tanh RNN over a (time, batch, features) array, as courses write it."""
    T, N, D = xs.shape
    h = np.zeros((N, Wh.shape[0]))
    loss = 0.0
    for t in range(T):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        loss = loss + np.sum((h - targets[t]) ** 2)
    return loss / T


def _rnn_args(seed: int, steps: int, batch: int, hidden: int = 5, features: int = 3):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(features, hidden)) * 0.5, rng.normal(size=(hidden, hidden)) * 0.5,
            rng.normal(size=hidden), rng.normal(size=(steps, batch, features)),
            rng.normal(size=(steps, batch, hidden)))


def test_an_rnn_serves_other_sequence_lengths_and_batches():
    df = ys.simplegrad(rnn_over_time, *_rnn_args(0, steps=6, batch=4))
    body = df.source.split("def grad_rnn_over_time")[1]
    assert "D, M = Wx.shape" in body and "T = xs.shape[0]" in body  # the user's names
    assert "for t in range(T):" in body and "for t in reversed(range(T)):" in body
    assert "np.empty((T + 1, N, M))" in body and "(6," not in body and ", 4," not in body
    for steps, batch in ((11, 9), (1, 1), (2, 7)):
        _agrees(df, rnn_over_time, _rnn_args(steps, steps, batch))
    with pytest.raises(ControlFlowChanged, match="K > T - 1"):  # targets for fewer steps
        args = _rnn_args(1, steps=5, batch=2)
        df(*args[:4], args[4][:3])


def test_a_saved_rnn_serves_another_sequence_length_in_a_fresh_interpreter(tmp_path):
    args = _rnn_args(3, steps=6, batch=4)
    df = ys.simplegrad(rnn_over_time, *args)
    df.save(tmp_path / "grad_rnn.py")
    script = (
        "import sys, numpy as np\n"
        f"sys.path[:0] = [{str(tmp_path)!r}]\n"
        "from grad_rnn import grad_rnn_over_time\n"
        "rng = np.random.default_rng(5)\n"
        "Wx, Wh, b = rng.normal(size=(3, 5)), rng.normal(size=(5, 5)), rng.normal(size=5)\n"
        "xs, ys_ = rng.normal(size=(13, 2, 3)), rng.normal(size=(13, 2, 5))\n"
        "out = grad_rnn_over_time(Wx, Wh, b, xs, ys_)\n"
        "assert 'yota_src' not in sys.modules and out[4].shape == (13, 2, 3)\n"
        "np.save(sys.argv[1], np.concatenate([np.ravel(o) for o in out]))\n")
    saved = tmp_path / "out.npy"
    done = subprocess.run([sys.executable, "-c", script, str(saved)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    rng = np.random.default_rng(5)
    here = (rng.normal(size=(3, 5)), rng.normal(size=(5, 5)), rng.normal(size=5),
            rng.normal(size=(13, 2, 3)), rng.normal(size=(13, 2, 5)))
    expected = np.concatenate([np.ravel(o) for o in df(*here)])
    np.testing.assert_allclose(np.load(saved), expected, rtol=1e-12)
    _agrees(df, rnn_over_time, here)


def unrolled_by_a_late_decision(x, w):
    total = 0.0
    for t in range(x.shape[0]):
        total = total + np.sum(w * x[t])
        if t == x.shape[0] - 1:  # the last row is treated apart: the count is the example's
            total = total * 2.0
    return total


def test_a_loop_whose_count_the_code_decides_on_keeps_the_example_count():
    x, w = np.random.default_rng(4).normal(size=(5, 3)), np.ones(3)
    df = ys.simplegrad(unrolled_by_a_late_decision, x, w)
    _agrees(df, unrolled_by_a_late_decision, (x, w))
    with pytest.raises((SignatureMismatch, ControlFlowChanged)):
        df(np.ones((6, 3)), w)


# --- a size used as a Python number ----------------------------------------------------------

def _right_or_refused(df, f, args):
    """The module at `args`: refused, or f's value and gradient."""
    try:
        value, dx, dw = df(*args)
    except (SignatureMismatch, ControlFlowChanged):
        return
    assert np.isclose(value, f(*args), rtol=1e-12)
    _, expected = ys.grad(f, *args, dynamic=True)
    np.testing.assert_allclose(dx, expected[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw, expected[1], rtol=1e-10, atol=1e-12)


SIZE_AS_NUMBER = {
    "abs": lambda x, w: np.sum(x @ w) * abs(x.shape[0] - 10),
    "nonempty": lambda x, w: np.sum(np.tanh(x @ w)) if len(x) > 0 else np.sum(w) * 7.0,
    "truth": lambda x, w: np.sum(np.tanh(x @ w)) if x.shape[0] else np.sum(w) * 7.0,
    "float": lambda x, w: np.sum(np.tanh(x @ w)) if x.shape[0] > 5.5 else np.sum((x @ w) ** 2),
    "numpy int": lambda x, w: np.sum(x @ w) if x.shape[0] == np.int64(6) else np.sum(w),
    "float equal": lambda x, w: np.sum(x @ w) if x.shape[0] == 6.0 else np.sum(w),
    "set": lambda x, w: np.sum(x @ w) * len({x.shape[0], 6}),
    "dict key": lambda x, w: np.sum(x @ w) * {x.shape[0]: 2.0}.get(6, 1.0),
    "count": lambda x, w: np.sum(x @ w) * (1 + x.shape.count(6)),
    "isinstance": lambda x, w: np.sum(x @ w) * (2.0 if isinstance(x.shape[0], int) else 1.0),
    "tuple order": lambda x, w: np.sum(x @ w) * (2.0 if (x.shape[0], 3) < (6, 4) else 1.0),
}


@pytest.mark.parametrize("name", sorted(SIZE_AS_NUMBER))
def test_a_size_used_as_a_number_is_right_or_refused_at_every_size(name):
    """Python deciding from a size: with floats and NumPy scalars, in sets,
    dict keys and tuple methods, by its type, and at a size of 0."""
    f = SIZE_AS_NUMBER[name]
    rng = np.random.default_rng(7)
    w = rng.normal(size=3)
    df = ys.simplegrad(f, rng.normal(size=(6, 3)), w)
    for rows in (6, 7, 3, 1, 0):
        _right_or_refused(df, f, (rng.normal(size=(rows, 3)), w))
    for rows in (6, 4, 0, 9):  # ys.grad: its first module, then one reading sizes
        x = rng.normal(size=(rows, 3))
        value, g = ys.grad(f, x, w)
        assert np.isclose(value, f(x, w), rtol=1e-12)


def split_gates(a, h):
    """Gates packed as columns of one product, split by the state's size."""
    H = h.shape[1]
    return np.sum(np.tanh(a[:, :H]) * h + a[:, H:2 * H] ** 2) + np.sum(a[:, -H:])


def test_a_slice_bound_that_is_a_size_stays_a_size():
    rng = np.random.default_rng(0)
    df = ys.simplegrad(split_gates, rng.normal(size=(3, 12)), rng.normal(size=(3, 4)))
    body = df.source.split("def grad_split_gates")[1]
    assert "[:, :H]" in body and ":4]" not in body
    for batch, hidden, width in ((3, 4, 12), (5, 6, 12), (2, 2, 7)):
        _agrees(df, split_gates, (rng.normal(size=(batch, width)),
                                  rng.normal(size=(batch, hidden))))
    with pytest.raises(ControlFlowChanged):  # the columns cannot hold two states
        df(rng.normal(size=(3, 7)), rng.normal(size=(3, 4)))


def tail_beyond(x, n):
    """A bound that is negative for short rows and positive for long ones."""
    return np.sum(x[:, : x.shape[1] - 5] ** 2)


def test_the_sign_of_a_slice_bound_is_checked():
    rng = np.random.default_rng(1)
    df = ys.simplegrad(tail_beyond, rng.normal(size=(2, 9)), 0)
    assert ": M - 5]" in df.source
    for shape in ((4, 9), (3, 12), (1, 5)):
        _agrees(df, tail_beyond, (rng.normal(size=shape), 0))
    with pytest.raises(ControlFlowChanged):  # at 3 columns, `:M - 5` counts from the end
        df(rng.normal(size=(2, 3)), 0)


def written_by_size(x, v):
    H = v.shape[0]
    out = np.zeros_like(x)
    out[:H] = v * 2
    out[H:2 * H] += np.sin(v)
    return np.sum(out * x)


def test_a_write_into_a_slice_bounded_by_a_size_serves_every_size():
    rng = np.random.default_rng(0)
    df = ys.simplegrad(written_by_size, rng.normal(size=7), rng.normal(size=3))
    assert "out[:H] = v * 2" in df.source
    for n, h in ((7, 3), (9, 4), (4, 2), (2, 1)):
        _agrees(df, written_by_size, (rng.normal(size=n), rng.normal(size=h)))
    with pytest.raises(ControlFlowChanged):  # no room for the second write
        df(rng.normal(size=5), rng.normal(size=3))
