"""Adjoints of higher-order ops, by kind: ops whose `fn` is a program of its
own (a rolled loop, `ir.loops.Loop`), as autodidax keeps the rules of `cond`
and `scan` in a table the transformation owns.

The kind's module fills the table (loop_adjoint.py registers `Loop`), so the
reverse sweep asks here and imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable

# kind of `fn` -> adjoint(driver, known, op, dy, active, grads): adds the op's
# contributions to its operands' gradients in `grads`, as propagate.py does
_ADJOINTS: dict[type, Callable] = {}


def register(kind: type) -> Callable[[Callable], Callable]:
    """Register the decorated function as the adjoint of calls of a `kind` object."""

    def adjoint(function: Callable) -> Callable:
        _ADJOINTS[kind] = function
        return function

    return adjoint


def adjoint_of(fn) -> Callable | None:
    return _ADJOINTS.get(type(fn))
