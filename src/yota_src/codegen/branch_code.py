"""How codegen writes a branch (ir/branches.py): an `if` on the test, each
arm's statements under it, each name the statement joins assigned in
both arms.

A joined name goes on under the variable an arm passes through where
nothing reads that variable's old value after the arm changes it (`if
margin > 0: loss = loss + margin`): the code reads as the user's did.
"""

from __future__ import annotations

import ast
import operator

from yota_src.codegen.loop_code import body_readers
from yota_src.ir.branches import Branch, is_branch
from yota_src.ir.loops import CARRIED, Param
from yota_src.ir.tape import Call, Input, Op, operands


def is_branch_output(op) -> bool:
    """`branch_call[k]`: what a name holds after the branch."""
    return isinstance(op, Call) and op.fn is operator.getitem and is_branch(op.args[0])


def branch_statements(writer, call: Call) -> list[str]:
    branch: Branch = call.fn
    for capture, arg in zip(branch.captures, branch.captured(call)):
        if capture is not arg:  # a pass replaced what it reads: what the arms read it by
            text = ast.unparse(writer.spell.literal(arg))
            writer.names[capture] = text if text.isidentifier() or _plain_number(text) \
                else f"({text})"
    test = ast.unparse(writer.spell.literal(call.args[0]))
    parts = {user.args[1]: user for user in writer.names.users.get(call, [])
             if is_branch_output(user)}
    targets = [_target(writer, branch, call, k, parts.get(k)) for k in range(len(branch.names))]
    lines = [f"if {test}:"]
    writer.open_branches.append(call)
    try:
        lines += _arms(writer, branch, targets)
    finally:
        writer.open_branches.pop()
    if lines[-1] == "    pass" and lines[-2] == "else:":
        lines = lines[:-2]
    elif lines[1:3] == ["    pass", "else:"]:  # only the other arm does something: its test
        lines = [f"if {_negated(test)}:", *lines[3:]]
    writer.outputs[call] = targets
    return lines


_FLIPPED = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
            ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _negated(test: str) -> str:
    """`not test`, as `a != b` for `a == b` (exact, NaN too; `a < b` is not
    flipped, which NaN would make another test)."""
    node = ast.parse(test, mode="eval").body
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIPPED:
        return ast.unparse(ast.Compare(node.left, [_FLIPPED[type(node.ops[0])]()],
                                       node.comparators))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ast.unparse(node.operand)
    return ast.unparse(ast.UnaryOp(ast.Not(), node))


def _arms(writer, branch: Branch, targets: list) -> list[str]:
    lines = []
    for taken in (True, False):
        arm = branch.arms[taken]
        if not taken:
            lines.append("else:")
        if arm is None:  # (passes/branches.py opens every branch of one arm)
            raise AssertionError("a branch of one arm reached code generation")
        for result, target in zip(arm.results, targets):
            if target is not None and isinstance(result, Call) and result in set(arm.ops) \
                    and result not in writer.names.preset:
                writer.names.preset[result] = target
        inner = writer.block(arm.ops)
        for result, target in zip(arm.results, targets):
            if target is None:
                continue
            value = ast.unparse(writer.spell.literal(result))
            if value != target:
                inner.append(f"{target} = {value}")
        lines += ["    " + line for line in inner or ["pass"]]
    return lines


def _target(writer, branch: Branch, call: Call, k: int, part: Op | None) -> str | None:
    """The variable the name joined `k`-th holds after the branch (None if
    nothing reads it): the variable an arm passes through, where that is
    safe; else a new one."""
    if part is None:
        return None
    carried = _carried_out(writer, branch, part)
    for arm in branch.arms.values() if carried is not None else ():
        if arm is None or arm.results[k] not in branch.captures:
            continue
        capture = arm.results[k]
        arg = call.args[1 + branch.captures.index(capture)]
        if arg is carried and _reusable(writer, branch, call, capture, arg, k):
            return writer.names[arg]
    base = writer.names.base(part) or branch.names[k]
    return writer.names.fresh(base if base.isidentifier() else "value")


def _carried_out(writer, branch: Branch, part: Op):
    """The carried variable of the loop being written whose new value the one
    name the branch joins is (`if margin > 0: loss = loss + margin`, the
    body's last word on `loss`), if any: the loop would assign the variable
    that value anyway, and no later line rebinds it before the loop stacks
    or reads it."""
    if len(branch.names) != 1 or not writer.open_loops:
        return None
    loop = writer.open_loops[-1].fn
    return next((param for param, result in zip(loop.carried, loop.results)
                 if result is part), None)


def _plain_number(text: str) -> bool:
    return text.replace(".", "", 1).isdigit()


def _users(writer, arg) -> list:
    """What reads `arg`: in the body of the loop being written, for one of its
    values (a loop run again for its stacks shares its parameters)."""
    if writer.open_loops:
        loop = writer.open_loops[-1].fn
        if arg in loop.params or arg in loop.ops:
            return body_readers(loop).get(arg, [])
    return writer.names.users.get(arg, [])


def _stacked(writer, arg) -> bool:
    """A carried variable of the loop being written that the loop reads only
    to stack it (written before the work): no later read of its old value."""
    if not (isinstance(arg, Param) and arg.role == CARRIED and writer.open_loops):
        return False
    loop = writer.open_loops[-1].fn
    return arg in loop.carried and arg in loop.saved and arg not in loop.results


def _reusable(writer, branch: Branch, call: Call, capture: Op, arg, k: int) -> bool:
    """Whether the arms may assign the name to `arg`'s variable: nothing
    after the branch reads its old value, no arm reads it after making the
    new one, and no other joined name passes it through."""
    if not isinstance(arg, Op) or arg not in writer.names or arg in writer.names.inlined \
            or any(arg in outer.fn.captures for outer in writer.open_branches) \
            or isinstance(arg, Input) or isinstance(arg, Param) and arg.role != CARRIED:
        return False  # (an arm around reads it too; an argument; the same at each step)
    inside = {op for arm in branch.arms.values() if arm is not None for op in arm.ops}
    if any(user is not call and user not in inside and not (user is None and _stacked(writer, arg))
           for user in _users(writer, arg)):
        return False
    for arm in branch.arms.values():
        if arm is None:
            continue
        if sum(result is capture for result in arm.results) > 1:
            return False
        result = arm.results[k]
        if result in arm.ops:
            after = arm.ops[arm.ops.index(result) + 1:]
            if any(capture in set(operands(op)) for op in after):
                return False
    return True
