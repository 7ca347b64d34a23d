"""Which values of a tape are Dask's: those computed from an argument that
is a Dask array (the trace saw its sample: Signature.dask_leaves). Beside
them, NumPy arrays (a model's weights) stay NumPy's in the generated code:
such a value is copied as NumPy copies, and computed with what NumPy has."""

from __future__ import annotations

from yota_src.ir.tape import Input, Tape, operands


def dask_values(tape: Tape) -> set:
    """The ops of `tape` computed from an argument that is a Dask array."""
    signature = tape.signature
    if signature is None or signature.library != "dask":
        return set()
    marked = set(signature.dask_leaves())
    lazy: set = set()
    for op in tape.ops:
        if isinstance(op, Input) and (op.index, op.path) in marked or any(
                operand in lazy for operand in operands(op)):
            lazy.add(op)
    return lazy
