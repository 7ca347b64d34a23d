"""The reverse pass, a Tape -> Tape transformation: each forward op's
template, run backwards.

Templates run on the forward values, by a template driver that records
what they compute, so shapes decide `unbroadcast` statically, not run-time
code, as they did when the primal was unrolled.
"""

from __future__ import annotations

import numpy as np

from yota_src.core import primitives
from yota_src.core.values import DIFF, user_path
from yota_src.differentiate import cotangents
from yota_src.differentiate.propagate import Known, active_ops, plus, propagate
from yota_src.differentiate.template_driver import TemplateDriver
from yota_src.ir.dims import plain
from yota_src.ir.tape import Call, Input, Op, Tape, sizes
from yota_src.passes.rewrite import rewrite
from yota_src.tracing.traced import Traced


def differentiate(tape: Tape, values, wrt_args: frozenset,
                  input_names: dict | None = None, has_aux: bool = False,
                  pullback: bool = False) -> Tape:
    """The gradient tape of the forward tape `tape`, whose output is a scalar
    (`has_aux`: a pair `(scalar, aux)`, aux never differentiated; `pullback`:
    a pair `(value, cotangent)`, the cotangent's leaves the last argument's
    inputs, cotangents.py): the same ops, then the reverse sweep's, returning
    `(value, gradient per positional argument...)` (not the cotangent's).
    The gradient ops are labelled with the ops they are the gradients of,
    for naming (codegen/names.py).

    `values` holds the example value of forward ops (an op a forward pass
    made is computed from its operands): the templates compute on them, so
    static helpers fold as they did when the primal was unrolled. A template
    driver (template_driver.py) records the new ops; `tape` is not changed.
    """
    driver = TemplateDriver(dict(input_names or {}), frozenset(
        op for op in tape.inputs if op.index in tape.free_counts and op.shape),
        tape.signature.dims)
    known = Known(values, tape.origins)
    wrt = {op for op in tape.inputs if op.index in wrt_args and op.differentiable}
    if pullback:
        seeds = [(op, driver.traced(dual, known[dual]))
                 for op, dual in cotangents.seeds(tape.output)]
    else:
        seeds = [(tape.output[0] if has_aux else tape.output, None)]
    grads, labels = _sweep(driver, tape, seeds, known, wrt)
    gradients = _gradient_outputs(driver, tape, known, grads, wrt_args, labels)
    if pullback:
        gradients = gradients[:-1]  # none for the cotangent
    labels.update(tape.labels)
    value = tape.output[0] if pullback else tape.output
    gradient = tape.replace(ops=tape.ops + driver.recorder.ops, output=(value,) + gradients,
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


def _sweep(driver: TemplateDriver, tape: Tape, seeds: list, known: Known,
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
        grads[output] = plus(driver, grads.get(output), seed)
    forward = set(tape.ops)
    for op in reversed(tape.ops):
        if op in grads:
            grad = grads[op]
            if isinstance(grad, Traced) and grad.op not in forward and (
                    grad.op not in labels or _named(op) and not _named(labels[grad.op])):
                labels[grad.op] = op  # its complete gradient: d<name of op>, a user's name first
            if isinstance(op, Call):
                # its gradient is complete and now spent: only the inputs' are returned
                propagate(driver, known, op, grads.pop(op), active, grads)
    return grads, labels


def _as_input(driver: TemplateDriver, op: Input, grad: Traced) -> Traced:
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


def _gradient_outputs(driver: TemplateDriver, tape: Tape, known: Known, grads: dict,
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


def _gradient(driver: TemplateDriver, known: Known, op: Input, grad, labels: dict):
    """The gradient of an input as the code returns it: one the rules could
    compute statically (a constant) is a float for a float, and an array of
    the input's shape and dtype, made by the code, for an array."""
    if isinstance(grad, Traced):
        made = _as_input(driver, op, grad)
        if made is not grad and grad.op in labels:  # `dx = (...).astype(np.float32)`
            labels[made.op] = labels.pop(grad.op)
        return driver.recorder.refs(made, driver.loc)
    if not np.isscalar(grad) and not np.ndim(grad) == 0:
        return driver.recorder.refs(grad, driver.loc)
    if op.scalar:
        return float(grad)
    if op in driver.any_rows:  # any number of rows: shaped like the argument
        fn, args = (np.zeros_like, ()) if grad == 0 else (np.full_like, (float(grad),))
        return driver.primitive(fn, (driver.traced(op, known[op]), *args), {}).op
    fn, args = primitives.filled(sizes(op), float(grad), op.dtype)
    return driver.recorder.record(fn, args, {}, fn(*plain(args)), driver.loc).op  # even for ()
