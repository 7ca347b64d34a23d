"""Long unrolled loops: linear generation time and memory, no deep recursion;
large arrays from outside never written into the module."""

import importlib.util
import sys
import time
import tracemalloc

import helpers_scale
import numpy as np
import pytest

import yota_src as ys
from yota_src.codegen import LITERAL_LIMIT
from yota_src.codegen.module import ModuleWriter
from yota_src.errors import UnsaveableError
from yota_src.tracing.traced import ExampleValues


def recurrence(x, steps):
    n = x.shape[0]
    h = 0.0
    for t in range(steps):
        h = 0.9 * h + x[t % n]
    return h


def rnn_over_rows(W, x, h):
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + x[t])
    return np.sum(h)


def element_writes(x, count):
    a = np.zeros(x.shape[0])
    for i in range(count):
        a[i] += x[i] * x[i]
    return np.sum(a * x)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _generation_seconds(fn, *args) -> float:
    start = time.process_time()  # this process's CPU: other jobs on the machine do not count
    ys.simplegrad(fn, *args)
    return time.process_time() - start


def _generation_peak(fn, *args) -> int:
    tracemalloc.start()
    try:
        ys.simplegrad(fn, *args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_ten_thousand_steps_generate_in_linear_time_without_deep_recursion(rng):
    x = rng.standard_normal(50)
    short = _generation_seconds(recurrence, x, 1_000)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + 250)  # no walk may go deeper with the length
    try:
        start = time.process_time()
        df = ys.simplegrad(recurrence, x, 10_000)
        long = time.process_time() - start
    finally:
        sys.setrecursionlimit(limit)
    assert long < 30 * short, (short, long)  # 10x the steps: about 10x the time
    value, dx, _ = df(x, 10_000)
    weights = 0.9 ** (9_999 - np.arange(10_000))  # h = sum over t of 0.9**(T-1-t) x[t % n]
    assert np.isclose(value, weights @ x[np.arange(10_000) % 50])
    assert np.allclose(dx, np.bincount(np.arange(10_000) % 50, weights))


def test_generation_time_grows_linearly_with_the_steps(rng):
    x = rng.standard_normal(50)
    short = min(_generation_seconds(recurrence, x, 100) for _ in range(2))
    long = _generation_seconds(recurrence, x, 1_000)
    assert long < 30 * short, (short, long)


def test_fresh_names_cost_the_same_at_any_suffix():
    """`h`, `h_2`, ... `h_20000`: each name is found where the last one was
    left, not by trying every suffix again."""
    _, tape = ys.trace(recurrence, np.ones(3), 2)

    def seconds(count: int) -> float:
        writer = ModuleWriter(tape, "forward")
        start = time.process_time()
        names = [writer.names.fresh("h") for _ in range(count)]
        assert names[-1] == f"h_{count}"
        return time.process_time() - start

    short = min(seconds(2_000) for _ in range(3))
    assert seconds(20_000) < 30 * max(short, 1e-3)


def test_an_input_gradient_written_row_by_row_takes_linear_memory(rng):
    """Each step's `x[t]` adds its gradient into one (T, 64) buffer: kept
    whole at every step, that is T * T * 64 numbers."""
    W = rng.standard_normal((64, 64)) * 0.1
    peaks = [_generation_peak(rnn_over_rows, W, rng.standard_normal((steps, 64)), np.zeros(64))
             for steps in (50, 200)]
    assert peaks[1] < 8 * peaks[0], peaks  # 4x the steps: about 4x the memory


@pytest.mark.slow
def test_an_array_written_element_by_element_keeps_one_whole_version(rng):
    """100 writes into a local array: kept whole, each version would cost the
    array's size again."""
    small, large = (_generation_peak(element_writes, rng.standard_normal(n), 100)
                    for n in (1_000, 16_000))
    assert large - small < 30 * 15_000 * 8, (small, large)  # not one copy per write


def test_element_writes_differentiate_correctly(rng):
    ys.check_grad(element_writes, rng.standard_normal(9), 7)


def _versions(rng, n_versions: int, shape=(5, 4)):
    """Random element writes from random earlier versions: (truth, store)."""
    ops = [object() for _ in range(n_versions)]
    truth = {ops[0]: rng.standard_normal(shape)}
    store = ExampleValues()
    store[ops[0]] = truth[ops[0]].copy()
    indices = [(1, 2), (slice(1, 4), 0), (Ellipsis, 3), ([0, 0, 2], [1, 1, 3]),
               rng.standard_normal(shape) > 0, (None, 4)]
    for k in range(1, n_versions):
        older = ops[rng.integers(0, k)]
        index = indices[rng.integers(0, len(indices))]
        value = truth[older].copy()
        np.add.at(value, index, rng.standard_normal(value[index].shape))
        truth[ops[k]] = value
        store[ops[k]] = value.copy()
        store.supersede(older, ops[k], index)
    return ops, truth, store


@pytest.mark.parametrize("seed", range(5))
def test_example_values_of_element_writes_read_back_exactly(seed):
    rng = np.random.default_rng(seed)
    ops, truth, store = _versions(rng, 30)
    for op in [*reversed(ops), *rng.permutation(len(ops)).tolist()]:
        op = ops[op] if isinstance(op, int) else op
        assert np.array_equal(store[op], truth[op])


def test_example_values_keep_one_whole_version_of_a_chain():
    ops = [object() for _ in range(1_000)]
    store = ExampleValues()
    store[ops[0]] = np.zeros(1_000)
    for k in range(1, 1_000):
        value = store[ops[k - 1]].copy()
        value[k] = k
        store[ops[k]] = value
        store.supersede(ops[k - 1], ops[k], k)
    whole = [v for v in store._values.values() if isinstance(v, np.ndarray)]
    assert len(whole) == 1
    assert store[ops[10]][10] == 10 and store[ops[10]][11] == 0


# -- large arrays from outside --------------------------------------------------

def test_a_large_global_array_is_read_from_its_module_not_written_into_it():
    df = ys.simplegrad(helpers_scale.layer, np.ones(20))
    assert helpers_scale.W.size > LITERAL_LIMIT
    assert "W = helpers_scale.W\n" in df.source
    assert "import helpers_scale" in df.source
    assert "np.array(" not in df.source
    assert "each call reads them from their modules" in " ".join(df.source.split())
    ys.check_grad(helpers_scale.layer, np.linspace(-1, 1, 20))


def test_an_array_at_the_limit_stays_a_literal():
    source = ys.simplegrad(helpers_scale.picks, np.ones(20)).source
    assert helpers_scale.EDGE.size == LITERAL_LIMIT
    assert "EDGE = np.array([0.0, 0.00390625," in source


def test_an_array_reached_through_attributes_and_items_is_read_by_that_path():
    source = ys.simplegrad(helpers_scale.deep, np.ones(20)).source
    assert "CFG_layers_0 = helpers_scale.CFG.layers[0]" in source
    assert "CFG_layers_1 = helpers_scale.CFG.layers[1]" in source


def _saved(df, tmp_path, name):
    path = tmp_path / f"{name}.py"
    df.save(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, df.__name__), path


def test_a_saved_module_stays_small_and_checks_the_array_it_reads(tmp_path, monkeypatch):
    x = np.linspace(-1, 1, 20)
    df = ys.simplegrad(helpers_scale.layer, x)
    saved, path = _saved(df, tmp_path, "grad_layer")
    assert path.stat().st_size < 4_000
    for ours, theirs in zip(saved(x), df(x)):
        assert np.allclose(ours, theirs)
    monkeypatch.setattr(helpers_scale, "W", np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"generated for helpers_scale\.W float64 \(20, 20\), "
                                         r"got ndarray float64 \(3, 3\)"):
        saved(x)


def test_a_large_integer_array_is_checked_by_its_contents(tmp_path, monkeypatch):
    x = np.linspace(-1, 1, 20)
    saved, _ = _saved(ys.simplegrad(helpers_scale.picks, x), tmp_path, "grad_picks")
    saved(x)
    monkeypatch.setattr(helpers_scale, "LABELS", helpers_scale.LABELS + 1)
    with pytest.raises(ValueError, match=r"helpers_scale\.LABELS with other contents"):
        saved(x)


def test_a_large_array_no_import_reaches_is_bound_live_and_saving_refuses(tmp_path, rng):
    V = rng.standard_normal((20, 20))
    inner = helpers_scale.closure_over(V)
    x = rng.standard_normal(20)
    df = ys.simplegrad(inner, x)
    assert "V = None" in df.source
    assert np.allclose(df(x)[1], V.T @ np.cos(V @ x))
    with pytest.raises(UnsaveableError, match=r"reads the array V \(float64 array \(20, 20\)") \
            as refused:
        df.save(tmp_path / "grad_inner.py")
    assert "Pass V to the function as an argument" in refused.value.hint
    assert not (tmp_path / "grad_inner.py").exists()


def test_a_traced_function_is_not_kept_alive_by_having_been_traced():
    """A closure made per model (over the model's arrays) and differentiated
    with simplegrad leaves nothing behind once the caller drops it."""
    import gc
    import weakref

    def make(scale):
        weights = np.full(3, scale)

        def loss(x):
            return np.sum(np.tanh(x * weights))
        return loss, weakref.ref(weights)

    alive = []
    for scale in range(4):
        loss, weights = make(float(scale))
        gradient = ys.simplegrad(loss, np.ones(3))
        gradient(np.ones(3))
        alive.append(weights)
        del loss, gradient
    gc.collect()
    assert [weights() for weights in alive] == [None] * 4
