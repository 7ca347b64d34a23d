"""The adjoint of a rolled loop: the body's adjoint, run from the last
iteration to the first.

The forward loop stacks each value the body's adjoint reads (`hs[t] = h`);
the reversed loop reads them back at its counter, carries the gradient of
each carried variable from one iteration to the one before, and accumulates
the gradients of what the body read from outside: loop invariants summed,
arrays read at the counter written at the counter (`dxs[t] += dx`). The
templates run once, on the example values of the iteration the body was
made from, as they do for any op.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from yota_src.core import primitives, registry
from yota_src.differentiate import higher_order
from yota_src.differentiate.propagate import accumulate, active_ops, plus, propagate
from yota_src.differentiate.template_driver import TemplateDriver
from yota_src.ir.branches import is_branch
from yota_src.ir.dims import Dim, has_dims
from yota_src.ir.loops import CARRIED, COUNTER, OUTSIDE, Loop, Param
from yota_src.ir.shapes import same_mask
from yota_src.ir.tape import Call, Guard, Op, iter_refs, map_refs, operands, sizes
from yota_src.tracing.traced import Traced, values_of

LONG = 64  # iterations from which a reversed loop is not run on the example
# operators on numbers a reversed loop computes again rather than stacks
_CHEAP = frozenset({operator.eq, operator.ne, operator.lt, operator.le, operator.gt,
                    operator.ge, operator.add, operator.sub})


@dataclass
class _Reversed:
    """A reversed loop, and what its call takes and gives back."""

    loop: Loop
    inits: list  # per carried value: ("final", k) the gradient of output k, or ("zeros", param)
    outside: list  # per outside param: the forward loop's outside param it stands for
    stacked: list  # forward body values stacked for it, in the order of its stack params
    stack_grads: list  # output numbers of the forward call whose gradients it reads
    targets: list  # per result: the forward call's argument number it is the gradient of
    # outer products summed over the iterations, done as one product after the loop:
    # (argument number, its stack's output number, the param of the rows, row offset)
    products: list


@higher_order.register(Loop)
def propagate_loop(driver: TemplateDriver, known, op: Call, dy, active: set, grads: dict,
                   look=None) -> None:
    """Add the loop call `op`'s contributions to the gradients of its
    arguments to `grads`; `dy` holds the gradient of each of its outputs
    (None where there is none). The forward call that also stacks what the
    reversed loop reads goes into `driver.resaved`, to take `op`'s place on the tape;
    for a loop inside a loop's body (`look`: what the reversed body reads for a
    forward body value), it runs again in the reversed body, stacking that."""
    resaved = driver.resaved
    look = look or (lambda value: value)

    loop: Loop = op.fn
    dy = list(dy) if isinstance(dy, (list, tuple)) else [None] * len(loop.output_types())
    n_carried = len(loop.carried)
    body_active = _active_body(loop, [look(a) in active for a in op.args[:n_carried]],
                               [look(a) in active for a in op.args[n_carried:]])
    built = _Reverse(driver, known, loop, body_active).build(dy)
    if built is None:
        return
    forward = resaved.get(op, op)
    missing = tuple(v for v in built.stacked if v not in forward.fn.saved)
    args = [driver.traced(look(a), known[a]) if isinstance(a, Op) else a for a in op.args]
    nested = look(op) is op and any(look(a) is not a for a in op.args if isinstance(a, Op))
    if missing and not nested:
        forward = Call(forward.fn.saving(missing), op.args, op.kwargs, None, op.dtype, op.loc,
                       op.depends)
        resaved[op] = forward
    with driver.located(loop.loc):
        order = forward.fn.saved  # the stacks, as the body values they stack
        if nested:  # the forward loop again, in the reversed body of the loop around it
            stacking = loop.saving(missing) if missing else loop
            forward_loop, forward_args = _pruned(stacking, args)
            forward_value = driver.primitive(forward_loop, tuple(forward_args), {})
            forward, order = Call(forward_loop, op.args, op.kwargs, None, op.dtype, op.loc,
                                  op.depends), stacking.saved
        else:
            forward_value = driver.traced(forward, forward.fn(*values_of(args)))

        def part(number: int):
            """Output `number` of the forward call (one made here is a tuple already)."""
            if isinstance(forward_value, tuple):
                return forward_value[number]
            return driver.primitive(operator.getitem, (forward_value, number), {})
        values = []
        for kind, what in built.inits:
            if kind == "final" and dy[what] is not None:
                values.append(dy[what])
            else:
                like = loop.carried[what] if kind == "final" else what
                outside = args[n_carried + loop.outside.index(what)] if kind == "zeros" else None
                values.append(driver.primitive(np.zeros_like, (outside,), {})
                              if isinstance(outside, Traced) and outside.op in driver.any_rows
                              else _zeros(driver, like))
        values += [args[n_carried + loop.outside.index(p)] for p in built.outside]
        kept = len(forward.fn.carried)  # (fewer where the loop runs again for its stacks)
        values += [part(kept + order.index(v)) for v in built.stacked]
        values += [dy[number] for number in built.stack_grads]
        if loop.test is not None:  # as many iterations back as the `while` loop ran
            values.append(part(kept + len(order)))
        elif loop.bound is not None:  # the trip count, read at run time
            values.append(args[-1])
        parts = driver.primitive(built.loop, tuple(values), {})  # a tuple of traced parts
        for grad, target in zip(parts, built.targets):
            accumulate(driver, op, args[target], grad, active, grads)
        for target, number, rows, offset in built.products:
            grad = _product(driver, built.loop, values, parts[len(built.targets) + number],
                            rows, offset)
            accumulate(driver, op, args[target], grad, active, grads)


def _pruned(loop: Loop, args: list) -> tuple[Loop, list]:
    """A forward loop run again for its stacks alone (in a reversed outer
    body), without the carried values none of them needs: an inner loop's
    output buffer is not rebuilt, nor stacked by the loop around it."""
    if loop.test is not None:
        return loop, args
    slots: set[int] = set()
    while True:
        live = set(loop.saved) | {op for op in loop.ops if isinstance(op, Guard)
                                  or isinstance(op, Call) and primitives.has_effect(op.fn)
                                  and not (is_branch(op) and not op.fn.effectful(False))}
        live |= {loop.results[k] for k in slots}
        for op in reversed(loop.ops):
            if op in live:
                live.update(operands(op))
        more = {k for k, param in enumerate(loop.carried) if param in live} - slots
        if not more:
            break
        slots |= more
    keep = sorted(slots)
    n_carried = len(loop.carried)
    outside = [j for j, param in enumerate(loop.outside) if param in live]
    made: dict[Op, Op] = {}  # its own ops: the forward loop's stay the forward loop's
    look = lambda value: made.get(value, value)  # noqa: E731
    for op in loop.ops:
        if op in live:
            made[op] = op.on(look(op.value)) if isinstance(op, Guard) else _copied(op, look)
    pruned = loop.replace(carried=tuple(loop.carried[k] for k in keep),
                          results=tuple(look(loop.results[k]) for k in keep),
                          outside=tuple(loop.outside[j] for j in outside),
                          ops=list(made.values()), saved=tuple(map(look, loop.saved)),
                          origins={**loop.origins, **{new: loop.origins.get(old, old)
                                                      for old, new in made.items()}},
                          labels={look(op): label for op, label in loop.labels.items()})
    return pruned, [*(args[k] for k in keep), *(args[n_carried + j] for j in outside),
                    *args[n_carried + len(loop.outside):]]


def _copied(op: Call, look) -> Call:
    made = Call(op.fn, map_refs(op.args, look), map_refs(op.kwargs, look), op.shape, op.dtype,
                op.loc, op.depends)
    made.hint, made.dims, made.last_name = op.hint, op.dims, op.last_name
    made.selects = op.selects
    return made


def _product(driver: TemplateDriver, loop: Loop, values: list, stack, rows: Param, offset: int):
    """`vs.T @ xs`: the sum over the iterations of the outer product of the
    per-step vector (stacked at the counter) and the row read there."""
    array = values[len(loop.carried) + loop.outside.index(rows)]
    first = loop.start + offset
    count = values[-1] if loop.bound is not None else None
    whole = count is not None and not first and not loop.bound + offset \
        and getattr(count.op, "fn", None) is len and count.op.args[0] is array.op
    if loop.size is not None:  # a count computed from sizes: the rows it reaches, as sizes
        stop = loop.size + (loop.bound + offset)
        if first or not stop == sizes(array.op)[0]:
            array = driver.primitive(operator.getitem, (array, slice(first or None, stop)), {})
    elif count is not None and not whole:  # `xs[:n]`: the rows the run-time count reaches
        stop = count if not loop.bound + offset else driver.primitive(
            operator.add, (count, loop.bound + offset), {})
        array = driver.primitive(operator.getitem, (array, slice(first or None, stop)), {})
    elif (first, loop.stop + offset) != (0, np.shape(array.value)[0]):
        array = driver.primitive(operator.getitem,
                                 (array, slice(first or None, loop.stop + offset)), {})
    transposed = driver.primitive(primitives.T, (stack,), {})
    if loop.placeholder:  # zeros in, zeros out (a long loop not run backwards): not computed
        value = np.zeros(np.shape(transposed.value)[:-1] + np.shape(array.value)[1:],
                         np.result_type(transposed.value, array.value))
        with driver.sizes():
            return driver.recorder.record(operator.matmul, (transposed, array), {}, value,
                                          driver.loc)
    return driver.primitive(operator.matmul, (transposed, array), {})


def _active_body(loop: Loop, carried: list, outside: list) -> set:
    """The body's values on the gradient path: a carried variable is where it
    starts from one, or where the body makes it from one."""
    while True:
        seeds = {p for p, on in zip(loop.carried, carried) if on and p.differentiable}
        seeds |= {p for p, on in zip(loop.outside, outside) if on and p.differentiable}
        active = active_ops([*loop.params, *loop.ops], seeds)
        now = [on or (result in active and param.differentiable)
               for on, param, result in zip(carried, loop.carried, loop.results)]
        if now == carried:
            return active
        carried = now


class _Reverse:
    """Builds the reversed loop of one forward loop."""

    def __init__(self, driver: TemplateDriver, known, loop: Loop, active: set):
        self.loop, self.active = loop, active
        self.body = TemplateDriver(driver.input_names, dims=driver.dims)
        self.known = known.within(loop.origins)
        self.counter = Param(COUNTER, (), np.dtype(int), "t")
        self.index = self.counter if loop.start == 0 else Call(
            operator.sub, (self.counter, loop.start), {}, (), np.dtype(int), None, False)
        self.reads: dict[Op, Op] = {}  # forward body value -> what reads it again
        self.prelude: list[Op] = [] if self.index is self.counter else [self.index]
        self.next_index: Op | None = None
        self.stacks: dict[Op, Param] = {}
        self.outside: dict[Op, Param] = {}  # forward outside param -> the reversed loop's

    def look(self, value: Op) -> Op:
        """What the reversed body reads for a forward body value: its stack at
        the counter; the same read for a read of an outside array at the
        counter (`xs[t]`), which needs no stack."""
        if value is self.loop.counter:
            return self.counter
        if not isinstance(value, Op) or value.shape is None:
            return value  # a number; an inner loop's call (its adjoint makes it again here)
        if isinstance(value, Param) and value.role == OUTSIDE:
            if value not in self.outside:
                self.outside[value] = Param(OUTSIDE, value.shape, value.dtype, value.hint,
                                            value.dims)
            return self.outside[value]
        if value not in self.reads:
            read = self._read_again(value)
            if read is None:
                carried = self._carried_out(value)
                stacked = value if carried is None else carried
                if stacked not in self.stacks:
                    shape = (self.loop.count + isinstance(stacked, Param), *stacked.shape)
                    self.stacks[stacked] = Param(OUTSIDE, shape, stacked.dtype, None,
                                                 _dims(self.loop.stack_dims(stacked)))
                index = self.index if carried is None else self._next_index()
                read = Call(operator.getitem, (self.stacks[stacked], index), {}, value.shape,
                            value.dtype, None, True)
                read.hint, read.dims = value.hint, value.dims
                if value.dtype == np.bool_ and value.shape:  # selects as the forward's mask
                    same_mask(read, value)
            self.reads[value] = read
            self.prelude.append(read)
        return self.reads[value]

    def _carried_out(self, value: Op) -> Param | None:
        """The carried variable `value` becomes, where it becomes one alone: its
        stack, one longer, holds it too (at the next iteration's place)."""
        slots = [k for k, result in enumerate(self.loop.results) if result is value]
        if len(slots) != 1 or isinstance(value, Param):
            return None
        return self.loop.carried[slots[0]]

    def _next_index(self) -> Op:
        if self.next_index is None:
            self.next_index = Call(operator.add, (self.index, 1), {}, (), np.dtype(int), None,
                                   False)
            self.prelude.append(self.next_index)
        return self.next_index

    def _read_again(self, value: Op) -> Op | None:
        """`xs[t]`, `xs[t + 1]`, `t + 1` made again from the counter; a value
        that has another size at each iteration (`x[pos]`), which no stack
        holds, made again from what the reversed body reads for its operands."""
        if isinstance(value, Call) and self._ragged(value):
            return _copied(value, self.look)
        if not isinstance(value, Call) or value.kwargs:
            return None
        if value.fn is primitives.dimension:  # a size: the same at every iteration
            made = Call(value.fn, value.args, {}, value.shape, value.dtype, None, value.depends)
        elif value.fn in (operator.add, operator.sub) and len(value.args) == 2 \
                and type(value.args[1]) is int and (value.args[0] is self.loop.counter or
                                                   self._read_again(value.args[0])):
            made = Call(value.fn, (self.look(value.args[0]), value.args[1]), {}, value.shape,
                        value.dtype, None, value.depends)
        elif value.fn is primitives.stop_gradient and isinstance(value.args[0], Op) and (
                isinstance(value.args[0], Param) and value.args[0].role == OUTSIDE
                or self._read_again(value.args[0]) is not None):
            made = Call(value.fn, (self.look(value.args[0]),), {}, value.shape, value.dtype,
                        None, value.depends)  # a declared parameter's value: read again
        elif value.fn in _CHEAP and value.shape == () and len(value.args) == 2 and all(
                not isinstance(a, Op) or a is self.loop.counter
                or isinstance(a, Param) and a.role == OUTSIDE and a.shape == ()
                or self._read_again(a) is not None for a in value.args):
            # `u == y[t]`, a branch's test: computed again, not stacked
            made = Call(value.fn, tuple(self.look(a) if isinstance(a, Op) else a
                                        for a in value.args), {}, value.shape, value.dtype,
                        None, value.depends)
        elif value.fn is operator.getitem and len(value.args) == 2 \
                and isinstance(value.args[0], Param) and value.args[0].role == OUTSIDE \
                and all(leaf is self.loop.counter or self._read_again(leaf) is not None
                        or isinstance(leaf, Param) and leaf.role == OUTSIDE
                        for leaf in iter_refs(value.args[1])):
            made = Call(operator.getitem, (self.look(value.args[0]),
                                           map_refs(value.args[1], self.look)), {},
                        value.shape, value.dtype, None, value.depends)
        else:
            return None
        made.hint, made.dims = value.hint, value.dims
        return made

    def _ragged(self, value: Call) -> bool:
        """Whether a size of `value` is the count of a mask the body makes."""
        masks = self.loop.masks()
        return any(symbol in masks for size in value.dims or () if isinstance(size, Dim)
                   for monomial, _ in size.terms for symbol in monomial)

    def build(self, dy: list) -> _Reversed | None:
        loop, body = self.loop, self.body
        n_carried = len(loop.carried)
        grads: dict[Op, object] = {}
        carried_in, labels = {}, {}
        slots = _useful_slots(loop, dy, self.active)
        for k in slots:
            result = loop.results[k]
            carried_in[k] = Param(CARRIED, result.shape, result.dtype, None, result.dims)
            labels[carried_in[k]] = loop.carried[k]
            grads[self.look(result)] = plus(  # (one value carried out as two: `b = a`)
                body, grads.get(self.look(result)), body.traced(carried_in[k], _ones(result)))
        stack_grads, stack_params = [], []
        for number, value in enumerate(loop.saved):
            if dy[n_carried + number] is None or value not in self.active:
                continue
            param = Param(OUTSIDE, (loop.count, *value.shape), value.dtype, None,
                          _dims(loop.stack_dims(value, more=False)))
            stack_grads.append(n_carried + number)
            stack_params.append(param)
            read = body.primitive(operator.getitem, (body.traced(param, _ones(param)),
                                                      body.traced(self.index, 0)), {})
            grads[self.look(value)] = plus(body, grads.get(self.look(value)), read)
        active = {self.look(v) for v in (*loop.params, *loop.ops)  # in order: look() names
                  if v in self.active and v is not loop.counter}    # stacks as it meets them
        scattered: dict[Op, list] = {}  # forward outside param -> (index, gradient) pairs
        for op in reversed(loop.ops):
            if not isinstance(op, Call) or op not in self.active \
                    or self.look(op) not in grads:
                continue
            grad = grads.pop(self.look(op))
            array = op.args[0] if op.fn is operator.getitem and len(op.args) == 2 else None
            if isinstance(array, Param) and array.role == OUTSIDE \
                    and primitives.is_basic_index(op.args[1]) \
                    and all(_offset(v, loop.counter) is not None for v in iter_refs(op.args[1])):
                # `xs[t]`, `xs[t - 1]`, `w[2]`: written into the array's gradient there
                # (`dxs[t] += ...`, which names it)
                index = map_refs(op.args[1], lambda v: body.traced(self.look(v), self.known[v]))
                scattered.setdefault(array, []).append((index, grad))
                continue
            if isinstance(grad, Traced) and grad.op in set(body.recorder.ops):
                labels.setdefault(grad.op, op)
            propagate(body, self.known, op, grad, active, grads, look=self.look)
        return self._finish(slots, carried_in, grads, scattered, stack_params, stack_grads,
                            labels)

    def _finish(self, slots, carried_in, grads, scattered, stack_params, stack_grads,
                labels) -> _Reversed | None:
        loop, body = self.loop, self.body
        carried, results, inits, targets, saved, products = [], [], [], [], [], []
        for k in slots:
            carried.append(carried_in[k])
            results.append(self._op(grads.get(self.look(loop.carried[k])), loop.carried[k]))
            inits.append(("final", k))
            targets.append(k)
        for j, forward_param in enumerate(loop.outside):
            if forward_param not in self.active:
                continue
            product = self._outer_product(forward_param, grads, scattered)
            if product is not None:  # stacked here, one matmul after the loop
                vector, rows, offset = product
                if vector not in saved:
                    saved.append(vector)
                products.append((len(loop.carried) + j, saved.index(vector), rows, offset))
                continue
            accumulator = Param(CARRIED, forward_param.shape, forward_param.dtype, None,
                                forward_param.dims)
            total = body.traced(accumulator, np.zeros(forward_param.shape, forward_param.dtype))
            if forward_param in self.outside and self.outside[forward_param] in grads:
                grad = grads[self.outside[forward_param]]
                with body.located(getattr(getattr(grad, "op", None), "loc", None)):
                    total = body.binary(operator.add, total, grad)
            for index, grad in scattered.get(forward_param, []):
                with body.located(getattr(getattr(grad, "op", None), "loc", None)):
                    total = body.primitive(primitives.index_add, (total, index, grad), {})
            if total.op is accumulator:
                continue
            carried.append(accumulator)
            results.append(total.op)
            labels[accumulator] = forward_param
            inits.append(("zeros", forward_param))
            targets.append(len(loop.carried) + j)
        if not carried and not saved:
            return None
        used = _used([*self.prelude, *body.recorder.ops], [*results, *saved])
        stacked = [value for value, stack in self.stacks.items()
                   if stack in used or any(stack is rows for _, _, rows, _ in products)]
        outside = [p for p, q in self.outside.items()
                   if q in used or any(q is rows for _, _, rows, _ in products)]
        ops = [op for op in [*self.prelude, *body.recorder.ops] if op in used]
        params = (*(self.outside[p] for p in outside), *(self.stacks[v] for v in stacked),
                  *stack_params)
        reverse = Loop(self.counter, tuple(carried), params, ops, tuple(results), tuple(saved),
                       loop.start, loop.stop, reverse=True, loc=loop.loc,
                       bound=loop.start if loop.test is not None else loop.bound,
                       labels={op: label for op, label in labels.items()
                               if op in used or op in carried})
        reverse.size = loop.size if loop.test is None else None
        # a long loop is not run backwards on the example: nothing after it needs
        # its numbers (only their shapes), and generating costs no second pass
        reverse.placeholder = loop.count >= LONG and loop.test is None
        return _Reversed(reverse, inits, outside, stacked, stack_grads, targets, products)

    def _outer_product(self, forward_param, grads: dict, scattered: dict):
        """`dW += np.outer(v, xs[t])`, the only use of `W`'s gradient in the
        body: the per-step vector `v` to stack, the param whose rows `xs[t]`
        reads (an outside array or a stack), and the row read at counter `t`
        less `t`. None where the gradient is anything else (or the count is
        not known when the code is written)."""
        grad = grads.get(self.outside.get(forward_param))
        if self.loop.test is not None or scattered.get(forward_param) \
                or not isinstance(grad, Traced):
            return None
        op = grad.op
        if not (isinstance(op, Call) and op.fn is np.outer and len(op.args) == 2
                and not op.kwargs and all(isinstance(a, Op) for a in op.args)):
            return None
        vector, read = op.args
        if not (isinstance(read, Call) and read.fn is operator.getitem and not read.kwargs
                and isinstance(read.args[0], Param) and read.args[0].role == OUTSIDE):
            return None
        offset = _offset(read.args[1], self.counter)
        if offset is None or len(vector.shape) != 1 or self.loop.start + offset < 0:
            return None  # (`xs[t - 1]` at t = 0 reads the last row: no run of rows)
        return vector, read.args[0], offset

    def _op(self, grad, like: Op) -> Op:
        """A carried gradient as an op of the body, zeros where none flowed."""
        if isinstance(grad, Traced):
            if grad.op.dtype != like.dtype:
                grad = self.body.primitive(primitives.astype, (grad, like.dtype), {})
            return grad.op
        fn, args = primitives.filled(sizes(like), 0.0 if grad is None else float(grad),
                                     like.dtype)
        return self.body.primitive(fn, args, {}).op


def _offset(index, counter: Param) -> int | None:
    """For an index `t + c` of `counter` (`t`, `t - 1`, `t + 1`): c; None for
    anything else."""
    if index is counter:
        return 0
    if isinstance(index, Call) and index.fn in (operator.add, operator.sub) \
            and len(index.args) == 2 and type(index.args[1]) is int:
        inner = _offset(index.args[0], counter)
        step = index.args[1] if index.fn is operator.add else -index.args[1]
        return None if inner is None else inner + step
    return None


def _useful_slots(loop: Loop, dy: list, active: set) -> list[int]:
    """The carried variables whose gradient can be other than zero: those
    returned with a gradient, and those a useful one is made from (Newton's
    `err` is carried to the loop's test alone: its gradient is always zero)."""
    n_carried = len(loop.carried)
    useful = {k for k in range(n_carried) if dy[k] is not None}
    sinks = {value for number, value in enumerate(loop.saved) if dy[n_carried + number]
             is not None}
    while True:
        reach = sinks | {loop.results[k] for k in useful}
        for op in reversed(loop.ops):
            if op in reach and isinstance(op, Call) and op in active \
                    and not registry.is_nondifferentiable(op.fn):
                reach.update(operands(op))
        more = {k for k, param in enumerate(loop.carried) if param in reach and param in active}
        if more <= useful:
            return sorted(k for k in useful if loop.carried[k] in active)
        useful |= more


def _zeros(driver: TemplateDriver, like: Op):
    """A gradient's start: 0.0 for a float, an array of zeros for an array."""
    if like.shape == () and like.dtype == np.float64:
        return 0.0
    fn, fill = primitives.filled(sizes(like), 0.0, like.dtype)
    return driver.primitive(fn, fill, {})


def _dims(sizes: tuple) -> tuple | None:
    """Sizes as an op keeps them: None where every one is a number."""
    return sizes if has_dims(sizes) else None


def _ones(op: Op):
    return np.ones(op.shape, op.dtype)


def _used(ops: list, results) -> set:
    used = set(results)
    for op in reversed(ops):
        if op in used:
            used.update(operands(op))
    return used
