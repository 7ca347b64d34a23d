"""Generation time and peak memory of long unrolled loops.

    python benchmarks/bench_scale.py [--steps 1000,10000] [--cases scalar,rnn]
                                     [--no-memory]

Each case is a loop of the kind research code runs for thousands of steps,
differentiated with `ys.simplegrad` in a fresh interpreter per measurement:

- scalar:  a scalar recurrence, `h = 0.9 * h + x[t % n]`
- rnn:     `h = np.tanh(W @ h + x)` over a list of input vectors
- rows:    the same over the rows of one input array, `x[t]`, whose gradient
           is written into one buffer element by element (an index-add)
- index:   a sum over elements, `total = total + x[i] * x[i]`
- physics: a small spring chain integrated with in-place updates of local
           arrays, `a[i] += ...` per element, then `v += dt * a; x += dt * v`

It prints, per case and length, the generation time (the median of
REPEATS runs without tracemalloc, after one generation of a short loop has
done the imports), the same function run natively (the median of as many
runs, interleaved with them) and the ratio of the two, the tracemalloc peak of
a second run (the Python heap the generation allocates, NumPy arrays
included; `--no-memory` skips it, which roughly halves the run time), and the
size of the generated module. The last column compares the longest run with
the shortest, step for step: about 1.0 is linear, 2.0 would mean twice the
time per step. Where the loop's count is read at run time (rnn, rows, index),
issue 25's target is generation within 3x the native run at 10,000 steps.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

REPEATS = 5
CASES = ("scalar", "rnn", "rows", "index", "physics")


def scalar(x, steps):
    n = x.shape[0]
    h = 0.0
    for t in range(steps):
        h = 0.9 * h + x[t % n]
    return h


def rnn(W, xs, h):
    for x in xs:
        h = np.tanh(W @ h + x)
    return np.sum(h)


def rows(W, x, h):
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + x[t])
    return np.sum(h)


def index(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
    return total


def physics(x, v, k, steps):
    dt = 0.01
    x = x.copy()
    v = v.copy()
    for _ in range(steps):
        a = np.zeros(x.shape[0])
        for i in range(x.shape[0] - 1):
            stretch = x[i + 1] - x[i] - 1.0
            a[i] += k * stretch
            a[i + 1] -= k * stretch
        v += dt * a
        x += dt * v
    return np.sum(x * x)


def example(case: str, steps: int):
    """The function and its example arguments for `steps` steps."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 8)) * 0.3
    if case == "scalar":
        return scalar, (rng.standard_normal(100), steps)
    if case == "rnn":
        return rnn, (W, [rng.standard_normal(8) for _ in range(steps)], np.zeros(8))
    if case == "rows":
        return rows, (W, rng.standard_normal((steps, 8)), np.zeros(8))
    if case == "index":
        return index, (rng.standard_normal(steps),)
    if case == "physics":
        return physics, (np.arange(3.0) + rng.standard_normal(3) * 0.1, np.zeros(3), 2.0, steps)
    raise ValueError(f"unknown case {case!r}; the cases are {', '.join(CASES)}")


def measure(case: str, steps: int, memory: bool) -> dict:
    """Generate in this process: seconds (and the native run's), the
    tracemalloc peak, the module's size."""
    import statistics
    import tracemalloc

    import yota_src as ys

    fn, args = example(case, steps)
    if memory:
        tracemalloc.start()
        df = ys.simplegrad(fn, *args)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return {"peak": peak, "size": len(df.source)}
    short, short_args = example(case, 20)
    ys.simplegrad(short, *short_args)  # the imports, and the source read once
    generated, native = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        df = ys.simplegrad(fn, *args)
        generated.append(time.perf_counter() - start)
        start = time.perf_counter()
        fn(*args)
        native.append(time.perf_counter() - start)
    return {"seconds": statistics.median(generated), "native": statistics.median(native),
            "size": len(df.source)}


def run(case: str, steps: int, memory: bool) -> dict:
    """`measure` in a fresh interpreter, so one case's caches and heap do not
    count in another's."""
    command = [sys.executable, __file__, "--measure", case, str(steps)]
    if memory:
        command.append("--memory")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return {"error": (result.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(result.stdout)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="1000,10000",
                        help="loop lengths, comma-separated (default 1000,10000)")
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the tracemalloc run (time and size only)")
    parser.add_argument("--measure", nargs=2, metavar=("CASE", "STEPS"), help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.measure:
        case, steps = options.measure
        print(json.dumps(measure(case, int(steps), options.memory)))
        return
    lengths = sorted(int(n) for n in options.steps.split(","))
    print(f"{'case':8} {'steps':>6} {'time (s)':>9} {'native (s)':>11} {'ratio':>6} "
          f"{'peak (MiB)':>11} {'module (kB)':>12} {'per step vs shortest':>21}")
    for case in options.cases.split(","):
        first = None
        for steps in lengths:
            timed = run(case, steps, memory=False)
            if "error" in timed:
                print(f"{case:8} {steps:>6}  error: {timed['error']}", flush=True)
                continue
            peak = "-" if options.no_memory else run(case, steps, memory=True).get("peak")
            peak = f"{peak / 2 ** 20:.1f}" if isinstance(peak, int) else "-"
            per_step = timed["seconds"] / steps
            first = first or per_step
            ratio = timed["seconds"] / timed["native"]
            print(f"{case:8} {steps:>6} {timed['seconds']:>9.3f} {timed['native']:>11.3f} "
                  f"{ratio:>6.2f} {peak:>11} "
                  f"{timed['size'] / 1e3:>12.0f} {per_step / first:>21.2f}", flush=True)


if __name__ == "__main__":
    main()
