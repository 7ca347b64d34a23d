"""Expressions while unrolling: names (reads from outside go to the outside
reads), operators, comparisons, calls, containers, comprehensions,
generator expressions (lazy, as in Python), `yield`, f-strings. One small
`eval_<node>` method per expression kind; the interpreter dispatches to them."""

from __future__ import annotations

import operator

import gast

from yota_src.core import operators, primitives
from yota_src.errors import Location
from yota_src.ir.dims import Dim
from yota_src.tracing.generators import UnrolledGenerator
from yota_src.tracing.ownership import holds_traced
from yota_src.tracing.row_lists import as_rows
from yota_src.tracing.source import node_text
from yota_src.tracing.traced import Traced, has_traced

BINARY = operators.by_node(gast, "binary")
UNARY = operators.by_node(gast, "unary")
COMPARE = operators.by_node(gast, "compare")


class Expressions:
    """The value of each expression."""

    def __init__(self, unroller):
        self.unroller = unroller
        self.eval = unroller.eval  # the interpreter's dispatch, reached at every node

    def eval_Constant(self, node, frame):
        return node.value

    def eval_Name(self, node, frame):
        try:
            value, origin = frame.resolve(node.id)
        except NameError as error:
            raise NameError(f"{error} ({self.unroller.location_of(node, frame).short})") from None
        if origin is None:
            return value
        return self.unroller.outside_reads.read_outside(node.id, value, origin, frame)

    def eval_Attribute(self, node, frame):
        return self.unroller.access.attribute(self.eval(node.value, frame),
                                              frame.source.mangle(node.attr), node, frame)

    def eval_Subscript(self, node, frame):
        unroller = self.unroller
        container = self.eval(node.value, frame)
        if isinstance(as_rows(container), Traced) or not unroller.index_nodes:
            return unroller.access.subscript(container, self.index(container, node, frame),
                                             node, frame)
        # `coeffs[t]`: the counter is used
        saved, unroller.python_index = unroller.python_index, True
        try:
            index = self.eval(node.slice, frame)
        finally:
            unroller.python_index = saved
        return unroller.access.subscript(container, index, node, frame)

    def index(self, container, node, frame):
        """The index of `container[...]` (read or written): of a traced
        array, its slices keep sizes as bounds (`eval_Slice`)."""
        unroller = self.unroller
        saved, unroller.sized_slices = unroller.sized_slices, isinstance(as_rows(container),
                                                                          Traced)
        try:
            return self.eval(node.slice, frame)
        finally:
            unroller.sized_slices = saved

    def eval_Slice(self, node, frame):
        """A slice of a traced array keeps a bound made of sizes and numbers
        as a size (`a[:, :H]`: the result has `H` columns, ir/shapes.py); any
        other bound is a number (`i:i + k` with a loop's counter `i`: a window
        that moves with the loop)."""
        concretize, sized = self.unroller.decisions.concretize, self.unroller.sized_slices

        def bound(part):
            if part is None:
                return None
            value = self.eval(part, frame)
            if sized and isinstance(value, Dim) and not self._reads_an_int(part, frame):
                return value
            return concretize(value, operator.index, part, frame)

        return slice(bound(node.lower), bound(node.upper), bound(node.step))

    def _reads_an_int(self, part, frame) -> bool:
        """Whether an expression reads a name that holds a plain int (a loop's
        counter, an int argument)."""
        return any(isinstance(name, gast.Name) and type(value := self.eval(name, frame)) is not bool
                   and isinstance(value, int) for name in gast.walk(part))

    def eval_BinOp(self, node, frame):
        return self.unroller.operators.binary(BINARY[type(node.op)], self.eval(node.left, frame),
                                              self.eval(node.right, frame))

    def eval_UnaryOp(self, node, frame):
        operand = self.eval(node.operand, frame)
        if isinstance(node.op, gast.Not):
            return not self.unroller.decisions.truth(operand, node.operand, frame)
        fn = UNARY[type(node.op)]
        if holds_traced(operand):  # a static object's operator runs as Python runs it
            dunder = f"__{fn.__name__.strip('_')}__"
            result = self.unroller.operators.operator_method(operand, dunder)
            if result is not NotImplemented:
                return result
        return self.unroller.primitive(fn, (operand,), {}) if isinstance(operand, Traced) \
            else fn(operand)

    def eval_BoolOp(self, node, frame):
        stop_when = isinstance(node.op, gast.Or)
        for value_node in node.values:
            value = self.eval(value_node, frame)
            if self.unroller.decisions.truth(value, value_node, frame) == stop_when:
                return value
        return value

    def eval_Compare(self, node, frame):
        decisions = self.unroller.decisions
        left = self.eval(node.left, frame)
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, frame)
            if isinstance(op, (gast.Is, gast.IsNot)):
                result = decisions.identical(left, right, node, frame) != isinstance(op, gast.IsNot)
            elif isinstance(op, (gast.In, gast.NotIn)):
                result = decisions.contains(right, left, node, frame) != isinstance(op, gast.NotIn)
            else:
                result = self.unroller.operators.binary(COMPARE[type(op)], left, right)
            if len(node.ops) > 1 and not decisions.truth(result, node, frame):
                return result
            left = right
        return result

    def eval_IfExp(self, node, frame):
        taken = self.unroller.decisions.truth(self.eval(node.test, frame), node.test, frame)
        return self.eval(node.body if taken else node.orelse, frame)

    def eval_Call(self, node, frame):
        fn = self.eval(node.func, frame)
        args = []
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                args.extend(self.unroller.access.iterate(self.eval(arg.value, frame), arg,
                                                         frame))
            else:
                args.append(self.eval(arg, frame))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.eval(keyword.value, frame))
            else:
                kwargs[keyword.arg] = self.eval(keyword.value, frame)
        unroller = self.unroller
        saved = unroller.loc, unroller.native
        if unroller.user_code:  # errors point at the call
            unroller.loc = unroller.in_context(frame.source.location(node))
        unroller.native = (node, frame)  # what native code decides is named after the call
        try:
            return unroller.calls.call(fn, tuple(args), kwargs, node, frame)
        finally:
            unroller.loc, unroller.native = saved

    def eval_Lambda(self, node, frame):
        return self.unroller.calls.make_function(node, frame, "<lambda>")

    def eval_Tuple(self, node, frame):
        return tuple(self.elements(node.elts, frame))

    def eval_List(self, node, frame):
        return self.elements(node.elts, frame)

    def eval_Set(self, node, frame):
        return set(self.elements(node.elts, frame))

    def eval_Dict(self, node, frame):
        out = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                out.update(self.eval(value, frame))
            else:
                out[self.eval(key, frame)] = self.eval(value, frame)
        return out

    def elements(self, nodes, frame) -> list:
        out = []
        for node in nodes:
            if isinstance(node, gast.Starred):
                out.extend(self.unroller.access.iterate(self.eval(node.value, frame), node,
                                                        frame))
            else:
                out.append(self.eval(node, frame))
        return out

    def eval_ListComp(self, node, frame):
        return self.comprehension(node.generators, frame, lambda s: self.eval(node.elt, s))

    def eval_GeneratorExp(self, node, frame):
        """A generator expression is lazy, as in Python: its first iterable is
        evaluated now, each item when it is asked for (so names bound later
        are seen, a consumed generator is empty, and next() works)."""
        unroller = self.unroller
        scope, generators = frame.child(), node.generators
        where = frame.source.location(node) if unroller.user_code else unroller.loc

        def produce(level: int, iterable):
            generator = generators[level]
            for item in iterable:
                unroller.statements.bind(generator.target, item, scope)
                if not all(unroller.decisions.truth(self.eval(test, scope), test, scope)
                           for test in generator.ifs):
                    continue
                if level + 1 == len(generators):
                    yield self.eval(node.elt, scope)
                else:
                    inner = generators[level + 1]
                    yield from produce(level + 1, unroller.access.items(
                        self.eval(inner.iter, scope), inner.iter, scope))

        first = generators[0].iter
        items = unroller.access.items(self.eval(first, frame), first, frame)
        return self.located(produce(0, items), where)

    def located(self, generator, loc: Location | None):
        """Advance `generator` with its own source location as the current one
        (its items are computed when a later line consumes them)."""
        unroller = self.unroller
        while True:
            saved = unroller.loc, unroller.native
            unroller.loc, unroller.native = loc, None
            try:
                item = next(generator)
            except StopIteration:
                return
            finally:
                unroller.loc, unroller.native = saved
            yield item

    def eval_SetComp(self, node, frame):
        return set(self.eval_ListComp(node, frame))

    def eval_DictComp(self, node, frame):
        pairs = self.comprehension(node.generators, frame, lambda s: (
            self.eval(node.key, s), self.eval(node.value, s)))
        return dict(pairs)

    def comprehension(self, generators, frame, element) -> list:
        unroller = self.unroller
        scope, out = frame.child(), []

        def loop(level: int):
            if level == len(generators):
                out.append(element(scope))
                return
            generator = generators[level]
            iterable = self.eval(generator.iter, frame if level == 0 else scope)
            for item in unroller.access.iterate(iterable, generator.iter, frame):
                unroller.statements.bind(generator.target, item, scope)
                if all(unroller.decisions.truth(self.eval(test, scope), test, scope)
                       for test in generator.ifs):
                    loop(level + 1)

        loop(0)
        return out

    def eval_Yield(self, node, frame):
        if self.unroller.generator is None:
            raise self.unroller.unsupported(node, frame, f"the expression `{node_text(node)}`")
        return self.unroller.generator.give(None if node.value is None
                                            else self.eval(node.value, frame))

    def eval_YieldFrom(self, node, frame):
        """PEP 380: items pass through, values sent in pass down to an
        unrolled generator, and its return value is the expression's value."""
        if self.unroller.generator is None:
            raise self.unroller.unsupported(node, frame, f"the expression `{node_text(node)}`")
        inner = self.eval(node.value, frame)
        if not isinstance(inner, UnrolledGenerator):
            for item in self.unroller.access.items(inner, node.value, frame):
                self.unroller.generator.give(item)
            return None
        sent, thrown = None, None
        while True:
            try:
                item = inner.throw(thrown) if thrown is not None else inner.send(sent)
            except StopIteration as finished:
                return finished.value
            try:
                sent, thrown = self.unroller.generator.give(item), None
            except Exception as error:  # thrown in: passed down (closing is no Exception)
                sent, thrown = None, error

    def eval_NamedExpr(self, node, frame):
        value = self.eval(node.value, frame)
        self.unroller.statements.bind(node.target, value, frame)
        return value

    def eval_JoinedStr(self, node, frame):
        """An f-string holding traced values is a recorded value of its own,
        printed as the same f-string: it shows the live values at every call."""
        pieces = tuple(self.format_piece(part, frame) for part in node.values)
        if not has_traced(pieces):
            return primitives.fstring(*pieces)
        return self.unroller.primitive(primitives.fstring, pieces, {})

    def format_piece(self, part, frame):
        """A literal string, or (value, conversion, spec) for `{value!r:spec}`."""
        if not isinstance(part, gast.FormattedValue):
            return self.eval(part, frame)
        spec = "" if part.format_spec is None else self.eval(part.format_spec, frame)
        if isinstance(spec, Traced):
            spec = self.unroller.decisions.concretize(spec, str, part.format_spec, frame)
        conversion = chr(part.conversion) if part.conversion > 0 else ""
        return self.eval(part.value, frame), conversion, spec
