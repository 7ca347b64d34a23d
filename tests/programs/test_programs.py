"""Random small programs (helpers, loops, branches, globals and closure
variables rebound between calls): grad against finite differences.
`python tools/fuzz_programs.py` runs many more."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from program_strategy import check_program, programs


@settings(max_examples=40, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_random_programs_match_finite_differences(program, seed):
    source, shapes = program
    check_program(source, shapes, seed)
