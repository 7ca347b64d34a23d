"""Run the model corpus (tests/models/) and print a table: each model's
result (pass, WRONG, or the error's kind and first line), the time the first
`ys.grad` call took (tracing, generation, compilation and one run), and the
whole check's time.

    python tools/run_models.py [NAME ...] [--verbose]

A model passes when, at example(0) and example(1), ys.grad's value equals
the function's own and its gradient agrees with finite differences, and the
module ys.simplegrad saves imports and gives the same answers. Exit status 1
when any model is WRONG or raises.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from models._harness import (  # noqa: E402
    WrongAnswer,
    check_grad,
    check_saved,
    first_line,
    load,
    model_names,
)

import yota_src.api.gradients  # noqa: E402


def run_one(name: str, verbose: bool) -> tuple[str, float | None, float]:
    yota_src.api.gradients._cache.clear()
    timings: dict = {}
    start = time.perf_counter()
    result = "pass"
    try:
        model = load(name)
        check_grad(model, timings)
        with tempfile.TemporaryDirectory() as directory:
            try:
                check_saved(model, pathlib.Path(directory))
            except Exception as error:
                result = "saved: " + _describe(error)
                if verbose:
                    traceback.print_exc()
    except Exception as error:
        result = _describe(error)
        if verbose:
            traceback.print_exc()
    return result, timings.get("generation"), time.perf_counter() - start


def _describe(error: Exception) -> str:
    if isinstance(error, WrongAnswer):
        return str(error).splitlines()[0]
    return first_line(error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="models to run (default: all)")
    parser.add_argument("--verbose", action="store_true", help="print each failure's traceback")
    options = parser.parse_args()
    names = options.names or model_names()
    rows = []
    start = time.perf_counter()
    for name in names:
        result, generation, total = run_one(name, options.verbose)
        rows.append((name, result, generation, total))
    wall = time.perf_counter() - start

    width = max(len("model"), *(len(n) for n in names))
    print(f"{'model':<{width}}  {'gen s':>6}  {'total s':>7}  result")
    for name, result, generation, total in rows:
        gen = f"{generation:6.2f}" if generation is not None else f"{'-':>6}"
        print(f"{name:<{width}}  {gen}  {total:7.2f}  {result}")
    passed = sum(r == "pass" for _, r, _, _ in rows)
    wrong = sum("WRONG" in r for _, r, _, _ in rows)
    generation = sum(g for _, _, g, _ in rows if g is not None)
    print(f"\n{len(rows)} models: {passed} pass, {wrong} WRONG, "
          f"{len(rows) - passed - wrong} error; generation {generation:.2f} s, total {wall:.2f} s")
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
