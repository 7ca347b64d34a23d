"""Tape -> Tape rewrites, one per module, run in `optimize` order."""

from __future__ import annotations

from ..tape import Tape
from .accumulate import accumulate_scatters
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .masks import keep_masked_zeros
from .outputs import own_outputs
from .simplify import simplify


def optimize_forward(tape: Tape) -> Tape:
    """The rewrites of the primal, before it is differentiated: a value
    computed once gets one gradient, accumulated once."""
    return eliminate_common_subexpressions(simplify(tape))


def optimize(tape: Tape) -> Tape:
    """The rewrites that keep generated code lean and readable."""
    tape = simplify(tape)
    tape = keep_masked_zeros(tape)
    tape = eliminate_common_subexpressions(tape)
    tape = accumulate_scatters(tape)
    tape = eliminate_dead_code(tape)
    return own_outputs(tape)


__all__ = ["optimize", "optimize_forward", "simplify", "keep_masked_zeros", "accumulate_scatters",
           "eliminate_common_subexpressions", "eliminate_dead_code", "own_outputs"]
