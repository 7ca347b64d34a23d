"""Rolling while tracing: a `for` loop whose iterations have settled into
the same work is not interpreted to its end.

Once the last three iterations of a loop over a range or over the rows of
a traced array matched op for op (passes/roll.py's test), and the body can
only have done what its ops show (counts.LoopState: it assigns plain local
names and calls only plain helpers; its counter only indexes), the iterations traced
so far become a loop op for the whole loop, which runs the rest natively:
the trace takes as long for 10,000 steps as for 50, and the names the body
assigns go on holding the loop's results. A run whose guards fail on a
later iteration (the data take another branch there) is not rolled here:
the interpreter goes on, and the rolling pass sees every iteration.
"""

from __future__ import annotations

import operator

from yota_src.errors import ControlFlowChanged
from yota_src.ir.tape import Tape
from yota_src.passes.roll import next_run, planned
from yota_src.tracing.traced import Traced

SETTLED = 3  # matching iterations
LEFT = 8  # iterations still to run, for rolling to be worth it


def roll_rest(unroller, frame, entry, starts: list, total: int, counter) -> bool:
    """After iteration `len(starts) - 1` of `total` ran (`starts`: where each
    began among the unroller's ops): True where the whole loop is now one op
    and its results are bound; False where tracing goes on."""
    done = len(starts) - 1
    state = entry.state
    if not unroller.roll or total - done - 1 < LEFT or done < SETTLED - 1 or state is None \
            or state.changes or state.stored or (counter is not None and counter.used) \
            or done < unroller.roll_attempts.get(entry, 0):
        return False
    unroller.roll_attempts[entry] = 2 * done + 1  # tried again after as many more: linear
    ops = unroller.recorder.ops
    by_iteration = {i: ops[begin: starts[i + 1] if i + 1 < len(starts) else len(ops)]
                    for i, begin in enumerate(starts)}
    found = next_run(entry, by_iteration, 0, SETTLED)
    if found is None or found[0].last != done:
        found = next_run(entry, by_iteration, done - SETTLED + 1, SETTLED)
    if found is None or found[0].last != done:
        return False
    run, matches = found
    position = {op: number for number, op in enumerate(ops)}
    body = planned(Tape(list(ops), (), None), position, entry, by_iteration, run, matches,
                    set(), {})
    if body is None:  # its iterations end the ops so far: contiguous, they are the last
        return False
    return _replace(unroller, frame, body, body.members_in_order, run, total, state)


def _replace(unroller, frame, body, members: list, run, total: int, state) -> bool:
    last = body.model  # the template's layout: each iteration's ops by position
    length, member_set = len(last), set(members)
    final_ops = members[-length:]
    slots = sorted(body.carried, reverse=True)
    names = {}  # name -> ("final", slot number) or ("saved", body value)
    saved = []
    for name in state.names:  # the loop's own name is bound to its last item after it
        value = frame.locals.get(name)
        if not isinstance(value, Traced) or value.op not in member_set:
            continue
        if value.op not in final_ops:
            return False  # a value of an earlier iteration: the loop op gives none
        at = final_ops.index(value.op)
        if length - at in body.carried:
            names[name] = ("final", slots.index(length - at))
        else:
            made = body.made[last[at]]
            if made not in saved:
                saved.append(made)
            names[name] = ("saved", made)
    loop = body.loop(slots, saved, run.first + body.shift, total + body.shift)
    loop.entry = body.entry  # its count may be read at run time (roll.py binds it)
    values = unroller.recorder.values
    args = [Traced(a, values[a], unroller) if a in values else a
            for a in body.arguments(slots, lambda op: op)]
    if any(isinstance(a, Traced) and a.op in member_set for a in args):
        return False
    ops = unroller.recorder.ops
    del ops[len(ops) - len(members):]  # their values stay: the body's
    saved_loc = unroller.loc
    unroller.loc = body.entry.header if body.entry.header is not None else saved_loc
    try:
        parts = unroller.primitive(loop, tuple(args), {})
    except ControlFlowChanged:  # a later iteration goes another way: trace them all
        ops.extend(members)
        return False
    finally:
        unroller.loc = saved_loc
    for name, (kind, what) in names.items():
        if kind == "final":
            frame.locals[name] = parts[what]
        else:
            stack = parts[len(slots) + saved.index(what)]
            frame.locals[name] = unroller.primitive(operator.getitem,
                                                    (stack, total - 1 - run.first), {})
    return True
