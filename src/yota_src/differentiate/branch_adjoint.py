"""The adjoint of a branch (ir/branches.py): a branch on the same test
whose arms are the adjoints of the forward arms.

Each reversed arm computes its forward arm's ops again from the values
the branch read (an arm's values exist only at the iterations that took
it, so no stack holds them), then runs the templates of its ops backwards,
from the gradients of the names the branch joined to the gradients of
what it read. Both arms give a gradient for the same values: zeros where
an arm does not reach one.
"""

from __future__ import annotations

import numpy as np

from yota_src.core import primitives
from yota_src.differentiate import higher_order
from yota_src.differentiate.propagate import accumulate, active_ops, plus, propagate
from yota_src.differentiate.template_driver import TemplateDriver
from yota_src.ir.branches import Arm, Branch
from yota_src.ir.dims import has_dims
from yota_src.ir.loops import OUTSIDE, Param
from yota_src.ir.tape import Call, Guard, Op, operands, sizes
from yota_src.passes.rewrite import with_operands


@higher_order.register(Branch)
def propagate_branch(driver: TemplateDriver, known, op: Call, dy, active: set, grads: dict,
                     look=None) -> None:
    """Add the branch call `op`'s contributions to the gradients of what it
    reads (`dy`: the gradient of each name it joins, None where there is none)."""
    look = look or (lambda value: value)
    branch: Branch = op.fn
    dy = list(dy) if isinstance(dy, (list, tuple)) else [None] * len(branch.names)
    flowing = [k for k, grad in enumerate(dy) if grad is not None]
    wanted = [k for k, capture in enumerate(branch.captured(op))
              if isinstance(capture, Op) and look(capture) in active and capture.differentiable]
    if not flowing or not wanted:
        return
    reverse = _Reversed(driver, known, branch, branch.captured(op), wanted, flowing, look)
    if reverse.branch is None:
        return
    traced = lambda ref: driver.traced(look(ref), known[ref])  # noqa: E731
    values = [traced(op.args[0])]
    values += [traced(op.args[1 + k]) for k in reverse.read]
    values += [dy[reverse.flowing[n]] for n in reverse.grads_read]
    for k, j in reverse.passed.items():  # the same in both arms: no branch needed for it
        accumulate(driver, op, traced(op.args[1 + k]), dy[j], active, grads)
    if not reverse.wanted:
        return
    with driver.located(branch.loc):
        parts = driver.primitive(reverse.branch, tuple(values), {})
    for k, grad in zip(reverse.wanted, parts):
        accumulate(driver, op, traced(op.args[1 + k]), grad, active, grads)


class _Reversed:
    """The reversed branch: the arms' adjoints over shared captures (the
    forward captures each arm reads, then the gradients flowing in), giving
    the gradient of each capture wanted."""

    def __init__(self, driver: TemplateDriver, known, branch: Branch, args: tuple,
                 wanted: list, flowing: list, look):
        self.driver, self.known, self.forward = driver, known, branch
        self.wanted, self.flowing = wanted, flowing
        self.params = {capture: Param(OUTSIDE, arg.shape, arg.dtype, arg.hint, arg.dims)
                       for capture, arg in zip(branch.captures, args)}
        types, sizes_of = branch.output_types(), branch.output_dims()
        self.grads_in = [Param(OUTSIDE, types[k][0], types[k][1], None,
                               sizes_of[k] if has_dims(sizes_of[k]) else None) for k in flowing]
        arms = {taken: self._arm(arm) for taken, arm in branch.arms.items() if arm is not None}
        self.passed = self._passed_on(arms)  # capture -> the name whose gradient it takes
        keep = [n for n, k in enumerate(self.wanted) if k not in self.passed]
        self.wanted = [self.wanted[n] for n in keep]
        for arm in arms.values():
            arm.results = tuple(arm.results[n] for n in keep)
            used = _used(arm.ops, arm.results)
            arm.ops = [op for op in arm.ops if op in used]
        read = {param for arm in arms.values() for op in arm.ops for param in operands(op)}
        read |= {result for arm in arms.values() for result in arm.results
                 if isinstance(result, Op)}
        self.read = [k for k, capture in enumerate(branch.captures)
                     if self.params[capture] in read]
        self.grads_read = [n for n, param in enumerate(self.grads_in) if param in read]
        captures = (*(self.params[branch.captures[k]] for k in self.read),
                    *(self.grads_in[n] for n in self.grads_read))
        for arm in arms.values():
            arm.captures = tuple(c for c in captures if c in read)
        self.branch = Branch(branch.node, tuple(f"d{k}" for k in self.wanted), arms,
                             branch.guard, captures, branch.loc)

    def _passed_on(self, arms: dict) -> dict:
        """The captures whose gradient each arm gives as the gradient of one
        joined name flowing in, untouched (`loss` that an arm passes on or adds
        to): capture -> that name."""
        passed = {}
        for n, k in enumerate(self.wanted):
            given = {arm.results[n] for arm in arms.values()}
            if len(given) == 1 and (param := given.pop()) in self.grads_in:
                passed[k] = self.flowing[self.grads_in.index(param)]
        return passed

    def _arm(self, arm: Arm) -> Arm:
        """One forward arm's adjoint: its ops again, then their templates backwards."""
        sub = TemplateDriver(self.driver.input_names, dims=self.driver.dims)
        known = self.known.within(arm.origins)
        copies: dict[Op, Op] = {}
        look = lambda value: copies.get(value) or self.params.get(value, value)  # noqa: E731
        for op in arm.ops:
            if isinstance(op, Guard):
                continue  # checked going forward
            copy = with_operands(op, look)
            if copy is op:
                copy = Call(op.fn, op.args, op.kwargs, op.shape, op.dtype, op.loc, op.depends)
            copy.hint, copy.dims = op.hint, op.dims
            copies[op] = copy
            sub.recorder.ops.append(copy)
        grads: dict = {}
        for param, k in zip(self.grads_in, self.flowing):
            if not isinstance(arm.results[k], Op):
                continue  # a number: no gradient flows back
            target = look(arm.results[k])
            grads[target] = plus(sub, grads.get(target),
                                 sub.traced(param, np.ones(param.shape, param.dtype)))
        seeds = {self.params[c] for c in self.forward.captures if c.differentiable}
        active = active_ops([*self.params.values(), *copies.values()], seeds)
        for op in reversed(arm.ops):
            copy = copies.get(op)
            if copy is None or copy not in grads or copy not in active:
                continue
            propagate(sub, known, op, grads.pop(copy), active, grads, look=look)
        results = [self._result(sub, grads.get(self.params[self.forward.captures[k]]),
                                self.params[self.forward.captures[k]]) for k in self.wanted]
        used = _used(sub.recorder.ops, results)
        ops = [op for op in sub.recorder.ops if op in used]
        return Arm((), ops, tuple(results), {}, {})

    @staticmethod
    def _result(sub: TemplateDriver, grad, like: Param):
        """A gradient as an op of the arm: zeros where none reaches `like`."""
        if grad is not None and hasattr(grad, "op"):
            if grad.op.dtype != like.dtype:
                grad = sub.primitive(primitives.astype, (grad, like.dtype), {})
            return grad.op
        value = 0.0 if grad is None else float(grad)
        if like.shape == () and like.dtype == np.float64:
            return value  # a number: `dm = 0.0`
        fn, args = primitives.filled(sizes(like), value, like.dtype)
        return sub.primitive(fn, args, {}).op


def _used(ops: list, results) -> set:
    """The ops the results need."""
    needed = {result for result in results}
    for op in reversed(ops):
        if op in needed:
            needed.update(operands(op))
    return needed
