"""`if` statements decided by the data inside a loop: their arms marked.

Outside loops, an `if` on the data is decided on the example and guarded
(decisions.py): the code serves the data that go the same way. Inside a
loop, the iterations of one run often go both ways (a hinge loss's
`if margin > 0:`), and the loop rolls only if its body can take either arm.
So here each op the taken arm records carries (entry, arm) in its
location's `branches`, the decision's guard carries (entry, "test"), and
after the statement every name it assigns gets a new op (`joined`), made
whichever arm ran: iterations then line up op for op, and the roll pass
(passes/branches.py) makes the arms seen in a run one branch op. Where
the arm changed state its ops do not show (a Python value, an object), the
marks are left off: the guard stands, as outside loops.

`continue` at the end of an arm directly in a loop's body reads as the
rest of the body in the other arm (`if j == y[i]: continue` then the work:
the work is the `else`), which is what Python does.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import gast

from yota_src.core import primitives
from yota_src.errors import BranchEntry
from yota_src.ir.tape import Guard
from yota_src.tracing.counts import assigned_names
from yota_src.tracing.traced import Traced, give_name

_ESCAPES = (gast.Break, gast.Continue, gast.Return, gast.Raise, gast.Yield, gast.YieldFrom,
            gast.Global, gast.Nonlocal, gast.Delete)


_UNBOUND = object()


def _static(value) -> bool:
    """A number a join may hold as it is."""
    return type(value) in (int, float, complex)


class Branches:
    """Marks the arms of data-decided `if` statements run inside loops."""

    def __init__(self, unroller):
        self.unroller = unroller
        self.enabled = True  # False: every decision a guard, as outside loops
        self.entries = itertools.count()
        self._bodies: dict[int, tuple[list, list]] = {}  # id(body) -> (body, as run)
        self._names: dict[int, tuple | None] = {}  # id(if) -> names it assigns, or None

    def loop_body(self, body: list) -> list:
        """The statements a loop's body runs: an `if` whose arm ends in
        `continue` holds the rest of the body in its other arm."""
        known = self._bodies.get(id(body))
        if known is None or known[0] is not body:
            known = self._bodies[id(body)] = (body, _without_continue(body))
        return known[1]

    def run(self, stmt, frame, test, exec_block) -> None:
        """`if test:` with `test` decided (and guarded) by the caller: run the
        arm taken, marked where it may join."""
        unroller = self.unroller
        ops = unroller.recorder.ops
        before = len(ops)
        taken = unroller.decisions.truth(test, stmt.test, frame)
        arm = stmt.body if taken else stmt.orelse
        guard = ops[-1] if len(ops) > before and isinstance(ops[-1], Guard) else None
        names = self._assigned(stmt) if guard is not None and unroller.loops \
            and unroller.user_code and self.enabled else None
        if names is None or not unroller.recorder.keep_values:
            exec_block(arm, frame)
            return
        entry = BranchEntry(next(self.entries), stmt, names)
        before = {name: frame.locals[name] for name in names if name in frame.locals}
        outer, calls = unroller.branches, unroller.opaque_calls
        guard.loc = replace(guard.loc, branches=outer + ((entry, "test"),))
        first = len(ops)
        unroller.branches = outer + ((entry, taken),)
        try:
            exec_block(arm, frame)
        finally:
            unroller.branches = outer
        joined = [name for name in names if name in frame.locals or name in before]
        values = [frame.locals.get(name, _UNBOUND) for name in joined]
        if unroller.opaque_calls != calls or not all(
                isinstance(value, Traced) or _static(value) and value is before.get(name)
                for name, value in zip(joined, values)):
            self._unmark(guard, ops[first:], entry, outer)
            return
        unroller.branches = outer + ((entry, "join"),)
        try:
            unroller.at(stmt, frame)
            for name, value in zip(joined, values):
                frame.locals[name] = self._joined(value, before.get(name))
                give_name(frame.locals[name], name)
        finally:
            unroller.branches = outer

    def _joined(self, value, before) -> Traced:
        """A name's value after the statement (and before it), as a new op: a
        number the arm left as it was (`loss = 0.0` before the first margin)
        too, so that the first iteration lines up with the others."""
        before = before if isinstance(before, Traced) or _static(before) else None
        if isinstance(value, Traced):
            made = self.unroller.primitive(primitives.joined, (value, before), {})
        else:
            made = self.unroller.recorder.record(primitives.joined, (value, before), {}, value,
                                                 self.unroller.loc, note_views=False)
        made.op.depends = True  # which arm ran is the data's decision: so is what it left
        return made

    def _assigned(self, stmt) -> tuple | None:
        """The names either arm assigns (sorted), or None where an arm does
        more than assign names and call (or leaves the statement early)."""
        if id(stmt) not in self._names:
            stored: set = set()
            names = assigned_names(stmt.body + stmt.orelse, stored)
            escapes = any(isinstance(node, _ESCAPES) for part in stmt.body + stmt.orelse
                          for node in gast.walk(part))
            self._names[id(stmt)] = None if names is None or escapes \
                else tuple(sorted(names | stored))
        return self._names[id(stmt)]

    @staticmethod
    def _unmark(guard: Guard, ops: list, entry: BranchEntry, outer: tuple) -> None:
        """The arm changed what its ops do not show: the guard stands."""
        guard.loc = replace(guard.loc, branches=outer)
        for op in ops:
            if op.loc is not None and (entry, True) in op.loc.branches \
                    or op.loc is not None and (entry, False) in op.loc.branches:
                op.loc = replace(op.loc, branches=tuple(
                    mark for mark in op.loc.branches if mark[0] is not entry))


def _without_continue(body: list) -> list:
    """`body` with each `if ...: ...; continue` at its top level holding the
    statements after it in its `else` (after the `else` it had)."""
    for at, stmt in enumerate(body):
        if isinstance(stmt, gast.If) and stmt.body and isinstance(stmt.body[-1], gast.Continue):
            rest = _without_continue(body[at + 1:])
            made = gast.If(test=stmt.test, body=stmt.body[:-1] or [_pass(stmt.body[-1])],
                           orelse=stmt.orelse + rest)
            gast.copy_location(made, stmt)
            return body[:at] + [made]
    return body


def _pass(node) -> gast.Pass:
    return gast.copy_location(gast.Pass(), node)
