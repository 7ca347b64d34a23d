"""Gradients over Dask arrays: traced on a small sample of them
(tracing/samples.py), written for Dask (codegen/respell.py), lazy results
equal to NumPy's; on the local scheduler and on a LocalCluster of two worker
processes, the data made on the workers. What no module can serve, refused."""

import re

import golden_programs
import numpy as np
import pytest
from conftest import cupy_standin, run_without_yota_src

import yota_src as ys
from yota_src.core.values import rebuild
from yota_src.errors import ControlFlowChanged, UnsupportedSyntaxError
from yota_src.tracing.array_library import MixedArrayLibraries, UnknownSizes

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

# The golden programs Dask serves: every operation they need has a dask.array
# counterpart. softmax_xent's gradient scatters into rows (np.add.at), which
# Dask cannot; newton_sqrt takes a float alone.
SERVED = ("polynomial", "rnn", "logistic", "layer_norm", "attention", "mlp", "branch", "huber",
          "reuse", "user_rule", "row_scores")
REFUSED = {"softmax_xent": "np.add.at"}


def lazy(args: tuple, rows: int = 2) -> tuple:
    """The float arrays among `args` (in structs too) as Dask arrays of
    about `rows` chunks along their first axis."""
    def leaf(_path, value):
        if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
            return value
        chunks = tuple(max(1, -(-size // rows)) if axis == 0 else size
                       for axis, size in enumerate(value.shape))
        return da.from_array(value, chunks=chunks)
    return tuple(rebuild(arg, leaf) for arg in args)


def assert_same(got, want, rtol=1e-10):
    if isinstance(want, dict):
        assert set(got) == set(want)
        for key in want:
            assert_same(got[key], want[key], rtol)
    elif want is None:
        assert got is None
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-12)


def logistic(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_data(rows: int, columns: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (0.1 * rng.normal(size=columns), rng.normal(size=(rows, columns)),
            (rng.random(rows) > 0.5) * 1.0)


def nothing_computed(*_args, **_kwargs):
    raise AssertionError("the generated code computed a Dask array")


@pytest.mark.parametrize("name", SERVED)
def test_golden_programs_over_dask_equal_numpy(name):
    fn, args, wrt = golden_programs.case(name)
    ys.grad(fn, *lazy(args), wrt=wrt)  # generated: a sample is computed
    with dask.config.set(scheduler=nothing_computed if name != "branch" else "sync"):
        value, g = ys.grad(fn, *lazy(args), wrt=wrt)  # (branch's `if s > 0`: computed)
    assert isinstance(value, da.Array)  # lazy until computed
    value, g = ys.compute(value, g)
    want_value, want = ys.grad(fn, *args, wrt=wrt)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    for got, expected in zip(g, want):
        assert_same(got, expected)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_golden_program_dask_cannot_serve_is_refused_naming_the_operation(name):
    fn, args, wrt = golden_programs.case(name)
    with pytest.raises(UnsupportedSyntaxError, match=REFUSED[name].replace(".", r"\.")):
        ys.grad(fn, *lazy(args), wrt=wrt)


def test_the_trace_reads_the_first_rows_only():
    """Generating the code computes a sample of the first chunk, not the data."""
    read = []

    def noted(block, block_info=None):
        read.append(block_info[0]["chunk-location"])
        return block

    w, X, y = logistic_data(1600)
    Xd = da.from_array(X, chunks=(100, 6)).map_blocks(noted, dtype=X.dtype)
    value, g = ys.grad(logistic, w, Xd, da.from_array(y, chunks=100))
    assert read == [(0, 0)]  # the sample's rows, all in the first chunk
    assert all(isinstance(each, da.Array) for each in (value, *g))
    value, g = ys.compute(value, g)
    assert len(read) == 1 + 16  # computed once, every chunk read once, for value and gradients
    for got, want in zip((value, *g), ys.simplegrad(logistic, w, X, y)(w, X, y)):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_one_module_serves_every_size_and_chunking():
    w, X, y = logistic_data(300)
    df = ys.simplegrad(logistic, w, da.from_array(X, chunks=30), da.from_array(y, chunks=30))
    assert "type(X) is not da.Array" in df.source and "import dask.array as da" in df.source
    assert "(X, y: Dask arrays, the results lazy)" in df.source
    for rows, chunk, columns in ((300, 30, 6), (1000, 128, 6), (17, 5, 3), (40, 40, 30)):
        w, X, y = logistic_data(rows, columns, seed=rows)
        got = dask.compute(*df(w, da.from_array(X, chunks=chunk), da.from_array(y, chunks=chunk)))
        for a, b in zip(got, ys.simplegrad(logistic, w, X, y)(w, X, y)):
            np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("rows", [1, 2, 63, 64, 65, 66, 130, 1000])
def test_sizes_around_the_samples_cut(rows):
    w, X, y = logistic_data(rows, columns=70)
    value, g = ys.compute(*ys.grad(logistic, w, da.from_array(X, chunks=32),
                                   da.from_array(y, chunks=32)))
    want_value, want = ys.grad(logistic, w, X, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    for got, expected in zip(g, want):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)


def test_sizes_twice_one_another_stay_so_in_the_sample():
    """`z` of 2N rows beside `X` of N: the sample keeps their ratio."""
    def paired(w, X, z):
        r = X @ w
        return np.mean((np.concatenate([r, 2 * r]) - z) ** 2)

    w, X, _ = logistic_data(1000)
    z = np.random.default_rng(1).normal(size=2000)
    value, g = ys.compute(*ys.grad(paired, w, da.from_array(X, chunks=100),
                                   da.from_array(z, chunks=200)))
    want_value, want = ys.grad(paired, w, X, z)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(g[2], want[2], rtol=1e-10, atol=1e-15)


def test_numpy_arrays_beside_dask_ones_join_the_graph():
    """Small weights as NumPy arrays, the data as Dask's: the weights'
    gradients come back lazy too, computed with the rest by ys.compute."""
    w, X, y = logistic_data(200)
    value, g = ys.grad(logistic, w, da.from_array(X, chunks=50), y)
    assert isinstance(g[0], da.Array) and isinstance(g[1], da.Array)
    value, g = ys.compute(value, g)
    assert type(g[0]) is np.ndarray and g.source
    np.testing.assert_allclose(g[0], ys.grad(logistic, w, X, y)[1][0], rtol=1e-10)
    # and as ys.update takes them
    before = w.copy()
    ys.update(w, g[0], lambda old, grad: old - 0.5 * grad)
    np.testing.assert_allclose(w, before - 0.5 * g[0])


def test_a_numpy_scalar_beside_dask_arrays_keeps_its_gradient_lazy():
    """np.float64's gradient is made an array, which np.array would do by
    computing the graph: the Dask module makes it with Dask."""
    def affine(w, b, X):
        return np.mean(np.tanh(X @ w + b))

    w, X, _ = logistic_data(200)
    args = (w, np.float64(0.3), da.from_array(X, chunks=50))
    ys.grad(affine, *args)
    with dask.config.set(scheduler=nothing_computed):
        value, g = ys.grad(affine, *args)
    assert isinstance(g[1], da.Array)
    _, g = ys.compute(value, g)
    np.testing.assert_allclose(g[1], ys.grad(affine, w, np.float64(0.3), X)[1][1], rtol=1e-10)


def test_float32_data_and_numpy_scalars_compute_nothing_when_called():
    def halved(w, X, y):
        return np.mean((X @ w - y) ** 2) * np.float64(0.5)

    w, X, y = (a.astype(np.float32) for a in logistic_data(300))
    args = (w, da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    ys.grad(halved, *args)
    with dask.config.set(scheduler=nothing_computed):
        value, g = ys.grad(halved, *args)
    value, g = ys.compute(value, g)
    want_value, want = ys.grad(halved, w, X, y)
    assert g[0].dtype == want[0].dtype
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    np.testing.assert_allclose(g[0], want[0], rtol=1e-5)


def test_what_dask_lacks_serves_numpy_values_beside_it():
    """A weight's np.sort is NumPy's, on NumPy values: Dask need not have it.
    Where a value of the data reaches it, it is refused."""
    def regularised(w, X):
        return np.mean(X @ w) + np.sum(np.sort(w) ** 2)

    def sorted_data(w, X):
        return np.mean(np.sort(X @ w)[::-1][:3])

    w, X, _ = logistic_data(300)
    value, g = ys.compute(*ys.grad(regularised, w, da.from_array(X, chunks=50)))
    want_value, want = ys.grad(regularised, w, X)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(g[0], want[0], rtol=1e-10)
    with pytest.raises(UnsupportedSyntaxError, match=r"needs np\.sort, which the Dask"):
        ys.grad(sorted_data, w, da.from_array(X, chunks=50))


def test_a_wrong_argument_is_refused_naming_dask():
    w, X, y = logistic_data(200)
    df = ys.simplegrad(logistic, w, da.from_array(X, chunks=50), da.from_array(y, chunks=50))
    with pytest.raises(ValueError, match=r"X .*a dask\.array\.Array, got numpy\.ndarray"):
        df(w, X, da.from_array(y, chunks=50))


def test_dask_arrays_of_unknown_sizes_are_refused():
    w, X, y = logistic_data(200)
    Xd = da.from_array(X, chunks=50)
    kept = Xd[Xd[:, 0] > 0]  # how many rows: known once computed
    with pytest.raises(UnknownSizes, match=r"X is a Dask array of unknown chunk sizes") as error:
        ys.grad(logistic, w, kept, da.from_array(y, chunks=50)[:1])
    assert "X.compute_chunk_sizes()" in str(error.value)


def test_random_draws_and_other_transforms_are_refused():
    def noisy(w, X):
        rng = np.random.default_rng(0)
        return np.sum((X @ w) * rng.normal(size=X.shape[0]))

    w, X, _ = logistic_data(100)
    Xd = da.from_array(X, chunks=25)
    with pytest.raises(UnsupportedSyntaxError, match="draws random numbers"):
        ys.grad(noisy, w, Xd)
    for what, call in [("ys.vjp", lambda: ys.vjp(np.tanh, Xd)),
                       ("ys.jvp", lambda: ys.jvp(logistic_sum, (w, Xd), (w,))),
                       ("ys.hvp", lambda: ys.hvp(cubed, Xd, X)),
                       ("ys.hessian", lambda: ys.hessian(cubed, Xd)),
                       ("ys.jacobian", lambda: ys.jacobian(np.tanh, Xd)),
                       ("ys.trace", lambda: ys.trace(cubed, Xd)),
                       ("ys.check_grad", lambda: ys.check_grad(logistic_sum, w, Xd)),
                       ("transform='hvp')", lambda: ys.derivative(cubed, Xd, Xd, transform="hvp"))]:
        with pytest.raises(UnsupportedSyntaxError, match=re.escape(what) + " over Dask"):
            call()


def logistic_sum(w, X):
    return np.sum(np.tanh(X @ w))


def cubed(X):
    return np.sum(X ** 3)


def test_what_the_code_cannot_read_at_run_time_is_refused():
    def per_row(w, X):
        return np.sum(X @ w) / float(X.shape[0])  # a size used as a value

    w, X, _ = logistic_data(300)
    with pytest.raises(UnsupportedSyntaxError, match="holds one of the data's sizes"):
        ys.grad(per_row, w, da.from_array(X, chunks=50))


def test_a_failure_on_the_sample_says_it_is_the_sample():
    def row(w, X):
        return X[99] @ w

    with pytest.raises(UnsupportedSyntaxError, match=r"fails on the sample .*\(X \(65, 6\)\): "
                       "IndexError") as error:
        ys.grad(row, np.ones(6), da.from_array(logistic_data(300)[1], chunks=50))
    assert "first rows" in str(error.value)
    with pytest.raises(UnsupportedSyntaxError, match="size 4 is different from 6"):
        ys.grad(logistic, np.ones(4), *map(da.from_array, logistic_data(300)[1:]))


def test_a_value_of_the_data_read_as_a_number_is_refused():
    def scaled(w, X):
        return np.sum(X @ w) * np.std(X[:, 0]).item()

    with pytest.raises(UnsupportedSyntaxError, match=r"as a Python number \(`\.item\(\)`"):
        ys.grad(scaled, np.ones(6), da.from_array(logistic_data(300)[1], chunks=50))


def test_a_numpy_array_of_n_times_t_rows_beside_dask_data_of_n():
    def unrolled(w, X3, t):
        return np.mean((X3.reshape(-1, X3.shape[-1]) @ w - t) ** 2)

    rng = np.random.default_rng(6)
    w, X3, t = rng.normal(size=3), rng.normal(size=(120, 5, 3)), rng.normal(size=600)
    value, g = ys.compute(*ys.grad(unrolled, w, da.from_array(X3, chunks=(30, 5, 3)), t))
    want_value, want = ys.grad(unrolled, w, X3, t)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(g[0], want[0], rtol=1e-10)


def test_a_dask_array_from_outside_the_arguments_is_refused():
    X = da.from_array(logistic_data(100)[1], chunks=25)

    def outside(w):
        return np.mean((X @ w) ** 2)

    with pytest.raises(UnsupportedSyntaxError, match="X is a Dask array read from outside"):
        ys.grad(outside, np.ones(6))


def test_a_decision_the_sample_took_the_other_way_says_what_to_do():
    def either(w, X):
        r = X @ w
        if np.sum(r) > 0:
            return np.mean(r ** 2)
        return np.mean(np.abs(r))

    X = np.vstack([-np.ones((100, 6)), 5 * np.ones((900, 6))])  # the first rows: negative
    for dynamic in (False, True):
        with pytest.raises(ControlFlowChanged, match="sample of their first rows.*np.where"):
            ys.grad(either, np.ones(6), da.from_array(X, chunks=100), dynamic=dynamic)


def test_dask_beside_cupy_is_refused():
    w, X, y = logistic_data(100)
    with cupy_standin() as cupy, \
            pytest.raises(MixedArrayLibraries, match="CuPy array and .* a Dask array"):
        ys.grad(logistic, cupy.asarray(w), da.from_array(X, chunks=25),
                da.from_array(y, chunks=25))


def test_saved_module_runs_with_dask_and_numpy_alone(tmp_path):
    w, X, y = logistic_data(300)
    df = ys.simplegrad(logistic, w, da.from_array(X, chunks=30), da.from_array(y, chunks=30))
    df.save(tmp_path / "grad_logistic_dask.py")
    expected = ys.simplegrad(logistic, w, X, y)(w, X, y)
    out = run_without_yota_src("""
        import dask, dask.array as da, numpy as np
        from grad_logistic_dask import grad_logistic
        rng = np.random.default_rng(0)
        w = 0.1 * rng.normal(size=6)
        X, y = rng.normal(size=(300, 6)), (rng.random(300) > 0.5) * 1.0
        value, *grads = grad_logistic(w, da.from_array(X, chunks=16), da.from_array(y, chunks=16))
        assert all(isinstance(g, da.Array) for g in grads), [type(g) for g in grads]
        print(repr(float(value.compute())), repr(float(grads[0].compute()[0])))
    """, tmp_path).split()
    assert float(out[0]) == pytest.approx(float(expected[0]), rel=1e-12)
    assert float(out[1]) == pytest.approx(float(expected[1][0]), rel=1e-10)


# --- on a cluster ------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes, and a client of it (the
    default scheduler while the tests below run)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as connected:
        yield connected


def mlp(W1, b1, W2, X, Y):
    h = np.maximum(X @ W1 + b1, 0.0)
    return np.mean((h @ W2 - Y) ** 2)


def test_logistic_regression_over_16_chunks_on_a_cluster(client, tmp_path):
    rows = 16 * 250
    X = da.random.default_rng(0).normal(size=(rows, 8), chunks=(250, 8))  # made on the workers
    y = (da.random.default_rng(1).random(rows, chunks=250) > 0.5).astype(float)
    w = 0.1 * np.random.default_rng(2).normal(size=8)
    assert X.numblocks == (16, 1)
    value, g = ys.compute(*ys.grad(logistic, w, X, y))
    # the reference: the same data, brought to the client for NumPy
    Xn, yn = dask.compute(X, y)
    want_value, want = ys.grad(logistic, w, Xn, yn)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    for got, expected in zip(g, want):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-15)
    # and through a saved module, in a process without yota_src, on the cluster
    ys.simplegrad(logistic, w, X, y).save(tmp_path / "grad_logistic_cluster.py")
    out = run_without_yota_src(f"""
        import dask, dask.array as da, numpy as np
        from distributed import Client
        from grad_logistic_cluster import grad_logistic
        with Client({client.scheduler.address!r}):
            X = da.random.default_rng(0).normal(size=({rows}, 8), chunks=(250, 8))
            y = (da.random.default_rng(1).random({rows}, chunks=250) > 0.5).astype(float)
            w = 0.1 * np.random.default_rng(2).normal(size=8)
            value, dw, dX, dy = dask.compute(*grad_logistic(w, X, y))
        print(repr(float(value)), *map(repr, dw.tolist()))
    """, tmp_path, timeout=120).split()
    assert float(out[0]) == pytest.approx(float(want_value), rel=1e-10)
    np.testing.assert_allclose([float(each) for each in out[1:]], want[0], rtol=1e-10)


def test_mlp_over_16_chunks_on_a_cluster(client):
    rows = 16 * 200
    X = da.random.default_rng(3).normal(size=(rows, 10), chunks=(200, 10))
    Y = da.random.default_rng(4).normal(size=(rows, 2), chunks=(200, 2))
    rng = np.random.default_rng(5)
    params = (0.3 * rng.normal(size=(10, 32)), np.zeros(32), 0.3 * rng.normal(size=(32, 2)))
    value, g = ys.compute(*ys.grad(mlp, *params, X, Y))
    Xn, Yn = dask.compute(X, Y)
    want_value, want = ys.grad(mlp, *params, Xn, Yn)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    for got, expected in zip(g, want):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert g[3].shape == (rows, 10)  # the data's gradient too, computed on the workers
