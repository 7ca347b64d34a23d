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

import copy
import itertools
import operator
from collections.abc import Callable

import numpy as np

from yota_src.core.primitives import has_effect, index_add, index_update
from yota_src.errors import ControlFlowChanged, Location
from yota_src.ir.dims import Count, at_counts, facts_of, plain
from yota_src.ir.tape import Call, Guard, Op, map_refs, op_text, operands, readers

COUNTER, CARRIED, OUTSIDE = "counter", "carried", "outside"


class Param(Op):
    """What a body reads: the counter, a carried variable or an outside value."""

    __slots__ = ("role",)

    def __init__(self, role: str, shape, dtype, hint: str | None = None, dims=None):
        super().__init__(shape, dtype, None, depends=role != COUNTER)
        self.role = role
        self.hint = hint
        self.dims = dims  # the sizes of the value it stands for (ir/dims.py)


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
                 origins: dict | None = None, bound: int | None = None,
                 test: Guard | None = None):
        self.counter, self.carried, self.outside = counter, tuple(carried), tuple(outside)
        self.ops, self.results, self.saved = list(ops), tuple(results), tuple(saved)
        self.start, self.stop, self.reverse = start, stop, reverse
        self.loc = loc
        self.labels = labels or {}
        self.origins = origins or {}
        # where the trip count is read at run time: the call's last argument is an
        # int argument `n` of the function, and the counter stops at `n + bound`
        # (`stop` is the example's)
        self.bound = bound
        # the trip count as the code computes it from the arguments' sizes (a Dim,
        # ir/dims.py), where it is one: the call's last argument is its value
        self.size = None
        # a `while` loop's test: the body's guard that, once it fails, ends the loop
        # (before the rest of the body) rather than refusing the data; the call
        # then also gives how many iterations ran, after the stacks, which are lists
        self.test = test
        # outside values the body stopped reading (a pass moved their use out of
        # the loop), by the outer values they stood for: labels may still name them
        self.dropped: dict = {}
        self._memo: dict = {}  # the last run on the example, shared with `saving` copies
        self.entry = None  # the loop statement's entry, for a loop rolled while traced
        self._flat = None
        # a reversed loop the reverse pass does not run on the example, which gives
        # zeros of its outputs' types (loop_adjoint.py: only long loops)
        self.placeholder = False
        self._code = None  # (ops, what it stacks, the loop as a Python function): `_compiled`
        self._mask_ops = None  # (ops, each count of a mask of the body -> its mask): `masks`
        self.__name__ = self.__qualname__ = "loop"

    def replace(self, **changes) -> Loop:
        """The same loop with some fields changed (a run on the example is
        remembered for a loop that only stacks more)."""
        made = copy.copy(self)
        for name, value in changes.items():
            setattr(made, name, value)
        if set(changes) - {"saved", "bound", "size"}:  # the count read at run time: the same run
            made._memo = {}
        made._flat = made._code = made._mask_ops = None
        return made

    @property
    def params(self) -> tuple:
        return (self.counter, *self.carried, *self.outside)

    @property
    def count(self) -> int:
        return max(self.stop - self.start, 0)

    def counters(self, stop: int) -> range:
        steps = range(self.start, stop)
        return steps[::-1] if self.reverse else steps

    def saving(self, more: tuple) -> Loop:
        """The same loop, stacking `more` values too (after those it stacked)."""
        return self.replace(saved=self.saved + tuple(v for v in more if v not in self.saved))

    def output_types(self, count: int | None = None) -> list[tuple]:
        """(shape, dtype) of each element of the call's value: a carried
        variable's stack holds the value it had coming into each iteration and
        its final value (one more), as a hand-written `hs` does. `count`: the
        iterations a call runs, where not the example's."""
        count = self.count if count is None else count
        finals = [(param.shape, param.dtype) for param in self.carried]
        stacks = [((count + isinstance(value, Param), *value.shape), value.dtype)
                  for value in self.saved]
        return finals + stacks + ([((), np.dtype(int))] if self.test is not None else [])

    def _count_of(self, args: tuple) -> int:
        """How many iterations a call with `args` runs (a count read at run time
        is its last argument)."""
        if self.bound is None or self.test is not None:
            return self.count
        return max(int(args[-1]) + self.bound - self.start, 0)

    def output_dims(self) -> list:
        """The sizes of each element of the call's value (ir/dims.py): a
        carried variable's, and each stack's, its count first."""
        finals = [_sizes(param) for param in self.carried]
        return finals + [self.stack_dims(value) for value in self.saved] \
            + ([()] if self.test is not None else [])

    def stack_dims(self, value: Op, more: bool | None = None) -> tuple:
        """The sizes of the stack of `value`: one row per iteration, one more
        for a carried value (`more`: whether it has one more)."""
        count = self.size + (self.bound - self.start) if self.size is not None else self.count
        more = isinstance(value, Param) if more is None else more
        return (count + int(more), *_sizes(value))

    def effectful(self) -> bool:
        """A body that checks its data or has an effect of its own is never dropped."""
        return any(isinstance(op, Guard) or isinstance(op, Call) and has_effect(op.fn)
                   for op in self.ops)

    def __call__(self, *args):
        if self.placeholder:  # a long reversed loop: what it gives, not its numbers
            return tuple(np.zeros(shape, dtype)
                         for shape, dtype in self.output_types(self._count_of(args)))
        run = self._memo.get("run")
        inputs, stop = (args[:-1], args[-1] + self.bound) if self.bound is not None \
            and self.test is None else (args, self.stop)
        if run is not None and run[0] == stop and len(run[1]) == len(inputs) and all(
                a is b for a, b in zip(run[1], inputs)) \
                and all(value in run[3] for value in self.saved):  # kept what it stacks
            carried, every, ran = run[2:]  # the same example again (the reverse pass asks)
        else:
            carried, every, ran = self._run(args)
            if not self.reverse:
                self._memo["run"] = (stop, inputs, carried, every, ran)
        stacks = []
        for value in self.saved:  # in counter order, whichever way the loop ran
            rows = (every[value][::-1] if self.reverse else every[value]) + (
                [carried[self.carried.index(value)]] if isinstance(value, Param) else [])
            stacks.append(np.array(rows, value.dtype).reshape(len(rows), *value.shape))
        return (*carried, *stacks, *([ran] if self.test is not None else []))

    def _run(self, args: tuple) -> tuple:
        """The carried values after the last iteration, the values of the body's
        values at each iteration (of them all, for a forward loop: the reverse
        pass stacks what it reads without running the loop again), and how
        many iterations ran."""
        stop = self.stop
        if self.bound is not None:
            *args, count = args
            stop = count + self.bound
        in_place = self._in_place()
        carried = [np.array(value, copy=True) if param in in_place else value
                   for param, value in zip(self.carried, args[: len(self.carried)])]
        values: dict[Op, object] = dict(zip(self.outside, args[len(self.carried):]))
        kept = self.saved if self.reverse else tuple(
            op for op in (*self.carried, *self.ops) if not isinstance(op, Guard)
            and op not in in_place and op not in in_place.values())
        every: dict[Op, list] = {value: [] for value in kept}
        counters = itertools.count(self.start) if self.test is not None else \
            self.counters(stop)
        run = self._compiled(tuple(every)) if self.test is None else None
        if run is not None:
            return self._run_compiled(run, counters, carried, args[len(self.carried):], every)
        ran = 0
        for counter in counters:
            values[self.counter] = counter
            values.update(zip(self.carried, carried))
            if not self._iteration(values):
                break
            ran += 1
            carried = [values[result] for result in self.results]
            for value, rows in every.items():
                rows.append(values[value])
        return carried, every, ran

    def _run_compiled(self, run, counters, carried: list, outside: tuple,
                      every: dict) -> tuple:
        """`_run` with the whole loop as one Python function: a long loop runs
        at close to the speed of the user's own."""
        carried, ran = run(counters, *[rows.append for rows in every.values()], *carried,
                           *outside)
        return list(carried), every, ran

    def _compiled(self, kept: tuple):
        """The loop as a Python function of its counters, the appends of the
        rows of `kept` (ops or params, each stacked per iteration) and its
        params giving the carried values after the last iteration and how many
        ran, where each op is a call on ops and numbers (no guard, no nested
        argument); None otherwise."""
        if self._code is not None and self._code[0] is self.ops and self._code[1] == kept:
            return self._code[2]
        steps = self._steps()
        run = None
        if steps and all(flat is not None for _, _, flat in steps):
            scope: dict = {}
            exec(compile("\n".join(self._loop_text(steps, kept, scope)), "<loop>", "exec"),
                 scope)  # noqa: S102
            run = scope["run"]
        self._code = (self.ops, kept, run)
        return run

    def _loop_text(self, steps: list, kept: tuple, scope: dict) -> list[str]:
        """`_compiled`'s function, line by line; `scope` gets what it calls
        and the numbers it reads."""
        names = {param: f"p{number}" for number, param in enumerate(self.params)}
        names.update((op, f"v{number}") for number, (op, _, _) in enumerate(steps))
        appends = [f"a{number}" for number in range(len(kept))]
        lines = [f"def run(counters, {''.join(f'{name}, ' for name in appends)}"
                 f"{''.join(f'{names[p]}, ' for p in self.params[1:])}):",
                 "    ran = 0",
                 f"    for {names[self.params[0]]} in counters:"]
        for number, (_, fn, flat) in enumerate(steps):
            scope[f"f{number}"] = fn
            operands = []
            for place, (is_op, value) in enumerate(flat):
                if not is_op:
                    scope[f"c{number}_{place}"] = value
                operands.append(names[value] if is_op else f"c{number}_{place}")
            lines.append(f"        v{number} = f{number}({', '.join(operands)})")
        lines += [f"        {append}({names[value]})" for append, value in zip(appends, kept)]
        carried = "".join(f"{names[param]}, " for param in self.carried)
        if carried:
            lines.append(f"        {carried}= "
                         f"{''.join(f'{names[result]}, ' for result in self.results)}")
        return [*lines, "        ran += 1", f"    return ({carried}), ran"]

    def _iteration(self, values: dict) -> bool:
        """Run the body once; False where a `while` loop's test ends it."""
        for op, fn, flat in self._steps():
            if flat is not None:  # operands side by side: read without a walk
                values[op] = fn(*[values[a] if is_op else a for is_op, a in flat])
            elif isinstance(op, Call):  # sizes (ir/dims.py) as this iteration's values
                counts = {count: int(np.count_nonzero(values[mask]))
                          for count, mask in self.masks().items() if mask in values}
                look = lambda s: at_counts(map_refs(s, values.__getitem__), counts)  # noqa: E731
                values[op] = fn(*look(op.args), **look(op.kwargs))
            elif op.convert(values[op.value]) != op.expected and not _counted(op):
                if op is self.test:
                    return False
                raise ControlFlowChanged(op.message("the rolled loop"))
        return True

    def masks(self) -> dict:
        """Each count of a mask the body makes (ir/dims.Count) -> that mask:
        a size such as a broadcast's shape takes its iteration's count."""
        if self._mask_ops is None or self._mask_ops[0] is not self.ops:
            masks = {Count(op.selects): op for op in self.ops
                     if isinstance(op, Call) and op.selects is not None}
            self._mask_ops = (self.ops, masks)
        return self._mask_ops[1]

    def _steps(self) -> list:
        """The body's ops, each with its operands laid flat where they are a
        plain list of ops and numbers (most are): running 10,000 iterations
        is then mostly NumPy's time."""
        if self._flat is None or self._flat[0] is not self.ops:
            steps = []
            in_place = self._in_place()
            for op in self.ops:
                flat = isinstance(op, Call) and not op.kwargs and not any(
                    isinstance(a, (tuple, list, dict, slice)) for a in op.args)
                fn = getattr(op, "fn", None)
                if op in in_place.values():  # `dxs[t] += dx` into the loop's own array
                    fn = _add_in_place if op.fn is index_add else _set_in_place
                steps.append((op, fn, tuple((isinstance(a, Op), plain(a)) for a in op.args)
                              if flat else None))
            self._flat = (self.ops, steps)
        return self._flat[1]

    def _in_place(self) -> dict:
        """Carried arrays updated by an index store into them alone (a reversed
        loop's `dxs`): each carried param -> that store. The loop runs them in
        place on its own copy, as the generated code does, not copying the
        array every iteration."""
        users = readers(self.ops, ())
        place = {op: number for number, op in enumerate(self.ops)}

        def read_before(user, result) -> bool:  # `a[i]` read as a number, then `a[i] = ...`
            return user is result or user is not None and place.get(user, len(place)) \
                < place[result] and user.fn is operator.getitem and user.shape == ()

        return {param: result for param, result in zip(self.carried, self.results)
                if isinstance(result, Call) and result.fn in (index_add, index_update)
                and result.args[0] is param and param not in self.saved
                and result in users.get(param, ())
                and all(read_before(user, result) for user in users.get(param, ()))}

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
        stop = self.stop if self.bound is None else f"n{self.bound:+d}"
        steps = f"range({self.start}, {stop})"
        if self.test is None:
            lines = [f"for t in {f'reversed({steps})' if self.reverse else steps}:"]
        else:
            lines = [f"for t from {self.start}, while {names[self.test.value]} holds:"]
        for op in self.ops:
            text = op_text(op, names)
            lines.append(indent + (f"{names[op]} = {text}" if isinstance(op, Call) else text))
            if isinstance(op, Call) and callable(getattr(op.fn, "listing", None)):
                lines += [indent + line for line in op.fn.listing(names, indent)]  # inside
        carried = ", ".join(names[p] for p in self.carried)
        results = ", ".join(names[r] for r in self.results)
        if carried:
            lines.append(indent + f"{carried} = {results}")
        if self.saved:
            lines.append(indent + "stack " + ", ".join(names[v] for v in self.saved))
        return lines


def _sizes(op: Op) -> tuple:
    return op.dims if op.dims is not None else op.shape


def _set_in_place(buffer, index, values):
    buffer[index] = values
    return buffer


def _add_in_place(buffer, index, values):
    buffer[index] += values
    return buffer


def is_loop(op) -> bool:
    """A call of a rolled loop."""
    return isinstance(op, Call) and isinstance(op.fn, Loop)


def is_loop_output(op) -> bool:
    """`loop_call[k]`: a carried value after the loop, or a stack."""
    return isinstance(op, Call) and op.fn is operator.getitem and is_loop(op.args[0])


def _counted(guard: Guard) -> bool:
    """A guard of the counts of masks the code reads at run time: the
    iterations of a stable sigmoid's loop select other numbers each."""
    return guard.read_at_run_time(facts_of(guard.value))
