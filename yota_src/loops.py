"""Rolled loops: a run of iterations that did the same work, as one op of
the tape (like JAX's `scan` in a jaxpr).

A `Loop` is the `fn` of a `Call`. The call's arguments are everything the
body reads from outside: the initial values of the carried variables, then
the other outside values (loop invariants, arrays it indexes with the
counter). Its value is a tuple: each carried variable after the last
iteration, then one stack per saved body value (its value at every
iteration along a new first axis, in counter order). The body is closed:
it reads nothing but its parameters, so a pass that replaces an outside op
copies the call with new arguments (as for any call) and never looks inside.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .errors import ControlFlowChanged, Location
from .primitives import display_name, has_effect
from .tape import Call, Guard, Op, _show, map_refs, operands

COUNTER, CARRIED, OUTSIDE = "counter", "carried", "outside"


class Param(Op):
    """What a body reads: the counter, a carried variable or an outside value."""

    __slots__ = ("role",)

    def __init__(self, role: str, shape, dtype, hint: str | None = None):
        super().__init__(shape, dtype, None, depends=role != COUNTER)
        self.role = role
        self.hint = hint


class Loop:
    """`for counter in range(start, stop)` (reversed where `reverse`) over
    `ops`, carrying `carried[k]` from `results[k]` of one iteration to the
    next, stacking the values of `saved`.

    `labels` name body ops as a tape's labels do (a user's name, or the op a
    value is the gradient of); `origins` map body ops to recorded ops whose
    example value they have (the iteration the body was made from), for the
    templates of the reverse pass; `loc` is the loop statement's.
    """

    def __init__(self, counter: Param, carried: tuple, outside: tuple, ops: list,
                 results: tuple, saved: tuple, start: int, stop: int, reverse: bool = False,
                 loc: Location | None = None, labels: dict | None = None,
                 origins: dict | None = None):
        self.counter, self.carried, self.outside = counter, tuple(carried), tuple(outside)
        self.ops, self.results, self.saved = list(ops), tuple(results), tuple(saved)
        self.start, self.stop, self.reverse = start, stop, reverse
        self.loc = loc
        self.labels = labels or {}
        self.origins = origins or {}
        self.__name__ = self.__qualname__ = "loop"

    @property
    def params(self) -> tuple:
        return (self.counter, *self.carried, *self.outside)

    @property
    def count(self) -> int:
        return max(self.stop - self.start, 0)

    def counters(self) -> range:
        steps = range(self.start, self.stop)
        return steps[::-1] if self.reverse else steps

    def saving(self, more: tuple) -> Loop:
        """The same loop, stacking `more` values too (after those it stacked)."""
        saved = self.saved + tuple(value for value in more if value not in self.saved)
        return Loop(self.counter, self.carried, self.outside, self.ops, self.results, saved,
                    self.start, self.stop, self.reverse, self.loc, self.labels, self.origins)

    def output_types(self) -> list[tuple]:
        """(shape, dtype) of each element of the call's value: a carried
        variable's stack holds the value it had coming into each iteration and
        its final value (one more), as a hand-written `hs` does."""
        finals = [(param.shape, param.dtype) for param in self.carried]
        stacks = [((self.count + isinstance(value, Param), *value.shape), value.dtype)
                  for value in self.saved]
        return finals + stacks

    def effectful(self) -> bool:
        """A body that checks its data or has an effect of its own is never dropped."""
        return any(isinstance(op, Guard) or isinstance(op, Call) and has_effect(op.fn)
                   for op in self.ops)

    def __call__(self, *args):
        carried = list(args[: len(self.carried)])
        values: dict[Op, object] = dict(zip(self.outside, args[len(self.carried):]))
        stacks = [np.empty(shape, dtype) for shape, dtype in self.output_types()[len(carried):]]
        for counter in self.counters():
            values[self.counter] = counter
            values.update(zip(self.carried, carried))
            for op in self.ops:
                if isinstance(op, Call):
                    look = lambda s: map_refs(s, values.__getitem__)  # noqa: E731
                    values[op] = op.fn(*look(op.args), **look(op.kwargs))
                elif op.convert(values[op.value]) != op.expected:
                    raise ControlFlowChanged(op.message("the rolled loop"))
            carried = [values[result] for result in self.results]
            for stack, value in zip(stacks, self.saved):
                stack[counter - self.start] = values[value]
        for stack, value in zip(stacks, self.saved):
            if isinstance(value, Param):
                stack[-1] = carried[self.carried.index(value)]
        return (*carried, *stacks)

    def verify(self, fault: Callable[[str], None]) -> None:
        """Report the first way the body is not a closed program over its params."""
        known = set(self.params)
        names = {op: f"%{i + 1}" for i, op in enumerate(self.ops)}
        if len(self.carried) != len(self.results):
            fault("a loop carries a different number of values than its body gives back")
        for op in self.ops:
            if not isinstance(op, (Call, Guard)) or op in known:
                fault(f"loop body op {names[op]} is not a new call or guard")
            for operand in operands(op):
                if operand not in known:
                    fault(f"loop body op {names[op]} reads an op that is neither a parameter "
                          "nor an earlier op of the body")
            known.add(op)
        for value in (*self.results, *self.saved):
            if value not in known:
                fault("a loop gives back or stacks a value its body does not have")
        for param, result in zip(self.carried, self.results):
            if (param.shape, param.dtype) != (result.shape, result.dtype):
                fault(f"a loop carries {param.describe_type()} into an iteration and "
                      f"{result.describe_type()} out of it")

    def listing(self, outer: dict, indent: str = "    ") -> list[str]:
        """The body as `print(tape)` shows it, under the loop's header."""
        names = dict(outer)
        names[self.counter] = "t"
        names.update({p: f"c{k}" for k, p in enumerate(self.carried)})
        names.update({p: f"o{k}" for k, p in enumerate(self.outside)})
        names.update({op: f"b{i + 1}" for i, op in enumerate(self.ops)})
        steps = f"range({self.start}, {self.stop})"
        lines = [f"for t in {f'reversed({steps})' if self.reverse else steps}:"]
        for op in self.ops:
            if isinstance(op, Call):
                parts = [_show(a, names) for a in op.args]
                parts += [f"{k}={_show(v, names)}" for k, v in op.kwargs.items()]
                text = f"{names[op]} = {display_name(op.fn)}({', '.join(parts)})"
            else:
                text = f"guard {op.convert.__name__}({names[op.value]}) == {op.expected!r}"
            lines.append(indent + text)
        carried = ", ".join(names[p] for p in self.carried)
        results = ", ".join(names[r] for r in self.results)
        if carried:
            lines.append(indent + f"{carried} = {results}")
        if self.saved:
            lines.append(indent + "stack " + ", ".join(names[v] for v in self.saved))
        return lines


def is_loop(op) -> bool:
    return isinstance(op, Call) and isinstance(op.fn, Loop)
