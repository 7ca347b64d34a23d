"""Codegen: the tape as a readable Python module, and the module as a function.

A tape (primal, or with its reverse sweep) becomes the text of a module a
reviewer reads like hand-written code: a docstring that says what it is
specialised to, guards that refuse any other call, the statements named
after the user's variables under the source lines they came from, and no
import of yota_src. The module's parts are written by rooms of their own:

    module.py        the module as a whole: docstring, imports, module-level
                     names, the function and its entry point
    module_level.py  what the guards and statements put above the function
    guards.py        the checks on the arguments, and on the data's decisions
                     (facts.py states each decision once)
    statements.py    the body, op by op; loop_code.py writes a loop op
    outside_reads.py large arrays read from their modules at each call
    work_arrays.py   the arrays large temporaries are written into
    spelling.py      values and ops as NumPy expressions
    names.py         the name each value is read by, or folded in its place
    layout.py        lines fitted to the line limit; messages quoted
    formatter_spelling.py  spellings within lines as ruff format and black write them
    respell.py       the module respelled for CuPy or Dask
    loader.py        text -> function, and files written atomically
"""

from __future__ import annotations

from collections.abc import Callable

from yota_src.codegen import respell
from yota_src.codegen.loader import load
from yota_src.codegen.module import numpy_module
from yota_src.codegen.names import function_name
from yota_src.codegen.outside_reads import LITERAL_LIMIT
from yota_src.codegen.spelling import CodegenError
from yota_src.core import primitives
from yota_src.ir.lazy import dask_values
from yota_src.ir.tape import Call, Tape
from yota_src.tracing import array_library

__all__ = ["LITERAL_LIMIT", "CodegenError", "compile_forward", "function_name", "generate"]


def generate(tape: Tape, kind: str = "gradient") -> tuple[str, dict]:
    """The module text and its module-level arrays by name.

    The text holds a snapshot of each array the primal read from its globals
    or closures; an in-process loader binds the names to the live arrays.
    Code for CuPy or Dask arguments is written for NumPy, then respelled.
    """
    text, constants = numpy_module(tape, kind)
    if tape.signature.library != array_library.NUMPY:
        text = respell.respell(text, function_name(tape, kind), tape.signature.library,
                               _numpy_only(tape))
    return text, constants


def _numpy_only(tape: Tape) -> frozenset:
    """The NumPy functions the code calls on NumPy values alone, beside a
    Dask array's (a weight's `np.sort`): what Dask lacks of them is no matter."""
    lazy = dask_values(tape)
    paths = {False: set(), True: set()}
    for op in tape.ops:
        if isinstance(op, Call):
            paths[op in lazy].add(primitives.function_path(op.fn))
    return frozenset(paths[False] - paths[True] - {None})


def compile_forward(tape: Tape) -> Callable:
    """The primal tape as a loaded Python function (`Tape.compile`)."""
    source, constants = generate(tape, kind="forward")
    constants, _ = array_library.device_constants(constants, tape.signature.library)
    return load(source, function_name(tape, "forward"), constants)
