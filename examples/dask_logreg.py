"""Logistic regression on data that lives in a Dask array, on a local cluster.

    pip install -e ".[dask]"
    python examples/dask_logreg.py

The data (400,000 rows of 20 features, drawn on the workers) stays on the
workers (`dask.persist`): `ys.grad` writes the gradient for Dask arrays, tracing it on a
sample of their first rows, and gives the value and gradients back lazy.
`ys.compute` computes them together, in one pass over the data, and the
weights, NumPy arrays on the client, are updated with `ys.update`. The
gradient is asked for the weights alone (`wrt`): the data's own would be as
large as the data.
"""

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import yota_src as ys


def loss(w, b, X, y):
    p = 1 / (1 + np.exp(-(X @ w + b)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def data(rows: int, features: int, chunk: int):
    """Features and labels drawn on the workers, chunk by chunk."""
    X = da.random.default_rng(0).normal(size=(rows, features), chunks=(chunk, features))
    noise = da.random.default_rng(1).normal(size=rows, chunks=chunk)
    y = (X @ np.linspace(-1.0, 1.0, features) + noise > 0).astype(float)
    return X, y


def main():
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster):
        X, y = dask.persist(*data(400_000, 20, 25_000))  # 16 chunks, kept on the workers
        w, b = np.zeros(20), 0.0
        step = lambda old, grad: old - 1.0 * grad  # noqa: E731 - gradient descent
        for iteration in range(8):
            value, g = ys.compute(*ys.grad(loss, w, b, X, y, wrt=("w", "b")))
            w = ys.update(w, g[0], step)
            b = ys.update(b, g[1], step)
            print(f"step {iteration}: loss {value:.4f}")


if __name__ == "__main__":
    main()
