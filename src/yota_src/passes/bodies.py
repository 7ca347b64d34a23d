"""The rewrites of a loop's body: a rolled loop's body is a program of its
own (loops.py), which the passes of the tape around it do not look into."""

from __future__ import annotations

from collections.abc import Callable

from yota_src.ir.branches import Arm, Branch, is_branch
from yota_src.ir.loops import Param, is_loop
from yota_src.ir.tape import Call, Op, Tape, operands
from yota_src.passes.rewrite import rewrite


def in_loop_bodies(*passes: Callable[[Tape], Tape]) -> Callable[[Tape], Tape]:
    """A pass that runs `passes` on the body of each loop of the tape."""
    def loop_bodies(tape: Tape) -> Tape:
        def visit(op: Op, forward: bool, original: Op) -> Op:
            if not is_loop(op):
                return op
            loop = op.fn
            body = Tape([*loop.params, *loop.ops], (loop.results, loop.saved), None,
                        labels=dict(loop.labels), origins=dict(loop.origins))
            for each in passes:
                body = each(body)
            if any(is_loop(each) for each in body.ops):  # loops inside it: their bodies too
                body = loop_bodies(body)
            if body.ops == [*loop.params, *loop.ops]:
                return op
            results, saved = body.output
            ops = [each for each in body.ops if not isinstance(each, Param)]
            read = {operand for each in ops for operand in operands(each)} | set(results) \
                | set(saved)
            n_carried = len(loop.carried)
            kept = [j for j, param in enumerate(loop.outside) if param in read]  # the others: gone
            dropped = {param: op.args[n_carried + j] for j, param in enumerate(loop.outside)
                       if j not in kept}
            rewritten = loop.replace(
                ops=ops, results=tuple(results), saved=tuple(saved), labels=body.labels,
                origins={**loop.origins, **body.origins},
                outside=tuple(loop.outside[j] for j in kept), dropped={**loop.dropped, **dropped})
            args = (*op.args[:n_carried], *(op.args[n_carried + j] for j in kept),
                    *op.args[n_carried + len(loop.outside):])
            made = Call(rewritten, args, op.kwargs, op.shape, op.dtype, op.loc, op.depends)
            made.hint = op.hint
            return made
        return rewrite(tape, visit)
    loop_bodies.__name__ = f"loop_bodies({', '.join(each.__name__ for each in passes)})"
    return loop_bodies


def in_branch_arms(*passes: Callable[[Tape], Tape]) -> Callable[[Tape], Tape]:
    """A pass that runs `passes` on each arm of each branch of the tape whose
    arms are closed over parameters (a reversed branch's: ir/branches.py)."""
    def branch_arms(tape: Tape) -> Tape:
        def visit(op: Op, forward: bool, original: Op) -> Op:
            if not is_branch(op) or not all(isinstance(c, Param) for c in op.fn.captures):
                return op
            branch, arms, changed = op.fn, {}, False
            for taken, arm in branch.arms.items():
                if arm is None:
                    continue
                body = Tape([*branch.captures, *arm.ops], arm.results, None,
                            labels=dict(arm.labels), origins=dict(arm.origins))
                for each in passes:
                    body = each(body)
                body = branch_arms(body)
                ops = [each for each in body.ops if not isinstance(each, Param)]
                changed = changed or ops != arm.ops
                arms[taken] = Arm(arm.captures, ops, tuple(body.output), body.labels,
                                  {**arm.origins, **body.origins})
            if not changed:
                return op
            made = Call(Branch(branch.node, branch.names, arms, branch.guard, branch.captures,
                               branch.loc), op.args, op.kwargs, op.shape, op.dtype, op.loc,
                        op.depends)
            made.hint = op.hint
            return made
        return rewrite(tape, visit)
    branch_arms.__name__ = f"branch_arms({', '.join(each.__name__ for each in passes)})"
    return branch_arms
