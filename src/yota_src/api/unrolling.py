"""The first stage started: `f` run by the interpreter on traced arguments.

Before the interpreter runs, the API refuses what has no source to unroll,
checks the arguments fit, and makes the signature the code is specialised
to; each leaf of the arguments that carries data becomes a traced input,
and an int passed to a named parameter a trip count read at run time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from yota_src.api.arguments import check_call, named_positional, parameter_names, refuse_unsupported
from yota_src.core import registry
from yota_src.core.primitives import display_name
from yota_src.core.values import (
    DATA,
    DIFF,
    GENERATOR,
    Rows,
    children,
    get_path,
    kind_of,
    rebuild,
    with_rows,
)
from yota_src.errors import SourceUnavailableError
from yota_src.ir.dims import DimFacts
from yota_src.ir.signature import Signature, signature_key
from yota_src.ir.specialisation import describe_outside
from yota_src.tracing import Unroller, array_library, counts, inlinable, rewind, samples
from yota_src.tracing.row_lists import row_list
from yota_src.tracing.source import function_source, unwrap
from yota_src.tracing.traced import Traced


def unroll(fn: Callable, args: tuple, rewind_draws: bool = True, loops: str = "roll",
           dims: bool = False, branches: bool = True, rows: bool = False):
    """Run `fn` on traced arguments: `(unroller, value, signature)`. Random
    generators it drew from are put back (`rewind_draws`) when the generated
    code is what will draw for the caller; `trace` returns the traced value
    itself, so it keeps the draws. What `fn` wrote into its arguments is
    still there, as the value may return it: the caller reads the value
    into a tape, then puts the writes back (`unroller.writes.put_back()`).
    `rows`: a list of arrays alike is one leaf, the rows of one array
    (core.values.Rows; tracing/row_lists.py)."""
    plain = unwrap(fn)
    _refuse_without_source(plain)
    source = function_source(plain)
    check_call(plain, args, source)
    signature, args = _signature(plain, args, source, rows)
    # a loop may become a loop op while traced; `dims`: sizes are read at run time
    signature.dims = DimFacts() if dims else None
    unroller = Unroller(roll=loops == "roll", dims=signature.dims)
    unroller.marks.enabled = branches and loops == "roll"  # (tracing/branches.py)
    traced = _traced_arguments(unroller, plain, args, signature)
    try:
        value = unroller.call_function(plain, traced, {})
    except BaseException:
        rewind(unroller.random_states)  # a failed attempt draws nothing
        unroller.writes.put_back()
        raise
    finally:
        unroller.close_generators()  # generators left unfinished, as Python closes them
    if unroller.returned_at is None:  # it ran off its end: its `def` line, for messages
        unroller.returned_at = source.location(source.node)
    if rewind_draws:
        rewind(unroller.random_states)
    signature.outside = describe_outside(unroller.outside_reads.dependencies.values())
    return unroller, value, signature


def _refuse_without_source(plain) -> None:
    """A primitive, a class or a function of a compiled module has no
    source of the user's to unroll."""
    name = getattr(plain, "__qualname__", None) or getattr(plain, "__name__", None) \
        or type(plain).__name__
    if registry.is_primitive(plain):
        raise SourceUnavailableError(
            f"{display_name(plain)} is a primitive (yota-src has a rule for it), not a Python "
            "function of yours with source to unroll",
            hint="Differentiate a function of your own that calls it, e.g. "
                 "`def f(x): return np.sum(x)`.")
    if not inlinable(plain):
        module = getattr(plain, "__module__", None)
        kind = "a class" if isinstance(plain, type) else \
            f"a function of {module}" if callable(plain) and module else f"a {type(plain).__name__}"
        raise SourceUnavailableError(
            f"{name} is {kind}, not a Python function with source yota-src can unroll",
            hint="Differentiate a Python function (`def` or `lambda`) that calls it.")


def _signature(plain: Callable, args: tuple, source, rows: bool) -> tuple[Signature, tuple]:
    """(the signature, the arguments to trace): device arrays are traced on
    host copies, and lists of arrays alike as Rows (`rows`), while the
    signature's key is the arguments the code takes."""
    params = parameter_names(plain, len(args))
    library = array_library.library_of(params, args)
    passed = args  # what the code takes: device arrays, for CuPy; Dask's samples, for Dask
    if library != array_library.NUMPY:
        args = array_library.on_host(args)  # traced on the host; the code runs on the device
    elif rows:
        args = tuple(map(with_rows, args))
    signature = Signature.of(plain.__name__, params, args,
                             module=getattr(plain, "__module__", "") or "",
                             qualname=plain.__qualname__, source_hash=source.source_hash,
                             library=library)
    if passed is not args:
        signature.key = signature_key(passed)
    if library == array_library.DASK:  # its guards take Dask arrays there
        where = samples.marked(passed)
        signature.leaves = [[dataclasses.replace(leaf, type=samples.DaskSample)
                             if (index, leaf.path) in where else leaf for leaf in leaves]
                            for index, leaves in enumerate(signature.leaves)]
    return signature, args


def _traced_arguments(unroller: Unroller, plain: Callable, args: tuple,
                      signature: Signature) -> tuple:
    """The arguments as the interpreter receives them: each leaf carrying
    data an input of the tape, an int for a named parameter a trip count,
    the rest as it is."""

    def leaf_value(index):
        def traced(path, leaf):
            if kind_of(leaf) not in (DIFF, DATA, GENERATOR):
                return leaf
            expression = signature.leaf_expression(index, path)
            if isinstance(leaf, Rows):  # a list of arrays alike: the rows of one
                refuse_unsupported(expression, leaf.array)
                return row_list(unroller, unroller.recorder.input(index, path, leaf.array,
                                                                  expression))
            refuse_unsupported(expression, leaf)
            return unroller.recorder.input(index, path, leaf, expression)
        return traced

    named = named_positional(plain)
    traced = tuple(counts.TripCount(arg, i) if type(arg) is int and i < named
                   else rebuild(arg, leaf_value(i)) for i, arg in enumerate(args))
    unroller.lengths = {value.op: (i, counts.Use()) for i, value in enumerate(traced[:named])
                        if isinstance(value, Traced) and np.ndim(value.value) >= 1}
    unroller.outside_reads.hold(traced)
    for paths in _reached_twice(args):  # each path's copy: a write into one is seen by the
        for index, path in paths:       # other in a call, not in the copies: refused
            unroller.outside_reads.aliased.add(id(get_path(traced[index], path)))
    return traced


def _reached_twice(args: tuple) -> list[list]:
    """The (index, path)s of each container the arguments reach by two paths or more."""
    found: dict[int, list] = {}

    def walk(index, value, path):
        if kind_of(value) != "struct" or isinstance(value, Rows):
            return
        found.setdefault(id(value), []).append((index, path))
        if len(found[id(value)]) == 1:
            for step, child in children(value):
                walk(index, child, path + (step,))
    for index, arg in enumerate(args):
        walk(index, arg, ())
    return [paths for paths in found.values() if len(paths) > 1]
