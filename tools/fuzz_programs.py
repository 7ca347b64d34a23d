"""Check many random programs against finite differences (a longer run of
tests/programs/test_programs.py): helpers, loops, scatters, Python deciding from traced
values, branches on text, globals and closure variables rebound.

    python tools/fuzz_programs.py [--examples 2000] [--seed 0]

Prints how many programs were checked and the first failing one, if any.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from program_strategy import check_program, programs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    checked = [0]

    @settings(max_examples=options.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(program=programs(), seed=st.integers(0, 2**32 - 1))
    def check(program, seed):
        source, shapes = program
        check_program(source, shapes, seed)
        checked[0] += 1

    start = time.perf_counter()
    try:
        check()
    except Exception as error:  # hypothesis has printed the falsifying program
        print(f"FAILED after {checked[0]} programs: {error}")
        return 1
    print(f"{checked[0]} random programs checked against finite differences, each at its "
          f"example, at other data with the gradient cached (right or ControlFlowChanged), "
          f"and after rebinding a global and a closure variable, in "
          f"{time.perf_counter() - start:.0f} s: all agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
