"""Generated gradients against hand-written NumPy, measured side by side.

    python benchmarks/bench_affine.py [--repeats 30]

Each case times the hand-written gradient and the generated one alternately
in the same run, reporting the median of the repeats and their ratio (lower
is better; 1.00 means as fast as hand-written). It also reports what a
cached `ys.grad` call adds on top of calling the generated function.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import statistics
import sys
import time

import numpy as np

import yota_src as ys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def affine_by_hand(W, b, x):
    out = np.sum(W @ x + b[:, None])
    dy = np.ones((W.shape[0], x.shape[1]))
    return out, dy @ x.T, np.sum(dy, axis=1), W.T @ dy


def mlp_by_hand(p, x, labels):
    h = np.tanh(p.W1 @ x + p.b1[:, None])
    logits = p.W2 @ h + p.b2[:, None]
    shifted = logits - logits.max(axis=0, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(axis=0, keepdims=True)
    n = labels.shape[0]
    out = -np.mean((shifted - np.log(total))[labels, np.arange(n)])
    dlogits = exp / total
    dlogits[labels, np.arange(n)] -= 1.0
    dlogits /= n
    dh = p.W2.T @ dlogits
    dz = dh * (1 - h * h)
    grads = {("W1",): dz @ x.T, ("b1",): dz.sum(axis=1), ("W2",): dlogits @ h.T,
             ("b2",): dlogits.sum(axis=1)}
    return out, grads, p.W1.T @ dz


def median_time(fn, args, repeats, inner):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn(*args)
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def compare(name, hand, generated, args, repeats, inner):
    # interleave the two so load on the shared machine hits both alike
    hand_times, generated_times = [], []
    for _ in range(repeats):
        hand_times.append(median_time(hand, args, 1, inner))
        generated_times.append(median_time(generated, args, 1, inner))
    h, g = statistics.median(hand_times), statistics.median(generated_times)
    print(f"{name:<28} hand {h * 1e6:9.1f} us   generated {g * 1e6:9.1f} us   ratio {g / h:5.2f}")
    return g / h


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    options = parser.parse_args()

    affine, mlp = load("affine"), load("mlp")
    args = affine.example()
    df = ys.simplegrad(affine.loss, *args)
    reference, generated = affine_by_hand(*args), df(*args)
    assert all(np.allclose(a, b) for a, b in zip(reference, generated))
    compare("affine 128x784 @ 784x100", affine_by_hand, df, args, options.repeats, 20)

    margs = mlp.example()
    dm = ys.simplegrad(mlp.loss, *margs)
    ref, gen = mlp_by_hand(*margs), dm(*margs)
    assert np.isclose(ref[0], gen[0]) and all(np.allclose(ref[1][k], gen[1][k]) for k in ref[1])
    compare("mlp 8-16-3, batch 32", mlp_by_hand, lambda *a: dm(*a), margs, options.repeats, 200)

    ys.grad(mlp.loss, *margs)
    compare("ys.grad cache hit vs direct", lambda *a: dm(*a),
            lambda *a: ys.grad(mlp.loss, *a), margs, options.repeats, 200)


if __name__ == "__main__":
    main()
