"""Which loop iteration made each op: what rolling iterations back into a
loop (passes/roll.py, which decides which of them did the same work) stands on.

Every op records the loops it was made in (`Location.loops`: an entry per
time a loop statement started, and the iteration). Nothing here changes a tape.
"""

from __future__ import annotations

from yota_src.ir.tape import Op, Tape


class CounterValue(int):
    """A loop counter's value where the code computes with it (`j == y[i]`,
    `t * dt`): an int of the op it lands in that may move with the iteration
    when the loop rolls (passes/matching.py), written as the counter then."""

    __slots__ = ()


def iterations(tape: Tape) -> dict[int, dict[int, list[Op]]]:
    """For each loop entry, the primal's ops of its iterations in tape order,
    by iteration (ops of loops nested inside belong to the outer iteration too)."""
    loops: dict[int, dict[int, list[Op]]] = {}
    for op in tape.ops[: tape.n_forward]:
        for entry, iteration in (op.loc.loops if op.loc is not None else ()):
            loops.setdefault(entry, {}).setdefault(iteration, []).append(op)
    return loops


def inner_loops(op: Op, entry: int) -> tuple:
    """The iterations of the loops nested inside loop `entry` that made `op`
    (their entries differ from one iteration to the next; their counts do not)."""
    loops = op.loc.loops if op.loc is not None else ()
    inside = [i for i, (each, _) in enumerate(loops) if each == entry]
    return tuple(iteration for _, iteration in loops[inside[0] + 1:]) if inside else ()
