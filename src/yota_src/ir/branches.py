"""Branches: an `if` decided by the data inside a rolled loop, as one op
(like JAX's `cond` in a jaxpr).

A `Branch` is the `fn` of a `Call` whose first argument is the test's
value and whose other arguments are what the arms read from outside
(`captures`); its value is a tuple, one item per name the statement
assigns (`names`), as the arm that ran left it. Each arm is an `Arm`: its
ops, reading the captures and each other, and the op (or capture) each
name ends as. An arm the trace never saw is None: data that take it are
refused (ControlFlowChanged), as the guard of a decision is.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from yota_src.core.primitives import has_effect
from yota_src.errors import ControlFlowChanged, Location
from yota_src.ir.dims import plain
from yota_src.ir.tape import Call, Guard, Op, map_refs, op_text, operands


class Arm:
    """The ops one arm runs; `captures` are what they read from outside."""

    __slots__ = ("captures", "ops", "results", "labels", "origins")

    def __init__(self, captures: tuple, ops: list, results: tuple,
                 labels: dict | None = None, origins: dict | None = None):
        self.captures, self.ops, self.results = tuple(captures), list(ops), tuple(results)
        self.labels = labels or {}  # ops named by the user (or gradients), as a tape's
        self.origins = origins or {}  # ops -> the recorded ops whose example values they have


class Branch:
    """`if test: arms[True] else: arms[False]`, joining `names`."""

    def __init__(self, node, names: tuple, arms: dict, guard: Guard, captures: tuple,
                 loc: Location | None = None):
        self.node, self.names = node, tuple(names)
        self.arms = {True: arms.get(True), False: arms.get(False)}
        self.guard = guard  # the decision as traced: its text and line, for messages
        self.captures = tuple(captures)  # the call's arguments after the test, in order
        self.loc = loc
        # while the roll pass matches iterations, the call's last arguments are
        # what each name held before the statement (an op, a number, None where
        # unbound): the value a loop starts from, where the first iteration's arm
        # only passes it on
        self.n_befores = 0
        self.__name__ = self.__qualname__ = "branch"

    def captured(self, call: Call) -> tuple:
        """What `call` gives the captures."""
        return call.args[1: 1 + len(self.captures)]

    def befores(self, call: Call) -> tuple:
        """What each name held before the statement, while iterations are matched."""
        return call.args[1 + len(self.captures):]

    @property
    def both(self) -> bool:
        return all(arm is not None for arm in self.arms.values())

    def taken(self) -> bool:
        """The arm of a branch that has one."""
        return next(arm for arm, ops in self.arms.items() if ops is not None)

    def __call__(self, test, *values):
        arm = self.arms[bool(test)]
        if arm is None:
            raise ControlFlowChanged(self.guard.message("the rolled loop"))
        known = dict(zip(self.captures, values))
        for op in arm.ops:
            look = lambda s: plain(map_refs(s, known.__getitem__))  # noqa: E731
            if isinstance(op, Guard):
                if op.convert(known[op.value]) != op.expected:
                    raise ControlFlowChanged(op.message("the rolled loop"))
                continue
            known[op] = op.fn(*look(op.args), **look(op.kwargs))
        return tuple(known[result] if isinstance(result, Op) else result
                     for result in arm.results)

    def _results(self) -> list:
        """Per name, an op an arm gives for it (a number where both give one)."""
        arms = [arm for arm in self.arms.values() if arm is not None]
        return [next((arm.results[k] for arm in arms if isinstance(arm.results[k], Op)),
                     arms[0].results[k]) for k in range(len(self.names))]

    def output_types(self) -> list[tuple]:
        return [(result.shape, result.dtype) if isinstance(result, Op)
                else ((), np.asarray(result).dtype) for result in self._results()]

    def output_dims(self) -> list:
        return [result.dims if isinstance(result, Op) and result.dims is not None
                else np.shape(result) if not isinstance(result, Op) else result.shape
                for result in self._results()]

    def effectful(self, checks: bool = True) -> bool:
        """An arm that draws or prints, or (`checks`) checks its data, is never
        dropped."""
        return any(checks and isinstance(op, Guard)
                   or isinstance(op, Call) and has_effect(op.fn)
                   for arm in self.arms.values() if arm is not None for op in arm.ops)

    def verify(self, fault: Callable[[str], None]) -> None:
        """Report the first way an arm is not a closed program over the captures."""
        types = None
        for taken, arm in self.arms.items():
            if arm is None:
                continue
            known = set(arm.captures)
            if not known <= set(self.captures):
                fault(f"the {taken} arm of a branch reads a value the branch does not capture")
            for op in arm.ops:
                if not isinstance(op, (Call, Guard)) or op in known:
                    fault("a branch's arm holds an op that is not a new call or guard")
                if any(operand not in known for operand in operands(op)):
                    fault(f"an op of the {taken} arm of a branch reads an op that is neither "
                          "a capture nor an earlier op of the arm")
                known.add(op)
            if any(isinstance(result, Op) and result not in known for result in arm.results):
                fault(f"the {taken} arm of a branch gives back a value it does not have")
            these = [(r.shape, np.dtype(r.dtype) if r.dtype is not None else None)
                     if isinstance(r, Op) else None for r in arm.results]
            if types is not None and any(a != b for a, b in zip(these, types)
                                         if a is not None and b is not None):
                fault("the arms of a branch give back values of other types")
            types = these

    def listing(self, outer: dict, indent: str = "    ") -> list[str]:
        """The arms as `print(tape)` shows them."""
        lines = []
        for taken, arm in self.arms.items():
            lines.append("if test:" if taken else "else:")
            if arm is None:
                lines.append(indent + "(not traced: refused)")
                continue
            names = dict(outer)
            names.update({p: f"k{k}" for k, p in enumerate(self.captures)})
            names.update({op: f"a{i + 1}" for i, op in enumerate(arm.ops)})
            for op in arm.ops:
                text = op_text(op, names)
                lines.append(indent + (f"{names[op]} = {text}" if isinstance(op, Call) else text))
            lines.append(indent + "give " + ", ".join(names[r] if isinstance(r, Op) else repr(r)
                                                      for r in arm.results))
        return lines


def is_branch(op) -> bool:
    """A call of a branch."""
    return isinstance(op, Call) and isinstance(op.fn, Branch)
