"""Decisions taken from traced values: a branch test, an `in` or `is`, a
count, an index, the hash of a dict key. Each is taken on the example value
and, where the value came from the data, recorded as a Guard, so the
straight-line code refuses inputs that would have gone another way."""

from __future__ import annotations

import operator

from yota_src.core import operators, primitives
from yota_src.ir.tape import Call, Const, Input, Op
from yota_src.tracing.row_lists import refuse_identity
from yota_src.tracing.source import node_text
from yota_src.tracing.traced import Traced


class Decisions:
    """Static Python values from traced ones, guarded, with a text that
    says what was decided for the error a changed decision raises."""

    def __init__(self, unroller):
        self.unroller = unroller

    def concretize(self, value, convert, node, frame, text=None):
        """A static Python value from a possibly traced one, guarded if it came
        from the data (a branch test, an int loop count, a data-dependent shape).

        Without a node the decision was asked for by code running natively (a
        comparison inside sorted(), the hash of a dict key): the guard names
        the value and the call that made it."""
        if not isinstance(value, Traced):
            return convert(value)
        result = convert(value.value)
        if value.op.depends:
            unroller = self.unroller
            within = None
            if node is None and text is None:
                node, frame = unroller.native or (None, None)
                text, within = self.expression_text(value.op), node and node_text(node)
            if text is None and not unroller.user_code:  # a rule's decision: say what it read
                text = self.expression_text(value.op)
            unroller.recorder.guard(value.op, result, convert, text or node_text(node),
                                    unroller.decision_location(node, frame), within)
        return result

    def decide(self, value: Traced, convert):
        """A decision taken by code running natively (`bool`, `hash`, `index`)."""
        return self.concretize(value, convert, None, None)

    def truth(self, value, node, frame) -> bool:
        """`if value:` — a user object holding traced values is asked through
        its `__bool__` (or `__len__`), unrolled; the answer is guarded."""
        if self.unroller.operators.compares_itself(value):
            for dunder in ("__bool__", "__len__"):
                answer = self.unroller.operators.operator_method(value, dunder)
                if answer is not NotImplemented:
                    return self.truth(answer, node, frame)
        return self.concretize(value, bool, node, frame)

    def contains(self, container, item, node, frame) -> bool:
        """`item in container` on values: a traced container records the test;
        a static one is searched natively, so each comparison (and hash) it
        makes of a traced item is a guarded decision."""
        if isinstance(container, Traced):
            found = self.unroller.primitive(operator.contains, (container, item), {})
            return self.concretize(found, bool, node, frame) if node is not None \
                else self.decide(found, bool)
        # `"KEY" in os.environ`, `3 in QUEUE`
        self.unroller.outside_reads.depend_on_contents(container)
        return self.unroller.natively(node, frame, operator.contains, container, item)

    def identical(self, left, right, node, frame) -> bool:
        """`a is b` asks whether two names hold one object: for traced values,
        whether their example values are one object, as in Python (so
        `np.asarray(x) is x`). Two arguments, or an argument and an array from
        outside, may be one object at one call and not the next: that is guarded."""
        refuse_identity(left, right)
        value = lambda v: v.value if isinstance(v, Traced) else v  # noqa: E731
        same = value(left) is value(right)
        if isinstance(left, Traced) and isinstance(right, Traced) and left.op is not right.op \
                and isinstance(left.op, (Input, Const)) and isinstance(right.op, (Input, Const)):
            self.concretize(self.unroller.primitive(operator.is_, (left, right), {}), bool,
                            node, frame)
        return same

    def expression_text(self, op: Op, depth: int = 0) -> str:
        """A short expression for a traced value, for guard messages: the user's
        name for it, or how it was computed from named values (`x[1] < x[0]`)."""
        if op.hint:
            return op.hint
        if isinstance(op, Input):
            return self.unroller.recorder.input_names.get(op, "an argument")
        if not isinstance(op, Call) or depth > 2:
            return "..."
        show = lambda a: self.expression_text(a, depth + 1) if isinstance(a, Op) \
            else _short_repr(a)  # noqa: E731
        fn, args = op.fn, op.args
        if fn is operator.getitem:
            return f"{show(args[0])}[{_index_text(args[1], show)}]"
        if fn is primitives.T:
            return f"{show(args[0])}.T"
        symbol = operators.SYMBOLS.get(fn)
        if symbol and len(args) == 2:
            return f"{show(args[0])} {symbol} {show(args[1])}"
        if symbol and len(args) == 1:
            return f"{symbol}{show(args[0])}"
        return f"{primitives.display_name(fn)}({', '.join(show(a) for a in args)})"


def _short_repr(value) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _index_text(index, show) -> str:
    items = index if isinstance(index, tuple) else (index,)
    parts = []
    for item in items:
        if isinstance(item, slice):
            bounds = ["" if p is None else show(p) for p in (item.start, item.stop, item.step)]
            parts.append(":".join(bounds[:2] if item.step is None else bounds))
        else:
            parts.append("..." if item is Ellipsis else show(item))
    return ", ".join(parts)
