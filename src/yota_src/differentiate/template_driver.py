"""The template driver: the reverse sweep's handle on the trace stage.

Adjoint templates are plain Python. The driver runs each one on the forward
values with an interpreter of the trace stage that runs library code, not
the user's (`Unroller(user_code=False)`): what a template computes from
traced values is recorded, what it computes from static ones (shapes,
`unbroadcast`'s axes) folds now. The driver also holds what the sweep keeps
beside the ops it records, so the tracer knows nothing of differentiation.
"""

from __future__ import annotations

import contextlib

import gast

from yota_src.errors import Location
from yota_src.ir import contexts
from yota_src.ir.tape import Call, Op
from yota_src.tracing import Frame, Unroller, signature_of
from yota_src.tracing.source import closure_cells, function_source
from yota_src.tracing.traced import Traced


class TemplateDriver:
    """Runs templates and records the gradient ops they compute."""

    def __init__(self, input_names: dict | None = None, any_rows: frozenset = frozenset(),
                 dims=None):
        # `dims`: the forward trace's DimFacts, which the templates' shapes extend
        self.interpreter = Unroller(user_code=False, dims=dims)
        self.dims = dims
        self.recorder = self.interpreter.recorder
        # each input's expression (the forward trace's), for guard and error messages
        self.input_names = self.recorder.input_names = {} if input_names is None \
            else input_names
        # forward loop call -> the call that also stacks what its adjoint reads (loop_adjoint.py)
        self.resaved: dict[Call, Call] = {}
        # array arguments a trip count is read from: any number of rows, gradients made like them
        self.any_rows = any_rows

    @property
    def loc(self) -> Location | None:
        """Where the ops recorded now come from (the primal's line)."""
        return self.interpreter.loc

    @contextlib.contextmanager
    def located(self, loc: Location | None):
        """Ops recorded meanwhile come from `loc`."""
        saved, self.interpreter.loc = self.interpreter.loc, loc
        try:
            yield
        finally:
            self.interpreter.loc = saved

    def traced(self, op: Op, value) -> Traced:
        """A forward (or reversed-loop) value, as templates compute on it."""
        return Traced(op, value, self.interpreter)

    def primitive(self, fn, args: tuple, kwargs: dict):
        """`fn` applied: recorded where a traced value takes part, else folded."""
        with self.sizes():
            return self.interpreter.primitive(fn, args, kwargs)

    def binary(self, fn, left, right):
        """A Python operator on values, as a template's `a + b` is."""
        with self.sizes():
            return self.interpreter.operators.binary(fn, left, right)

    def sizes(self):
        """While this driver records: a size used as a number (`2.0 / n`) is
        recorded here (ir/dims.py)."""
        if self.dims is None:
            return contextlib.nullcontext()
        return self.dims.recording(lambda: self.interpreter.loc, self.recorder.dimension)

    def run_template(self, template, dy, y, args: tuple, kwargs: dict, wants,
                     loc: Location | None) -> list[tuple]:
        """Run an adjoint template; return (parameter, input value, gradient) triples.

        `wants(param, value)` says which inputs need a gradient. Top-level
        assignments of the other `d<param>` are skipped, so a rule never
        records what nobody asked for.
        """
        source = function_source(template)
        signature = signature_of(template)
        first, second, *rest = signature.parameters.values()
        bound = signature.replace(parameters=rest).bind(*args, **kwargs)
        bound.apply_defaults()
        needed = [name for name, value in bound.arguments.items() if wants(name, value)]
        if not needed:
            return []
        frame = Frame(source, {first.name: dy, second.name: y, **bound.arguments},
                      None, closure_cells(template), template.__globals__)
        skipped = {f"d{p.name}" for p in rest} - {f"d{name}" for name in needed} \
            - _names_read(source.node)  # `da = f(db)` needs db even where b needs none
        loc = contexts.gradient_location(loc)  # under the primal's error handling
        interpreter = self.interpreter
        saved = interpreter.loc, interpreter.native
        interpreter.loc, interpreter.native = loc, None
        try:
            with contexts.applied(loc.context if loc else ()), self.sizes():
                for stmt in source.node.body:
                    if not (isinstance(stmt, gast.Assign) and _assigned_names(stmt) <= skipped):
                        interpreter.exec(stmt, frame)
        finally:
            interpreter.loc, interpreter.native = saved
        return [(name, bound.arguments[name], frame.locals.get(f"d{name}")) for name in needed]


def _names_read(node) -> set:
    return {each.id for each in gast.walk(node)
            if isinstance(each, gast.Name) and isinstance(each.ctx, gast.Load)}


def _assigned_names(stmt: gast.Assign) -> set:
    return {t.id for t in stmt.targets if isinstance(t, gast.Name)} or {None}
