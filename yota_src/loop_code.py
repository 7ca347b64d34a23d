"""How codegen writes a rolled loop (loops.py): stacks allocated with their
known shapes, the carried variables set from their initial values, then a
`for` over the counter whose body is the body's statements, each source
line's under its comment, with the stacks written at the counter.

The body's values get names as any others (the user's, or `d<name>` for
gradients); a carried variable is one name throughout, so the value carried
out is assigned to it directly where nothing later in the body reads the
value carried in.
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from .loops import Loop, Param
from .tape import Call, Guard, Input, Op, Tape, operands, readers


def is_loop_call(op) -> bool:
    return isinstance(op, Call) and isinstance(op.fn, Loop)


def is_part(op) -> bool:
    """`loop_call[k]`: an output of a loop, which is a variable the loop sets."""
    return isinstance(op, Call) and op.fn is operator.getitem and is_loop_call(op.args[0])


def loop_calls(tape: Tape) -> list[Call]:
    return [op for op in tape.ops if is_loop_call(op)]


def is_read(op: Op) -> bool:
    """`xs[t]`: a read at the counter, which reads as well where it is used."""
    return isinstance(op, Call) and op.fn is operator.getitem and not op.kwargs


def call_guards(call: Call) -> list:
    """The guards of a loop's body, once per iteration, where the loop stands
    among the tape's (a fact counts the times it held)."""
    return [op for op in call.fn.ops if isinstance(op, Guard)] * call.fn.count


def body_readers(loop: Loop) -> dict:
    """Each body value's readers; the loop itself (None) reads what it carries
    out and what it stacks."""
    return readers(loop.ops, (loop.results, loop.saved))


def loop_statements(writer, call: Call) -> list[str]:
    loop: Loop = call.fn
    n_carried = len(loop.carried)
    lines: list[str] = []
    for param, arg in zip(loop.outside, call.args[n_carried:]):
        writer.names[param] = ast.unparse(writer.literal(arg))
    counted = loop.saved or writer.users.get(loop.counter)
    counter = writer.names[loop.counter] = _counter(writer) if counted else "_"
    carried = []
    for param, result, init in zip(loop.carried, loop.results, call.args[:n_carried]):
        owned = _reusable(writer, init, call)
        if owned:
            name = writer.names[init]  # the loop goes on from the value of that name
        else:
            name = writer.fresh(carried_name(writer, loop, param))
            lines.append(f"{name} = {ast.unparse(writer.literal(init))}")
        writer.names[param] = name
        carried.append(name)
        if _assigned_directly(loop, param, result):
            writer.preset[result] = name
            if owned and _owned_array(init) and _updates(writer, param, result):
                writer.augmented.add(result)  # `dW += ...`, `dxs[t] += ...`: the loop's own array
    stacks = [None] * len(loop.saved)
    for number, value in enumerate(loop.saved):  # a carried value's stack: named now
        if isinstance(value, Param):
            stacks[number] = _stack_name(writer, writer.names[value])
    steps = f"range({loop.start}, {loop.stop})" if loop.start else f"range({loop.stop})"
    lines.append(f"for {counter} in {'reversed(' + steps + ')' if loop.reverse else steps}:")
    index = counter if not loop.start else f"{counter} - {loop.start}"
    inner: list[str] = []
    for value, name in zip(loop.saved, stacks):  # a carried value as it came in: first
        if isinstance(value, Param):
            inner.append(f"{name}[{index}] = {writer.names[value]}")
    inner += writer.block(loop.ops, loop.loc)
    results = [ast.unparse(writer.ref(result)) for result in loop.results]
    moved = [(name, value) for name, value in zip(carried, results) if name != value]
    if moved:
        inner.append(f"{', '.join(n for n, _ in moved)} = {', '.join(v for _, v in moved)}")
    for number, value in enumerate(loop.saved):  # the body's values: named by the body
        if not isinstance(value, Param):
            stacks[number] = _stack_name(writer, ast.unparse(writer.ref(value)))
            inner.append(f"{stacks[number]}[{index}] = {ast.unparse(writer.ref(value))}")
    types = loop.output_types()[n_carried:]
    for value, name, (shape, _) in zip(loop.saved, stacks, types):
        dtype = "" if value.dtype == np.float64 else \
            f", {ast.unparse(writer.literal(np.dtype(value.dtype)))}"
        lines.insert(len(lines) - 1, f"{name} = np.empty({shape!r}{dtype})")
    lines += ["    " + line for line in inner or ["pass"]]
    for value, name in zip(loop.saved, stacks):  # and the value it leaves the loop with
        if isinstance(value, Param):
            lines.append(f"{name}[-1] = {writer.names[value]}")
    writer.outputs[call] = carried + stacks
    return lines


def _stack_name(writer, name: str) -> str:
    """`hs` for the values `h` takes."""
    base = name if name.isidentifier() else "value"
    return writer.fresh(f"{base}s" if not base.endswith("s") else f"{base}_stack")


def carried_name(writer, loop: Loop, param: Param) -> str:
    """The name of a carried variable: the user's (or `d<name>`) for the value
    carried out or in."""
    result = loop.results[loop.carried.index(param)]
    return (writer.base_name(result) or writer.base_name(param) or param.hint
            or result.hint or "carried")


def initial_name(writer, op: Op) -> str | None:
    """The name for an op whose only use is to start a loop's carried
    variable: that variable's, so the loop goes on under it."""
    users = writer.users.get(op, [])
    if len(users) != 1 or not is_loop_call(users[0]):
        return None
    loop = users[0].fn
    slot = list(users[0].args[: len(loop.carried)]).index(op) \
        if op in users[0].args[: len(loop.carried)] else None
    return None if slot is None else carried_name(writer, loop, loop.carried[slot])


def _counter(writer) -> str:
    """`t`, or the counter of a loop written before (its loop is over)."""
    for name in sorted(writer.counters):
        return name
    name = writer.fresh("t")
    writer.counters.add(name)
    return name


def _owned_array(init: Op) -> bool:
    """A new array of the code's own (never an argument, or a view of one)."""
    from .primitives import returns_new_array
    return isinstance(init, Call) and returns_new_array(init.fn)


def _updates(writer, param: Param, result: Op) -> bool:
    """`result` adds to the carried array in place: `param + g` or an index
    store into `param`, its only reader."""
    if writer.users.get(param) != [result] or not isinstance(result, Call):
        return False
    if result.fn is operator.add and len(result.args) == 2 and result.args[0] is param \
            and isinstance(result.args[1], Op) and result.args[1].shape == param.shape:
        return True
    from .primitives import index_add
    return result.fn is index_add and result.args[0] is param


def _reusable(writer, init: Op, call: Call) -> bool:
    """A variable the loop may take over: named by the code, read by this loop alone."""
    return isinstance(init, Op) and init in writer.names and init not in writer.inlined \
        and writer.users.get(init) == [call] and (
            writer.assigned(init) or isinstance(init, Input) and not init.path)


def _assigned_directly(loop: Loop, param: Param, result: Op) -> bool:
    """The body may assign the value carried out to the carried variable
    itself: a new op, carried out once, after which nothing reads the value
    carried in (nor stacks it at the end)."""
    if isinstance(result, Param) or sum(r is result for r in loop.results) > 1:
        return False
    after = loop.ops[loop.ops.index(result) + 1:]
    return not any(param in set(operands(op)) for op in after)
