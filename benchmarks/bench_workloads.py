"""Value and all gradients of each workload in workloads.py, against a
careful hand-written NumPy gradient, measured side by side in one process.

    python benchmarks/bench_workloads.py [--repeats 30] [--only RNN]

For each workload: the forward pass alone, the hand-written gradient,
`simplegrad`'s function and a cached `ys.grad` call, and, where installed
(`pip install -e ".[bench]"`), HIPS autograd, `jax.jit(jax.value_and_grad)`
and PyTorch on the CPU; with NumExpr installed (`pip install -e ".[fast]"`),
a workload with an argument of 2^16 elements or more is also timed through
`ys.grad` with its fused path forced on ("grad() fused", passes/fuse.py),
to see whether it pays on this machine. Each repeat times every contender once, in turn
(interleaved, so a noisy machine slows them alike); the report gives
medians and their ratio to hand-written (lower is better). Every gradient is
checked against the hand-written one before it is timed. Also: generation
time of `simplegrad`, and the peak memory one gradient call allocates
(tracemalloc, which sees NumPy's buffers). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers  # noqa: E402
import workloads  # noqa: E402

import yota_src as ys  # noqa: E402

try:  # an older yota-src, measured for comparison, has no fused path
    from yota_src.passes import fuse
except ImportError:
    fuse = None


def leaves(gradient) -> list:
    """A gradient's arrays in a fixed order: a struct's by path."""
    if gradient is None:
        return []
    if isinstance(gradient, dict):
        return [np.asarray(gradient[key]) for key in sorted(gradient)]
    return [np.asarray(gradient)]


def same(result, expected) -> bool:
    value, *grads = result
    value0, *grads0 = expected
    if not np.allclose(value, value0, rtol=1e-9):
        return False
    return all(len(leaves(g)) == len(leaves(g0)) and all(
        np.allclose(a, b, rtol=1e-7, atol=1e-10) for a, b in zip(leaves(g), leaves(g0)))
        for g, g0 in zip(grads, grads0) if g0 is not None)


def contenders(work) -> dict:
    args = work.args()
    built = time.perf_counter()
    df = ys.simplegrad(work.loss, *args)
    generation = time.perf_counter() - built
    found = {
        "forward": lambda: work.loss(*args),
        "hand-written": lambda: work.by_hand(*args),
        "simplegrad": lambda: df(*args),
        "grad()": lambda: ys.grad(work.loss, *args),  # timed as a training loop calls it
    }
    found["grad()"].checked = lambda: _flat_grad(work.loss, args)  # (value, *gradients)
    large = fuse is not None and any(np.size(arg) >= fuse.MIN_ELEMENTS for arg in args)
    if large and fuse.AVAILABLE:
        fused = _fused_copy(work.loss, args)
        found["grad() fused"] = lambda: ys.grad(fused, *args)
        found["grad() fused"].checked = lambda: _flat_grad(fused, args)
    found.update(peers.peers(work, args))
    return found, generation


def _fused_copy(loss, args):
    """`loss` again (its own cache entry), its gradient generated with the
    fused path forced on (`YOTA_SRC_FUSE=1`), whatever this machine measures."""
    copy = types.FunctionType(loss.__code__, loss.__globals__, loss.__name__,
                              loss.__defaults__, loss.__closure__)
    before = os.environ.get("YOTA_SRC_FUSE")
    os.environ["YOTA_SRC_FUSE"] = "1"
    try:
        ys.grad(copy, *args)
    finally:
        if before is None:
            del os.environ["YOTA_SRC_FUSE"]
        else:
            os.environ["YOTA_SRC_FUSE"] = before
    return copy


def _flat_grad(f, args):
    value, g = ys.grad(f, *args)
    return (value, *g)


def peak_memory(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(work, repeats: int) -> None:
    found, generation = contenders(work)
    expected = found["hand-written"]()
    for name in found:
        result = getattr(found[name], "checked", found[name])()
        if name not in ("forward", "hand-written") and not same(result, expected):
            raise SystemExit(f"{work.name}: {name} disagrees with the hand-written gradient")
    for fn in found.values():  # warm: caches, jit compilation
        fn()
    times = {name: [] for name in found}
    for _ in range(repeats):
        for name, fn in found.items():
            inner = _calls_per_sample(fn)
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            times[name].append((time.perf_counter() - start) / inner)
    medians = {name: statistics.median(samples) for name, samples in times.items()}
    base = medians["hand-written"]
    print(f"\n{work.name}  (generation {generation:.2f} s; peak memory of one call: "
          f"hand-written {peak_memory(found['hand-written']) / 1e6:.2f} MB, "
          f"simplegrad {peak_memory(found['simplegrad']) / 1e6:.2f} MB)")
    for name, median in medians.items():
        print(f"  {name:13s} {median * 1e6:11.1f} us   ratio to hand-written "
              f"{median / base:5.2f}")


def _calls_per_sample(fn, target: float = 2e-3) -> int:
    start = time.perf_counter()
    fn()
    once = time.perf_counter() - start
    return max(1, min(1000, int(target / max(once, 1e-7))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="samples per contender")
    parser.add_argument("--only", default="", help="run the workloads whose name has this text")
    options = parser.parse_args()
    print(f"value and all gradients, float64; medians of {options.repeats} interleaved "
          "samples; ratio = median / hand-written median")
    for work in workloads.WORKLOADS:
        if options.only.lower() in work.name.lower():
            measure(work, options.repeats)


if __name__ == "__main__":
    main()
