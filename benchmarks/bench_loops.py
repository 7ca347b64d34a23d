"""Rolled loops: generation time, module size and run time against unrolled
code and a hand-written backpropagation through time.

    python benchmarks/bench_loops.py [--steps 50,1000,10000] [--repeats 30]

Generation: `ys.simplegrad` of a tanh RNN (hidden 64, inputs 8) over the
rows of its input, `for t in range(xs.shape[0])`, in a fresh interpreter per
measurement, rolled (the default) and unrolled, with the generated module's
line count. Run time: the generated gradients of the 50-step RNN, rolled and
unrolled, and a careful hand-written BPTT, timed alternately in one process
(medians of the repeats, ratio to hand-written; lower is better). Every
gradient is checked against the hand-written one first.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

import yota_src as ys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from workloads import rnn, rnn_by_hand  # noqa: E402  the RNN and its hand-written BPTT

HIDDEN, INPUTS = 64, 8


def example(steps: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(HIDDEN, INPUTS)) * 0.3, rng.normal(size=(HIDDEN, HIDDEN)) * 0.1,
            rng.normal(size=(steps, INPUTS)))


def generation(steps: int, loops: str) -> dict:
    """Seconds to generate, and the module's lines, in a fresh interpreter."""
    code = (f"import sys, time, json; sys.path.insert(0, {str(__file__.rpartition('/')[0])!r})\n"
            "import bench_loops as b, yota_src as ys\n"
            f"args = b.example({steps})\n"
            "start = time.perf_counter()\n"
            f"source = ys.simplegrad(b.rnn, *args, loops={loops!r}).source\n"
            "print(json.dumps([time.perf_counter() - start, len(source.splitlines())]))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    seconds, lines = json.loads(result.stdout.splitlines()[-1])
    return {"seconds": seconds, "lines": lines}


def run_times(steps: int, repeats: int) -> None:
    args = example(steps)
    rolled = ys.simplegrad(rnn, *args)
    unrolled = ys.simplegrad(rnn, *args, loops="unroll")
    reference = rnn_by_hand(*args)
    for generated in (rolled(*args), unrolled(*args)):
        assert all(np.allclose(a, b) for a, b in zip(reference, generated))
    times = {"hand-written": [], "rolled": [], "unrolled": []}
    functions = {"hand-written": rnn_by_hand, "rolled": rolled, "unrolled": unrolled}
    for _ in range(repeats):  # interleaved: load on the shared machine hits all alike
        for name, fn in functions.items():
            start = time.perf_counter()
            for _ in range(10):
                fn(*args)
            times[name].append((time.perf_counter() - start) / 10)
    hand = statistics.median(times["hand-written"])
    print(f"\nrun time, {steps}-step RNN (value and all gradients; medians of {repeats})")
    for name, measured in times.items():
        median = statistics.median(measured)
        print(f"  {name:<13} {median * 1e6:9.1f} us   ratio to hand-written {median / hand:5.2f}")
    ratio = statistics.median(times["rolled"]) / statistics.median(times["unrolled"])
    print(f"  rolled / unrolled: {ratio:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="50,1000,10000")
    parser.add_argument("--unrolled-up-to", type=int, default=1000,
                        help="time unrolled generation only up to this many steps")
    parser.add_argument("--repeats", type=int, default=30)
    options = parser.parse_args()
    print(f"generation, tanh RNN hidden {HIDDEN}, inputs {INPUTS} (fresh interpreter each)")
    print(f"  {'steps':>6}  {'rolled (s)':>10}  {'lines':>6}  {'unrolled (s)':>12}  {'lines':>7}")
    for steps in map(int, options.steps.split(",")):
        rolled = generation(steps, "roll")
        unrolled = generation(steps, "unroll") if steps <= options.unrolled_up_to else None
        other = f"{unrolled['seconds']:12.2f}  {unrolled['lines']:7d}" if unrolled else \
            f"{'-':>12}  {'-':>7}"
        print(f"  {steps:6d}  {rolled['seconds']:10.2f}  {rolled['lines']:6d}  {other}")
    run_times(50, options.repeats)


if __name__ == "__main__":
    main()
