"""Where the random generators a trace drew from stand, and putting them
back, so that the generated code's first run draws what one call of the
function would."""

from __future__ import annotations

import random

import numpy as np


def random_state(generator):
    if isinstance(generator, np.random.RandomState):
        return generator.get_state()
    if isinstance(generator, random.Random):
        return generator.getstate()
    return generator.bit_generator.state


def random_states(generators) -> dict:
    """Where each generator stands, for `rewind`."""
    return {id(generator): (generator, random_state(generator)) for generator in generators}


def rewind(random_states: dict) -> None:
    """Put every generator the trace drew from back where it was, so the
    generated code's first run draws what one call of the function would."""
    for generator, state in random_states.values():
        if isinstance(generator, np.random.RandomState):
            generator.set_state(state)
        elif isinstance(generator, random.Random):
            generator.setstate(state)
        else:
            generator.bit_generator.state = state
