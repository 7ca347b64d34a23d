"""A logistic-regression gradient over 4,000,000 x 20 rows: on a Dask
LocalCluster of two worker processes, against NumPy with the data in the
client's memory.

    pip install -e ".[dask]"
    python benchmarks/bench_dask.py [--rows 4000000] [--repeats 5]

Reported: generation (the first call), the median time of one value and
gradient (ys.grad, then ys.compute for Dask; ys.grad for NumPy), the data's
size, and the peak memory the client allocates while one gradient is
computed (tracemalloc, which sees NumPy's buffers; the NumPy client also
holds the data itself). The Dask data is drawn on the workers and kept there
(`persist`); the NumPy data is the same, computed into the client. Repeats
alternate between the two. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import yota_src as ys

WRT = ("w", "b")  # the parameters: the data's own gradients would be data-sized


def loss(w, b, X, y):
    p = 1 / (1 + np.exp(-(X @ w + b)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def data(rows: int, features: int, chunks: int):
    X = da.random.default_rng(0).normal(size=(rows, features), chunks=(rows // chunks, features))
    noise = da.random.default_rng(1).normal(size=rows, chunks=rows // chunks)
    y = (X @ np.linspace(-1.0, 1.0, features) + noise > 0).astype(float)
    return X, y


def timed(call) -> tuple[float, float]:
    """(seconds, peak megabytes the client allocated) for one call."""
    tracemalloc.start()
    start = time.perf_counter()
    call()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    rows, features = options.rows, options.features
    w, b = np.linspace(-0.5, 0.5, features), np.float64(0.1)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster):
        X, y = dask.persist(*data(rows, features, chunks=16))
        Xn, yn = dask.compute(X, y)  # the same data, in the client's memory, for NumPy
        runs = {"Dask, 2 workers": lambda: ys.compute(*ys.grad(loss, w, b, X, y, wrt=WRT)),
                "NumPy in memory": lambda: ys.grad(loss, w, b, Xn, yn, wrt=WRT)}
        generation = {name: timed(run)[0] for name, run in runs.items()}
        value, g = runs["Dask, 2 workers"]()
        want_value, want = runs["NumPy in memory"]()
        assert np.isclose(value, want_value, rtol=1e-10) and all(
            np.allclose(a, b, rtol=1e-9, atol=1e-15) for a, b in zip(g[:2], want[:2]))
        samples = {name: [] for name in runs}
        for _ in range(options.repeats):
            for name, run in runs.items():
                samples[name].append(timed(run))
    size = Xn.nbytes / 2**20 + yn.nbytes / 2**20
    print(f"logistic regression, {rows:,} x {features} (the data: {size:,.0f} MB), "
          f"{options.repeats} repeats, medians")
    print("| | first call (generation) | one gradient | ratio | client peak MB "
          "(one gradient) | data in the client's memory |")
    print("|---|---|---|---|---|---|")
    base = statistics.median(seconds for seconds, _ in samples["NumPy in memory"])
    for name, measured in samples.items():
        seconds = statistics.median(s for s, _ in measured)
        peak = max(p for _, p in measured)
        held = "0 MB (on the workers)" if name.startswith("Dask") else f"{size:,.0f} MB"
        print(f"| {name} | {generation[name]:.2f} s | {seconds:.3f} s | {seconds / base:.2f} | "
              f"{peak:,.1f} | {held} |")


if __name__ == "__main__":
    main()
