"""Dead code: ops nothing returned or guarded depends on.

Random draws stay even when unused: each advances its generator, and the
generated code must consume random numbers as the function does. Output
(print, warnings, logging) stays: the user sees it at every call."""

from __future__ import annotations

from yota_src.core.primitives import has_effect
from yota_src.ir.loops import is_loop, is_loop_output
from yota_src.ir.tape import Call, Guard, Op, Tape, iter_refs, operands
from yota_src.passes.rewrite import rewrite


def live_ops(tape: Tape) -> set:
    """The ops what the tape returns or guards depends on, and its effects."""
    live = set(iter_refs(tape.output))
    for op in reversed(tape.ops):
        if isinstance(op, Guard) or op in live or (
                isinstance(op, Call) and has_effect(op.fn)):
            live.add(op)
            live.update(operands(op))
    return live


def eliminate_dead_code(tape: Tape) -> Tape:
    live = live_ops(tape)
    ops = [op for op in tape.ops if op in live]
    n_forward = sum(1 for op in tape.ops[: tape.n_forward] if op in live)
    dead = set(tape.ops) - live
    labels = {op: label for op, label in tape.labels.items()  # "the gradient of" a dead op: none
              if op in live and not (isinstance(label, Op) and label in dead)}
    origins = {op: origin for op, origin in tape.origins.items() if op in live}
    return tape.replace(ops=ops, n_forward=n_forward, labels=labels, origins=origins)


def without_unread(tape: Tape, candidates: set) -> Tape:
    """The tape without those of `candidates` nothing reads (a list
    argument's items, read eagerly while tracing: tracing/row_lists.py), so
    that the passes before dead code is eliminated do not walk them."""
    if not candidates:
        return tape
    read = {operand for op in tape.ops for operand in operands(op)}
    read.update(iter_refs(tape.output))
    gone = candidates - read
    return tape.replace(ops=[op for op in tape.ops if op not in gone],
                        n_forward=sum(1 for op in tape.ops[: tape.n_forward] if op not in gone))


def drop_unread_stacks(tape: Tape) -> Tape:
    """A loop stacks only the values something after it reads. Stacks for
    the names a body binds (Python keeps a loop's last `a` after it) are made
    while tracing, and most are never read: dead code, then no stack."""
    live = live_ops(tape)
    read: dict[Op, set] = {}
    for op in tape.ops:
        if is_loop_output(op) and op in live:
            read.setdefault(op.args[0], set()).add(op.args[1])
    calls = {op: _without_unread(op, read.get(op, set())) for op in tape.ops if is_loop(op)}
    if all(made is op for op, made in calls.items()):
        return tape
    gone: set[Op] = set()  # dead reads of the stacks dropped, and what reads them
    for op in tape.ops:
        if op not in live and (is_loop_output(op) and calls.get(op.args[0]) is not op.args[0]
                               or any(operand in gone for operand in operands(op))):
            gone.add(op)
    tape = tape.replace(ops=[op for op in tape.ops if op not in gone],
                        n_forward=sum(1 for op in tape.ops[: tape.n_forward] if op not in gone),
                        labels={op: label for op, label in tape.labels.items() if op not in gone},
                        origins={op: o for op, o in tape.origins.items() if op not in gone})

    def visit(op: Op, forward: bool, original: Op):
        if original in calls and calls[original] is not original:
            return calls[original][0]
        if is_loop_output(original) and calls.get(original.args[0], original.args[0]) \
                is not original.args[0]:
            _, numbers = calls[original.args[0]]
            return _output(op, numbers[original.args[1]])
        return op

    return rewrite(tape, visit)


def _without_unread(call: Call, read: set):
    """`call` as it is, or (the call stacking only what `read` reads, the new
    number of each output read)."""
    loop = call.fn
    n_carried = len(loop.carried)
    kept = [k for k in range(len(loop.saved)) if n_carried + k in read]
    if len(kept) == len(loop.saved):
        return call
    made = Call(loop.replace(saved=tuple(loop.saved[k] for k in kept)), call.args, call.kwargs,
                call.shape, call.dtype, call.loc, call.depends)
    made.hint = call.hint
    numbers = {k: k for k in range(n_carried)}
    numbers.update({n_carried + k: n_carried + at for at, k in enumerate(kept)})
    if loop.test is not None:  # the iterations run: last
        numbers[n_carried + len(loop.saved)] = n_carried + len(kept)
    return made, numbers


def _output(op: Call, number: int) -> Call:
    made = Call(op.fn, (op.args[0], number), {}, op.shape, op.dtype, op.loc, op.depends)
    made.hint, made.dims = op.hint, op.dims
    return made
