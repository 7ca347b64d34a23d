"""How codegen writes a rolled loop (loops.py): stacks allocated with their
known shapes, the carried variables set from their initial values, then a
`for` over the counter whose body is the body's statements, each source
line's under its comment, with the stacks written at the counter.

The body's values get names as any others (the user's, or `d<name>` for
gradients); a carried variable is one name throughout, so the value carried
out is assigned to it directly where nothing later in the body reads the
value carried in. `writer` is the StatementWriter writing the function's
body (statements.py), whose names and spelling the loop's body shares.
"""

from __future__ import annotations

import ast
import operator
import re

import numpy as np

from yota_src.core.primitives import index_add, index_update, returns_new_array
from yota_src.ir.branches import is_branch
from yota_src.ir.loops import Loop, Param, is_loop
from yota_src.ir.tape import Call, Guard, Input, Op, Tape, operands, readers, sizes


def loop_calls(tape: Tape) -> list[Call]:
    """The loop calls of the tape, and of their bodies (loops inside loops)."""
    return [call for call in nested_calls(tape) if is_loop(call)]


def nested_calls(tape: Tape) -> list[Call]:
    """The loop and branch calls of the tape, of loops' bodies and of
    branches' arms, each before those inside it."""
    found, ops = [], list(tape.ops)
    while ops:
        calls = [op for op in ops if is_loop(op) or is_branch(op)]
        found += calls
        ops = [op for call in calls for op in inner_ops(call)]
    return found


def inner_ops(call: Call) -> list:
    if is_loop(call):
        return call.fn.ops
    return [op for arm in call.fn.arms.values() if arm is not None for op in arm.ops]


def arm_readers(call: Call) -> dict:
    """Each arm value's readers; the branch (None) reads what its arms give."""
    users: dict = {}
    for arm in call.fn.arms.values():
        if arm is not None:
            for op, readers_of in readers(arm.ops, arm.results).items():
                users.setdefault(op, []).extend(readers_of)
    return users


def call_guards(op: Op) -> list:
    """The guards of a loop's body or a branch's arms, where the call stands
    among the tape's, those of the calls inside them too, each once (a fact
    of every time it is tested: how many times that is, the data decide,
    where an arm holds it); a `while` loop's test is its header, not a guard.
    Any other op: itself, if a guard."""
    if is_loop(op):
        return [guard for each in op.fn.ops if each is not op.fn.test
                for guard in call_guards(each)]
    if is_branch(op):
        return [guard for arm in op.fn.arms.values() if arm is not None for each in arm.ops
                for guard in call_guards(each)]
    return [op] if isinstance(op, Guard) else []


def body_readers(loop: Loop) -> dict:
    """Each body value's readers; the loop itself (None) reads what it carries
    out and what it stacks."""
    return readers(loop.ops, (loop.results, loop.saved))


def loop_statements(writer, call: Call) -> list[str]:
    loop: Loop = call.fn
    n_carried = len(loop.carried)
    for param, arg in zip(loop.outside, call.args[n_carried:]):
        writer.names[param] = ast.unparse(writer.spell.literal(arg))
    for param, arg in loop.dropped.items():  # what a gradient's label may still name
        if arg in writer.names:
            writer.names[param] = writer.names[arg]
    lines, carried = _carried_variables(writer, call)
    stacks = [_stack_name(writer, writer.names[value]) if isinstance(value, Param) else None
              for value in loop.saved]  # a carried value's stack, named now; the others later
    if loop.test is not None:
        counter = writer.names[loop.counter] = writer.names.fresh("steps")
        header = [f"{counter} = {loop.start}", "while True:"]
    else:
        counted = loop.saved or writer.names.users.get(loop.counter)
        counter = writer.names[loop.counter] = _counter(writer) if counted else "_"
        stop = _stop(writer, loop, call)
        steps = f"range({loop.start}, {stop})" if loop.start else f"range({stop})"
        header = [f"for {counter} in {'reversed(' + steps + ')' if loop.reverse else steps}:"]
    writer.open_loops.append(call)
    try:
        inner, header = _body(writer, loop, header)
    finally:
        writer.open_loops.pop()
    results = [ast.unparse(writer.names.ref(result)) for result in loop.results]
    moved = [(name, value) for name, value in zip(carried, results) if name != value]
    if moved:
        inner.append(f"{', '.join(n for n, _ in moved)} = {', '.join(v for _, v in moved)}")
    index = counter if not loop.start else f"{counter} - {loop.start}"
    top = inner.index("    break") + 1 if "    break" in inner else 0  # where the work starts
    for number, value in enumerate(loop.saved):
        if stacks[number] is None:
            stacks[number] = _stack_name(writer, ast.unparse(writer.names.ref(value)))
        code = ast.unparse(writer.names.ref(value))
        store = f"{stacks[number]}.append({code})" if loop.test is not None else \
            f"{stacks[number]}[{index}] = {code}"
        if isinstance(value, Param):  # a carried value as it came in: before the work
            inner.insert(top, store)
            top += 1
        else:
            inner.append(store)
    if loop.test is not None:
        inner.append(f"{counter} += 1")
    lines += _allocations(writer, loop, call, stacks) + header
    lines += ["    " + line for line in inner or ["pass"]]
    for value, name in zip(loop.saved, stacks):  # and the value it leaves the loop with
        if isinstance(value, Param):
            final = writer.names[value]
            lines.append(f"{name}.append({final})" if loop.test is not None
                         else f"{name}[-1] = {final}")
    count = [_plus(counter, -loop.start)] if loop.test is not None else []
    writer.outputs[call] = carried + stacks + count
    return lines


def _carried_variables(writer, call: Call) -> tuple[list[str], list[str]]:
    """The lines that start the carried variables, and their names."""
    loop: Loop = call.fn
    lines, carried = [], []
    for param, result, init in zip(loop.carried, loop.results, call.args[:len(loop.carried)]):
        wanted = carried_name(writer, loop, param)
        owned = _reusable(writer, init, call, wanted)
        if owned:
            name = writer.names[init]  # the loop goes on from the value of that name
        else:
            name = writer.names.fresh(wanted)
            lines.append(f"{name} = {ast.unparse(writer.spell.literal(init))}")
        writer.names[param] = name
        carried.append(name)
        if _assigned_directly(loop, param, result):
            writer.names.preset[result] = name
            writer.names.pinned.update(_pinned(writer, loop, param, result))
            chain = _update_chain(writer, param, result) if owned and _owned_array(init) \
                else None
            if chain:  # `dW += ...`, `dxs[t] += ...`: the loop's own array, in place
                writer.augmented.update(chain)
                writer.names.preset.update((op, name) for op in chain)
    return lines, carried


def _body(writer, loop: Loop, header: list[str]) -> tuple[list[str], list[str]]:
    """The body's statements, and the loop's header: a `while` loop's test
    is its header (`while err > 0.001:`) where the work before it folds into
    it, else it ends the loop from inside (`if not ...: break`)."""
    if loop.test is None:
        return writer.block(loop.ops, loop.loc), header
    at = loop.ops.index(loop.test)
    before = writer.block(loop.ops[:at], loop.loc)
    test = ast.unparse(writer.names.ref(loop.test.value))
    after = writer.block(loop.ops[at + 1:], loop.loc)
    if not before:
        return after, [header[0], f"while {test}:"]
    return before + [f"if not ({test}):", "    break"] + after, header


def _allocations(writer, loop: Loop, call: Call, stacks: list) -> list[str]:
    """The stacks, made before the loop: arrays of the known (or run-time)
    count, or lists a `while` loop appends to."""
    lines = []
    for value, name in zip(loop.saved, stacks):
        if loop.test is not None:
            lines.append(f"{name} = []")
            continue
        dtype = "" if value.dtype == np.float64 else \
            f", {ast.unparse(writer.spell.literal(np.dtype(value.dtype)))}"
        count = _count(writer, loop, call, isinstance(value, Param))
        rest = [ast.unparse(writer.spell.literal(size)) for size in sizes(value)]
        shape = f"({count}, {', '.join(rest)})" if rest else f"({count},)"
        lines.append(f"{name} = np.empty({shape}{dtype})")
    return lines


def _stop(writer, loop: Loop, call: Call) -> str:
    """Where the counter stops: a number, or `n`, `n + 1` for a trip count read
    at run time from the argument `n`."""
    if loop.bound is None:
        return str(loop.stop)
    return _plus(ast.unparse(writer.spell.literal(call.args[-1])), loop.bound)


def _count(writer, loop: Loop, call: Call, one_more: bool) -> str:
    """How many iterations run (one more for a carried value's stack)."""
    if loop.bound is None:
        return str(loop.count + one_more)
    return _plus(ast.unparse(writer.spell.literal(call.args[-1])),
                 loop.bound - loop.start + one_more)


def _plus(text: str, number: int) -> str:
    return text if not number else f"{text} {'+' if number > 0 else '-'} {abs(number)}"


def _stack_name(writer, name: str) -> str:
    """`hs` for the values `h` takes."""
    base = name if name.isidentifier() else "value"
    return writer.names.fresh(f"{base}s" if not base.endswith("s") else f"{base}_stack")


def carried_name(writer, loop: Loop, param: Param) -> str:
    """The name of a carried variable: the user's (or `d<name>`) for the value
    carried out or in; for a value the body made under one name and then
    bound to another (`x = x_next`), the name it goes on under."""
    result = loop.results[loop.carried.index(param)]
    return (result.last_name or writer.names.base(result) or writer.names.base(param)
            or param.hint or result.hint or "carried")


def initial_name(writer, op: Op) -> str | None:
    """The name for an op whose only use is to start a loop's carried
    variable: that variable's, so the loop goes on under it."""
    users = writer.names.users.get(op, [])
    if len(users) != 1 or not is_loop(users[0]):
        return None
    loop = users[0].fn
    slot = list(users[0].args[: len(loop.carried)]).index(op) \
        if op in users[0].args[: len(loop.carried)] else None
    return None if slot is None else carried_name(writer, loop, loop.carried[slot])


def _counter(writer) -> str:
    """`t`, or the counter of a loop written before (its loop is over); inside
    a loop's body, the next letter (`u`, `v`, ...) for each loop deeper."""
    depth = len(writer.open_loops)
    while len(writer.counters) <= depth:
        writer.counters.append(writer.names.fresh(_COUNTERS[len(writer.counters)]
                                                  if len(writer.counters) < len(_COUNTERS)
                                                  else "t"))
    return writer.counters[depth]


_COUNTERS = ("t", "u", "v", "w")


def _owned_array(init: Op) -> bool:
    """A new array of the code's own (never an argument, or a view of one)."""
    return isinstance(init, Call) and returns_new_array(init.fn)


def _update_chain(writer, param: Param, result: Op) -> list[Op] | None:
    """`result` is the carried array updated in place, one step after the
    other (`param + g`, an index store into it), each step read by the next
    alone: the steps, in order."""
    chain, op = [], result
    while op is not param:
        if not isinstance(op, Call) or not op.args:
            return None
        previous = op.args[0]
        adds = op.fn is operator.add and len(op.args) == 2 and isinstance(op.args[1], Op) \
            and op.args[1].shape == op.shape
        stores = op.fn in (index_add, index_update)  # `dxs[t] += dx`, `out[n, t] = v`
        if not (adds or stores) or writer.names.users.get(previous) != [op]:
            return None
        chain.append(op)
        op = previous
    return chain[::-1]


def _pinned(writer, loop: Loop, param: Param, result: Op) -> list[Op]:
    """What reads the value carried in and must be written where it stands,
    before the variable takes the new value: folded into a line after that,
    it would read the new one. A value that only goes into the new value
    (`h = np.tanh(W @ h + x)`) is folded."""
    pinned, place = [], {op: number for number, op in enumerate(loop.ops)}
    for op in loop.ops:
        if param not in set(operands(op)):
            continue
        reader = op
        while reader is not result and len(writer.names.users.get(reader, [])) == 1 \
                and writer.names.users[reader][0] is not None:
            reader = writer.names.users[reader][0]
        if reader is not result and not (reader in place and place[reader] < place[result]):
            pinned.append(op)  # folded into a statement written after the new value
    return pinned


def _reusable(writer, init: Op, call: Call, wanted: str) -> bool:
    """A variable the loop may take over: named by the code as the carried
    variable is (`h`, `h_2`: an argument `h0` would read as the argument),
    and read by this loop alone."""
    if not (isinstance(init, Op) and init in writer.names and init not in writer.names.inlined
            and writer.names.users.get(init) == [call]
            and (writer.assigned(init) or isinstance(init, Input) and not init.path)):
        return False
    name = writer.names[init]
    return name == wanted or re.fullmatch(rf"{re.escape(wanted)}_\d+", name) is not None


def _assigned_directly(loop: Loop, param: Param, result: Op) -> bool:
    """The body may assign the value carried out to the carried variable
    itself: a new op, carried out once, after which nothing reads the value
    carried in: no op, and no other carried variable that takes it as it
    came in (`h, c = w * c, c + h` backwards: the old `dc` goes on as `dh`)."""
    if isinstance(result, Param) or sum(r is result for r in loop.results) > 1 \
            or param in loop.results:
        return False
    after = loop.ops[loop.ops.index(result) + 1:]
    return not any(param in set(operands(op)) for op in after)
