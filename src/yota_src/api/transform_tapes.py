"""A transform's wrapper differentiated, cut down to what the transform gives.

A Hessian-vector or Jacobian-vector product is the gradient of a wrapper
around `f` (transform_wrappers.py); of that gradient's tape the pipeline
keeps only the transform's result, and the jvp's function does not take the
cotangent its wrapper needed.
"""

from __future__ import annotations

from yota_src.ir.tape import Guard, Input, Tape, readers

KINDS = ("hvp", "jvp")  # the pipeline's kinds whose tape is a wrapper's gradient


def result_only(tape: Tape, kind: str, index: int) -> Tape:
    """The wrapper's gradient tape returning what the transform gives: `H v`
    (the gradient for `x`), or `(value, J t)` (the wrapper's aux, and the
    gradient for the cotangent)."""
    result = tape.output[1 + index]
    value = tape.output[0][1] if kind == "jvp" else None
    return tape.replace(output=(value, result))


def without_cotangent(tape: Tape) -> Tape:
    """The jvp tape without its last parameter, the cotangent, which only
    its signature guards read: `J t` does not depend on it, so the
    generated function does not take it."""
    last = len(tape.signature.params) - 1
    users = readers(tape.ops, tape.output)
    mine = [op for op in tape.ops if isinstance(op, Input) and op.index == last]
    if any(not isinstance(user, Guard) for op in mine for user in users.get(op, [])):
        return tape
    ops = [op for op in tape.ops if op not in mine and not (
        isinstance(op, Guard) and op.value in mine)]
    forward = len([op for op in tape.ops[:tape.n_forward] if op in ops])
    return tape.replace(ops=ops, n_forward=forward, signature=tape.signature.dropping_last())
