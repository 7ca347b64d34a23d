"""The rewrites of a loop's body: a rolled loop's body is a program of its
own (loops.py), which the passes of the tape around it do not look into."""

from __future__ import annotations

from collections.abc import Callable

from ..loops import Loop, Param
from ..tape import Call, Op, Tape
from .rewrite import rewrite


def in_loop_bodies(*passes: Callable[[Tape], Tape]) -> Callable[[Tape], Tape]:
    """A pass that runs `passes` on the body of each loop of the tape."""
    def loop_bodies(tape: Tape) -> Tape:
        def visit(op: Op, forward: bool, original: Op) -> Op:
            if not (isinstance(op, Call) and isinstance(op.fn, Loop)):
                return op
            loop = op.fn
            body = Tape([*loop.params, *loop.ops], (loop.results, loop.saved), None,
                        labels=dict(loop.labels), origins=dict(loop.origins))
            for each in passes:
                body = each(body)
            if body.ops == [*loop.params, *loop.ops]:
                return op
            results, saved = body.output
            rewritten = Loop(loop.counter, loop.carried, loop.outside,
                             [each for each in body.ops if not isinstance(each, Param)],
                             tuple(results), tuple(saved), loop.start, loop.stop, loop.reverse,
                             loop.loc, body.labels, {**loop.origins, **body.origins})
            made = Call(rewritten, op.args, op.kwargs, op.shape, op.dtype, op.loc, op.depends)
            made.hint = op.hint
            return made
        return rewrite(tape, visit)
    loop_bodies.__name__ = f"loop_bodies({', '.join(each.__name__ for each in passes)})"
    return loop_bodies
