"""One step of the reverse sweep: an op's template, run on the forward
values, adding to its operands' gradients.

The whole-tape sweep (sweep.py) and a loop's reversed body (loop_adjoint.py)
both take this step; an op whose `fn` is a program of its own (a rolled
loop) is differentiated by the adjoint registered for its kind
(higher_order.py), so this module knows no such kind.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from yota_src.core import primitives, registry
from yota_src.core.primitives import display_name
from yota_src.differentiate import higher_order
from yota_src.differentiate.template_driver import TemplateDriver
from yota_src.errors import NoDiffRuleError
from yota_src.ir import contexts
from yota_src.ir.dims import plain
from yota_src.ir.tape import Call, Const, Op, map_refs, operands
from yota_src.tracing import signature_of
from yota_src.tracing.traced import Traced, traced_in, values_of


class Known:
    """Example values of forward ops: those of ops a forward pass made are
    those of the recorded ops they replace; the few ops a pass added beside
    them are computed from their operands, once."""

    def __init__(self, values, origins: dict, computed: dict | None = None):
        self.values = values
        self.origins = origins
        self.computed: dict[Op, object] = {} if computed is None else computed

    def within(self, origins: dict) -> Known:
        """The values of a loop body's ops too, from the recorded ops of the
        iteration it was made from (`origins`)."""
        return Known(self.values, {**self.origins, **origins}, self.computed)

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
                look = lambda s: plain(map_refs(s, self.__getitem__))  # noqa: E731
                self.computed[op] = op.fn(*look(op.args), **look(op.kwargs))
        return self.computed[op]


def active_ops(ops: list[Op], wrt: set[Op]) -> set[Op]:
    """Ops whose value depends differentiably on an input in `wrt`."""
    active = set()
    for op in ops:
        if op in wrt:
            active.add(op)
        elif (isinstance(op, Call) and op.differentiable
              and not registry.is_nondifferentiable(op.fn)
              and any(arg in active for arg in operands(op))):
            _refuse_complex(op)
            active.add(op)
    return active


def _refuse_complex(op: Call) -> None:
    """Complex values on the gradient path have no single convention for a
    gradient (holomorphic, conjugate, ...): refused rather than guessed."""
    if np.issubdtype(op.dtype, np.complexfloating):
        raise NoDiffRuleError(
            f"{spelling(op)} gives a complex result on the gradient path", op.loc,
            hint="yota-src differentiates real-valued code: keep complex values out of what "
                 "is differentiated, or write the computation with real and imaginary parts."
                 + _COMPLEX_HINTS.get(op.fn, ""))


# Functions whose result is complex where users may not expect it
_COMPLEX_HINTS = {fn: " (np.linalg.eig is complex whatever the eigenvalues since NumPy 2.5; "
                      "for a symmetric matrix, np.linalg.eigh is real.)"
                  for fn in (np.linalg.eig, np.linalg.eigvals)}


# keywords of any ufunc that change how a result is stored, not what it is
_UFUNC_OPTIONS = ("dtype", "casting", "order", "subok", "signature", "where")


def propagate(driver: TemplateDriver, known: Known, op: Call, dy, active: set,
               grads: dict, look=None) -> None:
    """Add `op`'s contributions to its operands' gradients (`dy`: its own).
    `look` gives the op a template reads for an operand (in a reversed loop,
    the stack of a forward body value); by default the operand itself."""
    def spelled() -> str:  # for messages only: not worked out for every op
        return spelling(op, driver.input_names)

    adjoint = higher_order.adjoint_of(op.fn)
    if adjoint is not None:
        adjoint(driver, known, op, dy, active, grads, look)
        return
    template = registry.template_for(op.fn)
    if template is None:
        if registry.is_nondifferentiable(op.fn):
            return
        reason = registry.refusal_for(op.fn)
        if reason is not None:
            raise NoDiffRuleError(f"no gradient through {spelled()}: {reason}",
                                  op.loc, hint="Keep differentiated values out of its "
                                  "arguments, or pass them through a differentiable function.")
        raise NoDiffRuleError(f"no gradient rule for {spelled()}", op.loc,
                              hint=_rule_hint(op.fn))
    traced = lambda ref: driver.traced(look(ref) if look else ref, known[ref])  # noqa: E731
    args, kwargs = map_refs(op.args, traced), map_refs(op.kwargs, traced)
    if isinstance(op.fn, np.ufunc):  # np.add(x, y, dtype=...): the same derivative
        if kwargs.get("where", True) is not True:
            raise NoDiffRuleError(f"{spelled()}(..., where=...) is not supported",
                                  op.loc, hint="Use np.where(mask, f(x), other) instead.")
        kwargs = {k: v for k, v in kwargs.items() if k not in _UFUNC_OPTIONS}
    given = set(kwargs)
    args, kwargs = registry.as_rule_arguments(
        op.fn, list(signature_of(template).parameters)[2:], args, kwargs)
    by_position = set(kwargs) - given  # (NumPy's names for what came by position)
    skip = registry.nodiff_args(op.fn)

    def wants(name: str, value) -> bool:
        return name not in skip and any(t.op in active for t in traced_in(value))

    y = traced(op)
    try:
        pairs = driver.run_template(template, dy, y, args, kwargs, wants, op.loc)
    except (TypeError, NotImplementedError) as error:
        named = re.search(r"unexpected keyword argument '(\w+)'", str(error))
        if named and named.group(1) in by_position:
            error = f"it does not take NumPy's argument {named.group(1)!r} (given by position)"
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
    with driver.located(contexts.gradient_location(op.loc)):
        for _, value, grad in pairs:
            accumulate(driver, op, value, grad, active, grads)


def spelling(op: Call, names: dict | None = None) -> str:
    """The primitive as the user's code spells it: `rng.normal`, not `draw`
    (`names`: the trace's expressions for its inputs)."""
    if op.fn is primitives.draw:
        generator = op.args[0]
        owner = (names or {}).get(generator) or getattr(generator, "hint", None) or "generator"
        return f"{owner}.{op.args[1]}"
    return display_name(op.fn)


def _rule_hint(fn) -> str:
    """The exact calls that would add the missing rule."""
    name = display_name(fn)
    params = registry.parameter_names(fn)
    if not params or "y" in params or "dy" in params:  # no expression can name them
        inputs = ", ".join(params) if params else "<its parameters>"
        return (f"Add a template with @ys.diffrule({name}) on a function "
                f"(dy_out, y_out, {inputs}) that assigns d<parameter> (see templates/).")
    first = params[0]
    return (f"Add one with ys.diffrule({name}, \"{first}\", \"<expression in "
            f"{', '.join(params)}, y, dy>\"), or ys.nodiff({name}, \"{first}\") if no "
            f"gradient should flow through it.")


def accumulate(driver: TemplateDriver, op, value, grad, active, grads) -> None:
    if grad is None or _exactly_zero(grad):
        return
    if isinstance(value, (list, tuple)):
        for item, item_grad in zip(value, grad):
            accumulate(driver, op, item, item_grad, active, grads)
        return
    if isinstance(value, dict):  # a rule's **kwargs
        for key, item in value.items():
            accumulate(driver, op, item, grad.get(key), active, grads)
        return
    if not isinstance(value, Traced) or value.op not in active:
        return
    previous = grads.get(value.op)
    if value.op.shape is None:  # a tuple-valued op: its gradient is a list, None where unused
        previous = previous or [None] * len(grad)
        grads[value.op] = [plus(driver, p, g) for p, g in zip(previous, grad)]
        return
    if np.shape(values_of(grad)) != value.op.shape:  # (a user's rule: yota-src's never do)
        raise NoDiffRuleError(
            f"the rule for {spelling(op)} gave a gradient of shape "
            f"{np.shape(values_of(grad))} for an input of shape {value.op.shape}", op.loc,
            hint="A rule's gradient for an input has the input's shape: where the input "
                 "was broadcast (a scalar against an array), sum the rule's expression over "
                 "the broadcast axes, e.g. np.sum(...) for a scalar.")
    grads[value.op] = plus(driver, previous, grad)


def _exactly_zero(grad) -> bool:
    """A rule assigns a plain `0` where the gradient is zero whatever the
    values (the base of `a ** 0`): nothing is added, so no `0 * ...` is written."""
    return type(grad) in (int, float) and grad == 0


def plus(driver: TemplateDriver, previous, grad):
    """The sum of two gradient contributions, either of which may be missing."""
    if previous is None:
        return grad
    if grad is None:
        return previous
    return driver.binary(operator.add, previous, grad)


