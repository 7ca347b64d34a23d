"""The pipeline: every derivative is made by `build`, one stage after another.

    trace → forward passes → differentiate → backward passes → codegen → load

Each stage hands the next a Tape (codegen, module text). With
YOTA_SRC_VERIFY=1 (the test suite sets it), every tape is checked by
`Tape.verify()`: the passes check their own (passes/__init__.py), and the
driver checks the tapes no pass made. With YOTA_SRC_DUMP=1, each stage's
tape, and the module codegen wrote, is printed to stderr as it comes out of
the stage: what to read first when a generated module is not what it should
be.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

from yota_src import codegen, passes
from yota_src.api.arguments import generators_in, parameter_names
from yota_src.api.loss import require_aux, require_scalar
from yota_src.api.results import Compiled
from yota_src.api.sizes import probe_arguments
from yota_src.api.transform_tapes import KINDS, result_only, without_cotangent
from yota_src.api.unrolling import unroll
from yota_src.api.user_facing import errors_at_user_lines
from yota_src.codegen import loader
from yota_src.core import primitives
from yota_src.core.primitives import display_name, is_output, store_in_argument
from yota_src.core.values import DaskSample, containers_in, flatten, path_expression, stackable
from yota_src.differentiate import cotangents
from yota_src.differentiate.sweep import differentiate
from yota_src.errors import ControlFlowChanged, MutationError, UnsupportedSyntaxError, YotaError
from yota_src.ir.dims import Symbol
from yota_src.ir.lazy import dask_values
from yota_src.ir.signature import Signature
from yota_src.ir.tape import Call, Tape
from yota_src.passes import eliminate_dead_code, optimize, optimize_forward
from yota_src.passes.dce import without_unread
from yota_src.tracing import Unroller, array_library, samples
from yota_src.tracing.source import unwrap
from yota_src.tracing.traced import values_of

DUMP = os.environ.get("YOTA_SRC_DUMP") == "1"


class Made(NamedTuple):
    """A module made, not yet loaded: what `build` compares and loads."""

    unroller: Unroller
    tape: Tape  # the final tape
    source: str
    constants: dict
    forward: Tape
    kind: str
    value: Any  # the traced value


def build(fn: Callable, args: tuple, wrt_args: frozenset, loops: str = "roll",
          work_arrays: bool = False, has_aux: bool = False,
          pullback: bool = False, kind: str = "gradient", sizes: bool = True) -> Compiled:
    """Trace, differentiate, optimise and load: the gradient (`pullback`: the
    vector-Jacobian product, taking a cotangent as its last argument; `kind`
    "hvp" or "jvp": a transform's wrapper, transform_wrappers.py, whose one
    differentiated argument's gradient is the result). `sizes`: the arrays'
    sizes are read at run time where the module, made again at other sizes,
    reads the same (sizes.py); else it is made for the example's sizes."""
    if any(samples.is_dask(leaf) for arg in args for _, leaf in flatten(arg)):
        _refuse_for_dask(fn, args, pullback, kind)
        args, work_arrays, sizes = samples.sampled(args), False, True  # (samples.py)
    options = (fn, args, wrt_args, loops, work_arrays, has_aux, pullback, kind, sizes)
    if kind == "gradient" and not pullback and loops == "roll" \
            and any(stackable(part) for arg in args for part in containers_in(arg)):
        try:  # each list of arrays alike read as one array, of any length (values.Rows)
            return _with_branches(*options, rows=True)
        except Exception:  # noqa: BLE001 - it changes such a list, or reads it otherwise:
            pass  # the list's arrays are leaves apart, as the function sees them
    return _with_branches(*options, rows=False)


def _with_branches(*options, rows: bool) -> Compiled:
    """`_built`; where making an `if` decided by the data in a loop into a
    branch of the loop's body fails (it is new), again with each decision a
    guard (right, if specialised)."""
    try:
        return _built(*options, rows=rows)
    except Exception as error:
        loops = options[3]
        if loops != "roll" or isinstance(error, YotaError) \
                and not isinstance(error, ControlFlowChanged):
            raise  # (the user's to act on: it does not depend on how loops are made)
        return _built(*options, rows=rows, branches=False)


def _built(fn: Callable, args: tuple, wrt_args: frozenset, loops: str, work_arrays: bool,
           has_aux: bool, pullback: bool, kind: str, sizes: bool, rows: bool,
           branches: bool = True) -> Compiled:
    options = (wrt_args, loops, work_arrays, has_aux, pullback, kind, branches, rows)
    if samples.marked(args):
        return _loaded(fn, args, _made_for_dask(fn, args, options), pullback)
    if sizes:
        try:
            made = _made(fn, args, *options, dims=True)
        except Exception:  # noqa: BLE001 - made for the example's sizes, which raises
            return _loaded(fn, args, _made(fn, args, *options, dims=False), pullback)
        if _serves_other_sizes(fn, args, options, made):
            return _loaded(fn, args, made, pullback)
    return _loaded(fn, args, _made(fn, args, *options, dims=False), pullback)


def _made_for_dask(fn: Callable, args: tuple, options: tuple) -> Made:
    """The module for Dask arrays, traced on a sample of them (samples.py):
    it must read at run time every size the sample cut, and serve others;
    one that cannot is refused, saying why."""
    try:
        made = _made(fn, args, *options, dims=True)
    except Exception as error:  # noqa: BLE001 - sizes the code cannot follow, or its own error
        if isinstance(error, YotaError) and not isinstance(error, ControlFlowChanged):
            raise  # (the user's to act on: what Dask lacks, what cannot be differentiated)
        try:
            _made(fn, args, *options, dims=False, dump=False)
        except Exception as own:  # noqa: BLE001 - it fails on the sample itself: said so
            raise UnsupportedSyntaxError(
                f"{display_name(fn)} fails on the sample of its Dask arrays it is traced on "
                f"({_sample_shapes(fn, args)}): {type(own).__name__}: {own}",
                hint="The sample is the data's first rows, sizes above "
                     f"{samples.SMALLEST} cut: a function that indexes rows past them, or "
                     "relates sizes otherwise than as multiples, fails there; one that fails "
                     "on the whole data fails there too.") from own
        raise _sizes_fixed(fn, "its code relates sizes in a way yota-src cannot follow; ") \
            from error
    if any(isinstance(op, Call) and op.fn in _AS_NUMBERS for op in dask_values(made.tape)):
        raise UnsupportedSyntaxError(
            f"the gradient of {display_name(fn)} cannot be written for Dask arrays: it reads a "
            "value computed from them as a Python number (`.item()`, `.tolist()`), which a "
            "Dask array does not give", hint="Compute that value outside the function and "
            "pass it in, or keep it an array (np.float64(x) and float(x) compute it).")
    if made.unroller.random_states:
        raise UnsupportedSyntaxError(
            f"the gradient of {display_name(fn)} cannot be written for Dask arrays: it draws "
            "random numbers, which the client would draw as NumPy arrays",
            hint="Draw them outside the function (da.random, on the workers) and pass them "
                 "in as an argument.")
    if not _reads_cut_sizes(made, args) or not _serves_other_sizes(fn, args, options, made):
        raise _sizes_fixed(fn, "its code holds one of the data's sizes as a number (a size "
                           "used as a value, a strided slice, a library routine yota-src "
                           "does not follow); ")
    return made


_AS_NUMBERS = (primitives.item, primitives.element, primitives.tolist)


def _sample_shapes(fn: Callable, args: tuple) -> str:
    """`X (65, 3), y (65,)`: the samples' shapes, by the names of the arguments."""
    params = parameter_names(unwrap(fn), len(args))
    return ", ".join(f"{path_expression(params[index], path)} {leaf.shape}"
                     for index, arg in enumerate(args) for path, leaf in flatten(arg)
                     if isinstance(leaf, DaskSample))


def _reads_cut_sizes(made: Made, args: tuple) -> bool:
    """Every size the sample cut from a Dask array is read at run time."""
    facts = made.tape.signature.dims
    if facts is None:
        return False
    for index, arg in enumerate(args):
        for path, leaf in flatten(arg):
            if not isinstance(leaf, DaskSample):
                continue
            for axis, size in enumerate(leaf.shape):
                symbol = Symbol(index, path, axis)
                if size > samples.SMALLEST and (
                        symbol not in facts.values or not isinstance(facts.find(symbol), Symbol)):
                    return False
    return True


def _refuse_for_dask(fn: Callable, args: tuple, pullback: bool, kind: str) -> None:
    """Dask arrays that no module serves (of unknown sizes, of CuPy chunks,
    beside CuPy arrays), and what is written for them only as a gradient."""
    array_library.library_of(parameter_names(unwrap(fn), len(args)), args)
    if pullback or kind != "gradient":  # (ys.vjp and the transforms refuse them first)
        array_library.refuse_dask("ys.vjp" if pullback else f"a {kind} transform", args)


def _sizes_fixed(fn: Callable, why: str) -> UnsupportedSyntaxError:
    """The refusal of a gradient for Dask arrays that cannot serve them: it
    was traced on a small sample of them, and must read their sizes."""
    return UnsupportedSyntaxError(
        f"the gradient of {display_name(fn)} cannot be written for Dask arrays: {why}it is "
        "traced on a small sample of them, and must serve the whole arrays, whatever "
        "their sizes", hint="Compute the arrays (x.compute()) if they fit in memory, or "
        "write the function so that it reads every size from the arrays (x.shape).")


def _serves_other_sizes(fn: Callable, args: tuple, options: tuple, made: Made) -> bool:
    """The module reads the same made at the probes (sizes.py): the first must
    run; the second (sizes equal in the example set apart) may not."""
    facts = made.tape.signature.dims
    library = made.forward.signature.library
    host = array_library.on_host(args) if library != array_library.NUMPY else args
    dask = samples.marked(args)
    def same_at(probe) -> bool | None:
        """Whether the module made at `probe` reads the same (None: it cannot
        be made at those sizes)."""
        try:
            again = _made(fn, samples.marking(probe, dask) if dask else
                          array_library.in_library(probe, library), *options,
                          dims=True, dump=False)
        except Exception:  # noqa: BLE001 - it cannot run at these sizes
            return None
        return again.source == made.source

    rows = options[-1]
    for apart in (False, True):
        small = probe_arguments(host, facts, apart, small=True,
                                counts=made.tape.free_counts, rows=rows)
        if small is not None and same_at(small):
            continue  # the same over a few rows as over many: cheaper to know
        probe = probe_arguments(host, facts, apart, rows=rows)
        if probe is None:
            continue
        same = same_at(probe)
        if same is None and not apart:  # sizes related unsaid: all of them scaled instead
            scaled = probe_arguments(host, facts, scaled=True, rows=rows)
            same = same_at(scaled) if scaled is not None else None
        if same is None and not apart or same is False:
            return False
    return True


def _made(fn: Callable, args: tuple, wrt_args: frozenset, loops: str, work_arrays: bool,
          has_aux: bool, pullback: bool, kind: str, branches: bool, rows: bool, dims: bool,
          dump: bool = True) -> Made:
    """Every stage up to the module's text, dumped (YOTA_SRC_DUMP) where `dump`."""
    has_aux = has_aux or kind == "jvp"
    with errors_at_user_lines():
        unroller, value, signature = unroll(fn, args, loops=loops, dims=dims, branches=branches,
                                            rows=rows)
        recorder = unroller.recorder
        try:  # the value read as it is, writes into the arguments included
            recorded = _recorded(unroller, value, signature, has_aux, pullback)
        finally:
            unroller.writes.put_back()  # the generated code makes them
        if pullback or kind in KINDS:
            _refuse_writes(recorded, "ys.vjp" if pullback else f"a {kind} transform")
        recorded = without_unread(recorded, recorder.row_ops)
        recorded = _after("trace", recorded, verify=True, values=recorder.values, dump=dump)
        forward = _after("forward passes", optimize_forward(recorded, loops), dump=dump)
        tape = differentiate(forward, recorder.values, wrt_args, recorder.input_names, has_aux,
                             pullback)
        if kind in KINDS:
            tape = result_only(tape, kind, min(wrt_args))
        tape = _after("differentiate", tape, verify=True, dump=dump)
    tape = _after("backward passes", optimize(tape, work_arrays), dump=dump)
    if kind == "jvp":
        tape = _after("the cotangent left out", without_cotangent(tape), dump=dump)
    kind = "vjp" if pullback else kind
    source, constants = codegen.generate(tape, kind)
    if dump:
        _dump("codegen", tape, source)
    return Made(unroller, tape, source, constants, forward, kind, value)


def _refuse_writes(tape: Tape, what: str) -> None:
    """A pullback runs the forward pass again at each call, so a write into an
    argument would happen once per call of it, never with the value: refused."""
    for op in tape.ops:
        if isinstance(op, Call) and op.fn is store_in_argument:
            raise MutationError(
                f"{what} of a function that writes into its arguments", op.loc,
                hint="Its generated code would repeat the write at each call of the "
                     "pullback: use ys.grad or ys.simplegrad (which make the write once per "
                     "call), or return the new state instead of writing it.")


def _loaded(fn: Callable, args: tuple, made: Made, pullback: bool) -> Compiled:
    unroller, tape, source, constants, forward, kind, value = made
    library = forward.signature.library
    constants, copied = array_library.device_constants(constants, library)
    function = loader.load(source, codegen.function_name(tape, kind), constants)
    if pullback:
        forward = forward.replace(output=forward.output[0])
    return Compiled(function, source, eliminate_dead_code(forward),
                    tuple(unroller.outside_reads.dependencies.values()) + copied,
                    generators=_generators_drawn(unroller, args),
                    draws=bool(unroller.random_states), holds_output=_holds_output(forward),
                    value=array_library.in_library(values_of(value), library)
                    if pullback else None, generated_from=tape)


def primal(fn: Callable, args: tuple) -> tuple[Any, Tape]:
    """The first stage alone, as `ys.trace` gives it: the value, and the
    tape of what computed it (random draws kept, as one call of `fn` makes
    them)."""
    with errors_at_user_lines():
        unroller, value, signature = unroll(fn, args, rewind_draws=False)
    try:
        traced, value = _tape(unroller, value, signature), values_of(value)
    finally:
        unroller.writes.put_back()
    tape = _after("trace", eliminate_dead_code(traced))
    tape.dependencies = tuple(unroller.outside_reads.dependencies.values())
    return value, tape


def _recorded(unroller: Unroller, value, signature: Signature, has_aux: bool,
              pullback: bool) -> Tape:
    """The trace as a tape, its output the loss (checked to be one), or for a
    pullback the value, with the cotangent one more argument."""
    if pullback:
        try:
            signature, output = cotangents.attach(unroller, signature, value)
        except ValueError as error:
            error.location = unroller.returned_at
            raise
        return Tape(list(unroller.recorder.ops), output, signature)
    if has_aux:
        require_aux(value, signature, unroller.returned_at)
    require_scalar(value[0] if has_aux else value, signature, unroller.returned_at)
    return _tape(unroller, value, signature)


def _tape(unroller: Unroller, value, signature: Signature) -> Tape:
    """What the trace recorded, computing `value`."""
    output = unroller.recorder.refs(value, unroller.loc)  # first: a static array returned is an op
    return Tape(list(unroller.recorder.ops), output, signature)


def _after(stage: str, tape: Tape, verify: bool = False, values: dict | None = None,
           dump: bool = True) -> Tape:
    """`tape` as `stage` gave it: verified (YOTA_SRC_VERIFY) where no pass
    has verified it, against the recorded `values` where given, and dumped
    (YOTA_SRC_DUMP)."""
    if verify and passes.VERIFY:
        tape.verify(values)
    if dump:
        _dump(stage, tape, tape)
    return tape


def _dump(stage: str, tape: Tape, made: Tape | str) -> None:
    """Print what `stage` made of `tape`'s function (YOTA_SRC_DUMP)."""
    if DUMP:
        heading = f"--- yota-src: {tape.signature.function_name} after {stage} ---"
        print(heading, str(made).rstrip("\n"), sep="\n", file=sys.stderr)


def _generators_drawn(unroller: Unroller, args: tuple) -> tuple:
    """The random generators the code draws from, but those passed in (each
    call's own)."""
    passed = generators_in(args)
    return tuple(generator for generator, _ in unroller.random_states.values()
                 if not any(generator is each for each in passed))


def _holds_output(tape: Tape) -> bool:
    """The code prints or warns, and logs nothing (Compiled.holds_output)."""
    shown = [op.fn for op in tape.ops if isinstance(op, Call) and is_output(op.fn)]
    return bool(shown) and all(fn is print or fn is warnings.warn for fn in shown)
