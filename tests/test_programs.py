"""Random small programs (helpers, loops, static branches): grad against
finite differences. `python tools/fuzz_programs.py` runs many more."""

from hypothesis import given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys


@settings(max_examples=40, deadline=None)
@given(program=programs(), seed=st.integers(0, 2**32 - 1))
def test_random_programs_match_finite_differences(program, seed):
    source, shapes = program
    fn = load_program(source)
    ys.check_grad(fn, *arguments(shapes, seed), rtol=1e-4, atol=1e-6)
