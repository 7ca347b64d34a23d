"""The reverse pass, a Tape -> Tape transformation: each forward op's
template, run backwards.

Templates run on the forward values, by an unroller of their own that
records what they compute, so shapes decide `unbroadcast` statically, not
run-time code, as they did when the primal was unrolled.
"""

from __future__ import annotations

import operator

import numpy as np

from yota_src import rules
from yota_src.core import primitives
from yota_src.core.primitives import display_name
from yota_src.core.values import DIFF, user_path
from yota_src.differentiate import cotangents
from yota_src.differentiate.loop_adjoint import propagate_loop
from yota_src.errors import NoDiffRuleError
from yota_src.ir import contexts
from yota_src.ir.loops import Loop
from yota_src.ir.tape import Call, Const, Input, Op, Tape, map_refs, operands
from yota_src.passes.rewrite import rewrite
from yota_src.trace.traced import Traced, traced_in, values_of
from yota_src.trace.unroll import Unroller


def active_ops(ops: list[Op], wrt: set[Op]) -> set[Op]:
    """Ops whose value depends differentiably on an input in `wrt`."""
    active = set()
    for op in ops:
        if op in wrt:
            active.add(op)
        elif (isinstance(op, Call) and op.differentiable
              and not rules.is_nondifferentiable(op.fn)
              and any(arg in active for arg in operands(op))):
            _refuse_complex(op)
            active.add(op)
    return active


def _refuse_complex(op: Call) -> None:
    """Complex values on the gradient path have no single convention for a
    gradient (holomorphic, conjugate, ...): refused rather than guessed."""
    if np.issubdtype(op.dtype, np.complexfloating):
        raise NoDiffRuleError(
            f"{_spelling(op)} gives a complex result on the gradient path", op.loc,
            hint="yota-src differentiates real-valued code: keep complex values out of what "
                 "is differentiated, or write the computation with real and imaginary parts."
                 + _COMPLEX_HINTS.get(op.fn, ""))


# Functions whose result is complex where users may not expect it
_COMPLEX_HINTS = {fn: " (np.linalg.eig is complex whatever the eigenvalues since NumPy 2.5; "
                      "for a symmetric matrix, np.linalg.eigh is real.)"
                  for fn in (np.linalg.eig, np.linalg.eigvals)}


def differentiate(tape: Tape, values, wrt_args: frozenset,
                  input_names: dict | None = None, has_aux: bool = False,
                  pullback: bool = False) -> Tape:
    """The gradient tape of the forward tape `tape`, whose output is a scalar
    (`has_aux`: a pair `(scalar, aux)`, aux never differentiated; `pullback`:
    a pair `(value, cotangent)`, the cotangent's leaves the last argument's
    inputs, cotangents.py): the same ops, then the reverse sweep's, returning
    `(value, gradient per positional argument...)` (not the cotangent's).
    The gradient ops are labelled with the ops they are the gradients of,
    for the naming pass.

    `values` holds the example value of forward ops (an op a forward pass
    made is computed from its operands): the templates compute on them, so
    static helpers fold as they did when the primal was unrolled. A template
    driver, a fresh unroller that runs templates only, records the new ops;
    `tape` is not changed.
    """
    driver = Unroller(templates=True)
    driver.input_names = dict(input_names or {})
    driver.resaved = {}  # forward loop call -> the call that also stacks what its adjoint reads
    # array arguments a trip count is read from: any number of rows, gradients made like them
    driver.any_rows = {op for op in tape.inputs if op.index in tape.free_counts and op.shape}
    known = _Known(values, tape.origins)
    wrt = {op for op in tape.inputs if op.index in wrt_args and op.differentiable}
    if pullback:
        seeds = [(op, Traced(dual, known[dual], driver))
                 for op, dual in cotangents.seeds(tape.output)]
    else:
        seeds = [(tape.output[0] if has_aux else tape.output, None)]
    grads, labels = _sweep(driver, tape, seeds, known, wrt)
    gradients = _gradient_outputs(driver, tape, known, grads, wrt_args, labels)
    if pullback:
        gradients = gradients[:-1]  # none for the cotangent
    labels.update(tape.labels)
    value = tape.output[0] if pullback else tape.output
    gradient = tape.replace(ops=tape.ops + driver.ops, output=(value,) + gradients,
                            n_forward=len(tape.ops), labels=labels)
    if not driver.resaved:
        return gradient
    def resave(op: Op, forward: bool, original: Op) -> Op:
        """The call that stacks more, reading what `op` reads now (a loop before
        it may have been replaced too); the reverse pass's ops read it."""
        made = driver.resaved.get(original)
        if made is None:
            return op
        made.args = op.args  # made here and read by nothing else yet
        return made
    return rewrite(gradient, resave)


class _Known:
    """Example values of forward ops: those of ops a forward pass made are
    those of the recorded ops they replace; the few ops a pass added beside
    them are computed from their operands, once."""

    def __init__(self, values, origins: dict, computed: dict | None = None):
        self.values = values
        self.origins = origins
        self.computed: dict[Op, object] = {} if computed is None else computed

    def within(self, origins: dict) -> _Known:
        """The values of a loop body's ops too, from the recorded ops of the
        iteration it was made from (`origins`)."""
        return _Known(self.values, {**self.origins, **origins}, self.computed)

    def __getitem__(self, op: Op):
        origin = self.origins.get(op, op)
        while origin not in self.values and origin in self.origins \
                and self.origins[origin] is not origin:
            origin = self.origins[origin]  # a body's op, made from an op a pass made
        if origin in self.values:
            return self.values[origin]
        if not isinstance(op, Call):  # a loop body's parameter: its origin computes it
            op = origin
        # computed from its own operands, which are on the tape (an origin that
        # was never recorded, a loop call a pass copied, may read ops that are not)
        if op not in self.computed:
            if isinstance(op, Const):
                self.computed[op] = op.value
            else:
                look = lambda s: map_refs(s, self.__getitem__)  # noqa: E731
                self.computed[op] = op.fn(*look(op.args), **look(op.kwargs))
        return self.computed[op]


def _sweep(driver: Unroller, tape: Tape, seeds: list, known: _Known,
           wrt: set[Op]) -> tuple[dict, dict]:
    """Gradients of the scalar output for the active inputs, by reverse sweep,
    and the labels of the gradient ops. A gradient's example value lives as
    long as something reads it: the sweep keeps no values of its own ops and
    drops each op's gradient once it is passed on, so it holds about one
    gradient per live value."""
    active = active_ops(tape.ops, wrt)
    grads: dict[Op, object] = {}
    labels: dict[Op, Op] = {}
    for output, seed in seeds:  # (op, its gradient), None for 1
        if not (isinstance(output, Op) and output in active):
            continue
        if seed is None:  # a scalar, or size-1 array
            shape, dtype = output.shape, output.dtype  # float32 stays float32
            one = 1.0 if dtype == np.float64 else dtype.type(1.0)
            seed = one if shape == () else driver.primitive(
                *primitives.filled(shape, 1.0, dtype), {})
        grads[output] = _plus(driver, grads.get(output), seed)
    forward = set(tape.ops)
    for op in reversed(tape.ops):
        if op in grads:
            grad = grads[op]
            if isinstance(grad, Traced) and grad.op not in forward and (
                    grad.op not in labels or _named(op) and not _named(labels[grad.op])):
                labels[grad.op] = op  # its complete gradient: d<name of op>, a user's name first
            if isinstance(op, Call):
                # its gradient is complete and now spent: only the inputs' are returned
                _propagate(driver, known, op, grads.pop(op), active, grads)
    return grads, labels


def _as_input(driver: Unroller, op: Input, grad: Traced) -> Traced:
    """A gradient of the input's dtype (a rule may have promoted float32 to
    float64), and an array for an array: NumPy gives a scalar for `2.0 * s`
    with `s` 0-d, which would be read-only and not the input's type."""
    if op.scalar or grad.op.shape != op.shape:
        return grad
    if grad.op.dtype != op.dtype:
        grad = driver.primitive(primitives.astype, (grad, op.dtype), {})
    if not isinstance(grad.value, np.ndarray):
        grad = driver.primitive(np.array, (grad,), {})
    return grad


def _named(op: Op) -> bool:
    return op.hint is not None or isinstance(op, Input)


# keywords of any ufunc that change how a result is stored, not what it is
_UFUNC_OPTIONS = ("dtype", "casting", "order", "subok", "signature", "where")


def _propagate(unroller: Unroller, known: _Known, op: Call, dy, active: set,
               grads: dict, look=None) -> None:
    """Add `op`'s contributions to its operands' gradients (`dy`: its own).
    `look` gives the op a template reads for an operand (in a reversed loop,
    the stack of a forward body value); by default the operand itself."""
    def spelled() -> str:  # for messages only: not worked out for every op
        return _spelling(op, unroller.input_names)

    if isinstance(op.fn, Loop):
        propagate_loop(unroller, known, op, dy, active, grads, unroller.resaved)
        return
    template = rules.template_for(op.fn)
    if template is None:
        if rules.is_nondifferentiable(op.fn):
            return
        reason = rules.refusal_for(op.fn)
        if reason is not None:
            raise NoDiffRuleError(f"no gradient through {spelled()}: {reason}",
                                  op.loc, hint="Keep differentiated values out of its "
                                  "arguments, or pass them through a differentiable function.")
        raise NoDiffRuleError(f"no gradient rule for {spelled()}", op.loc,
                              hint=_rule_hint(op.fn))
    traced = lambda ref: Traced(look(ref) if look else ref, known[ref], unroller)  # noqa: E731
    args, kwargs = map_refs(op.args, traced), map_refs(op.kwargs, traced)
    if isinstance(op.fn, np.ufunc):  # np.add(x, y, dtype=...): the same derivative
        if kwargs.get("where", True) is not True:
            raise NoDiffRuleError(f"{spelled()}(..., where=...) is not supported",
                                  op.loc, hint="Use np.where(mask, f(x), other) instead.")
        kwargs = {k: v for k, v in kwargs.items() if k not in _UFUNC_OPTIONS}
    skip = rules.nodiff_args(op.fn)

    def wants(name: str, value) -> bool:
        return name not in skip and any(t.op in active for t in traced_in(value))

    y = traced(op)
    try:
        pairs = unroller.run_template(template, dy, y, args, kwargs, wants, op.loc)
    except (TypeError, NotImplementedError) as error:
        raise NoDiffRuleError(f"the rule for {spelled()} does not apply here: {error}",
                              op.loc) from None
    except (ZeroDivisionError, np.linalg.LinAlgError) as error:
        # Python arithmetic on floats (or a singular matrix) where the derivative is
        # infinite or does not exist: said at the user's line, not as a crash inside a rule.
        raise NoDiffRuleError(
            f"the rule for {spelled()} fails at these values ({error}): the "
            "derivative is infinite or does not exist here", op.loc,
            hint="Differentiate at other values, or keep this value out of what is "
                 "differentiated.") from None
    for name, _, grad in pairs:
        if grad is None:  # a rule that skips an input would give a silently wrong zero
            raise NoDiffRuleError(
                f"the rule for {spelled()} gives no gradient for its argument "
                f"{name!r}", op.loc,
                hint=f"Assign d{name} in the rule, or declare ys.nodiff({spelled()}, "
                     f"\"{name}\") if no gradient should flow into it.")
    saved, unroller.loc = unroller.loc, contexts.gradient_location(op.loc)
    try:
        for _, value, grad in pairs:
            _accumulate(unroller, op, value, grad, active, grads)
    finally:
        unroller.loc = saved


def _spelling(op: Call, names: dict | None = None) -> str:
    """The primitive as the user's code spells it: `rng.normal`, not `draw`
    (`names`: the unroller's expressions for its inputs)."""
    if op.fn is primitives.draw:
        generator = op.args[0]
        owner = (names or {}).get(generator) or getattr(generator, "hint", None) or "generator"
        return f"{owner}.{op.args[1]}"
    return display_name(op.fn)


def _rule_hint(fn) -> str:
    """The exact calls that would add the missing rule."""
    name = display_name(fn)
    params = rules.parameter_names(fn)
    if not params or "y" in params or "dy" in params:  # no expression can name them
        inputs = ", ".join(params) if params else "<its parameters>"
        return (f"Add a template with @ys.diffrule({name}) on a function "
                f"(dy_out, y_out, {inputs}) that assigns d<parameter> (see templates/).")
    first = params[0]
    return (f"Add one with ys.diffrule({name}, \"{first}\", \"<expression in "
            f"{', '.join(params)}, y, dy>\"), or ys.nodiff({name}, \"{first}\") if no "
            f"gradient should flow through it.")


def _accumulate(unroller, op, value, grad, active, grads) -> None:
    if grad is None or _exactly_zero(grad):
        return
    if isinstance(value, (list, tuple)):
        for item, item_grad in zip(value, grad):
            _accumulate(unroller, op, item, item_grad, active, grads)
        return
    if isinstance(value, dict):  # a rule's **kwargs
        for key, item in value.items():
            _accumulate(unroller, op, item, grad.get(key), active, grads)
        return
    if not isinstance(value, Traced) or value.op not in active:
        return
    previous = grads.get(value.op)
    if value.op.shape is None:  # a tuple-valued op: its gradient is a list, None where unused
        previous = previous or [None] * len(grad)
        grads[value.op] = [_plus(unroller, p, g) for p, g in zip(previous, grad)]
        return
    if np.shape(values_of(grad)) != value.op.shape:
        raise RuntimeError(
            f"the rule for {_spelling(op)} gave a gradient of shape "
            f"{np.shape(values_of(grad))} for an input of shape {value.op.shape}")
    grads[value.op] = _plus(unroller, previous, grad)


def _exactly_zero(grad) -> bool:
    """A rule assigns a plain `0` where the gradient is zero whatever the
    values (the base of `a ** 0`): nothing is added, so no `0 * ...` is written."""
    return type(grad) in (int, float) and grad == 0


def _plus(unroller, previous, grad):
    """The sum of two gradient contributions, either of which may be missing."""
    if previous is None:
        return grad
    if grad is None:
        return previous
    return unroller.binary(operator.add, previous, grad)


def _gradient_outputs(driver: Unroller, tape: Tape, known: _Known, grads: dict,
                      wrt_args: set[int], labels: dict) -> tuple:
    """One gradient per positional argument: an op, a path dict, zeros, or None."""
    inputs = tape.inputs
    out = []
    for index, leaves in enumerate(tape.signature.leaves):
        if index not in wrt_args or not any(leaf.kind == DIFF for leaf in leaves):
            out.append(None)
        elif tape.signature.structs[index]:
            out.append({user_path(op.path): _gradient(driver, known, op, grads[op], labels)
                        for op in inputs if op.index == index and op in grads})
        else:
            (op,) = [op for op in inputs if op.index == index]
            out.append(_gradient(driver, known, op, grads.get(op, 0.0), labels))
    return tuple(out)


def _gradient(driver: Unroller, known: _Known, op: Input, grad, labels: dict):
    """The gradient of an input as the code returns it: one the rules could
    compute statically (a constant) is a float for a float, and an array of
    the input's shape and dtype, made by the code, for an array."""
    if isinstance(grad, Traced):
        made = _as_input(driver, op, grad)
        if made is not grad and grad.op in labels:  # `dx = (...).astype(np.float32)`
            labels[made.op] = labels.pop(grad.op)
        return driver.refs(made, driver.loc)
    if not np.isscalar(grad) and not np.ndim(grad) == 0:
        return driver.refs(grad, driver.loc)
    if op.scalar:
        return float(grad)
    if op in driver.any_rows:  # any number of rows: shaped like the argument
        fn, args = (np.zeros_like, ()) if grad == 0 else (np.full_like, (float(grad),))
        return driver.primitive(fn, (Traced(op, known[op], driver), *args), {}).op
    fn, args = primitives.filled(op.shape, float(grad), op.dtype)
    return driver.record(fn, args, {}, fn(*args), driver.loc).op  # recorded even for shape ()
