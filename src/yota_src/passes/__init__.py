"""Tape -> Tape rewrites, one per module, run in the order below.

With YOTA_SRC_VERIFY=1 in the environment (the test suite sets it), every
pass's output is checked by `Tape.verify()`, and its input tape must come
out of the pass unchanged: ops, operands and names.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from yota_src.core import nested
from yota_src.ir.tape import Call, Guard, Tape, TapeError
from yota_src.passes.accumulate import accumulate_scatters
from yota_src.passes.batch import batch_row_updates, hoist_row_products
from yota_src.passes.bodies import in_branch_arms, in_loop_bodies
from yota_src.passes.branches import drop_joins
from yota_src.passes.cse import eliminate_common_subexpressions
from yota_src.passes.dce import drop_unread_stacks, eliminate_dead_code
from yota_src.passes.fuse import fuse_elementwise
from yota_src.passes.gather import gather_scalars
from yota_src.passes.in_place import update_in_place
from yota_src.passes.masks import keep_masked_zeros
from yota_src.passes.outputs import own_outputs
from yota_src.passes.roll import roll_loops
from yota_src.passes.run_time_counts import settle_counts
from yota_src.passes.scalars import python_scalars
from yota_src.passes.scales import defer_scales
from yota_src.passes.seeds import fold_seeds
from yota_src.passes.simplify import simplify
from yota_src.passes.work_arrays import use_work_arrays

VERIFY = os.environ.get("YOTA_SRC_VERIFY") == "1"

FORWARD_PASSES = (roll_loops, drop_joins, simplify, eliminate_common_subexpressions,
                  in_loop_bodies(simplify, eliminate_common_subexpressions), drop_unread_stacks)
BACKWARD_PASSES = (fold_seeds, keep_masked_zeros, simplify, eliminate_common_subexpressions,
                   hoist_row_products, batch_row_updates,
                   in_loop_bodies(simplify, eliminate_common_subexpressions,
                                  accumulate_scatters, eliminate_dead_code,
                                  in_branch_arms(simplify, eliminate_common_subexpressions,
                                                 eliminate_dead_code)),
                   accumulate_scatters, gather_scalars, eliminate_dead_code, defer_scales,
                   python_scalars,
                   own_outputs, eliminate_dead_code, update_in_place)

# Rewrites for host arrays: reading elements as Python floats would copy them
# from a device each time; an array literal of gathered elements mixes device
# values with numbers, which CuPy cannot make an array of; and work arrays
# save NumPy's allocations, not a device allocator's (CuPy keeps a pool).
HOST_ONLY = (python_scalars, gather_scalars, use_work_arrays, fuse_elementwise)


def optimize_forward(tape: Tape, loops: str = "roll") -> Tape:
    """The rewrites of the primal, before it is differentiated: a value
    computed once gets one gradient, accumulated once; with `loops="roll"`,
    iterations that did the same work become a loop (roll.py)."""
    passes = FORWARD_PASSES if loops == "roll" else tuple(
        each for each in FORWARD_PASSES if each is not roll_loops)
    tape = run(tape, passes)
    if tape.signature is not None and tape.signature.dims is not None:
        settle_counts(tape)  # counts of loops the code runs the example's number of times
    return tape


def optimize(tape: Tape, work_arrays: bool = False) -> Tape:
    """The rewrites of a gradient tape that keep generated code lean and
    readable. With `work_arrays` (ys.grad's code for the sizes it was first
    called with, run in a loop and not read), large temporaries are written
    into arrays kept from call to call, and chains of elementwise operations
    on large arrays are evaluated by NumExpr where it is installed
    (fuse.py): both pay or not by the example's sizes, so a module that
    reads sizes at run time has neither."""
    passes = BACKWARD_PASSES
    if work_arrays:  # fused before in-place updates, which fused results take part in
        passes = passes[:-1] + (fuse_elementwise, eliminate_dead_code, passes[-1],
                                use_work_arrays)
    if tape.signature.library != "numpy":
        passes = tuple(each for each in passes if each not in HOST_ONLY)
    return run(tape, passes)


def run(tape: Tape, passes: tuple[Callable[[Tape], Tape], ...]) -> Tape:
    for each in passes:
        tape = checked(each)(tape) if VERIFY else each(tape)
    return tape


def checked(each: Callable[[Tape], Tape]) -> Callable[[Tape], Tape]:
    """`each`, verifying its output and that it left its input as it was."""
    def run_checked(tape: Tape) -> Tape:
        before = fingerprint(tape)
        result = each(tape)
        if fingerprint(tape) != before:
            raise TapeError(f"{each.__name__} changed the tape it was given")
        return result.verify()
    return run_checked


def fingerprint(tape: Tape) -> tuple:
    """What a pass must not change: each op, what it reads, and the names."""
    def op_state(op):
        reads = (op.fn, _identities(op.args), _identities(op.kwargs)) \
            if isinstance(op, Call) else (id(op.value),) if isinstance(op, Guard) else ()
        return (id(op), op.hint, op.shape, str(op.dtype), op.loc) + reads
    return (tuple(op_state(op) for op in tape.ops), tape.n_forward,
            _identities(tape.output), _identities(tape.labels))


def _identities(structure):
    """A nested structure with every leaf replaced by its identity."""
    return nested.shape_of(structure, id)
