"""Scopes while unrolling: one function activation's variables, and the
signals that leave a block (`return`, `break`, `continue`)."""

from __future__ import annotations

import builtins

from yota_src.tracing.source import FunctionSource

GLOBAL, BUILTIN = "global", "builtin"


class Return(Exception):
    def __init__(self, value):
        self.value = value


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Frame:
    """One function activation: locals, enclosing frames, closure cells, globals."""

    __slots__ = ("source", "locals", "parent", "cells", "globals", "declared")

    def __init__(self, source: FunctionSource, locals_: dict, parent, cells: dict, globals_):
        self.source = source
        self.locals = locals_
        self.parent = parent
        self.cells = cells  # free variable name -> cell, for functions defined outside
        self.globals = globals_
        self.declared: set = set()  # names in a `global` statement

    def resolve(self, name: str) -> tuple:
        """(value, where it came from): None for a local of the unrolled code,
        else the cell, GLOBAL or BUILTIN: a read from outside the arguments."""
        frame = self if name not in self.declared else None
        while frame is not None:
            if name in frame.locals:
                return frame.locals[name], None
            cell = frame.cells.get(name)
            if cell is not None:
                try:
                    return cell.cell_contents, cell
                except ValueError:
                    raise NameError(f"free variable {name!r} referenced before assignment "
                                    "in enclosing scope") from None
            frame = frame.parent
        if name in self.globals:
            return self.globals[name], GLOBAL
        if hasattr(builtins, name):
            return getattr(builtins, name), BUILTIN
        raise NameError(f"name {name!r} is not defined")

    def child(self) -> Frame:
        """A scope for a comprehension: reads fall through to this frame."""
        return Frame(self.source, {}, self, {}, self.globals)
