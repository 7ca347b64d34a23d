"""The module `gen` writes for a target: the gradient, or the transform
asked for, generated from the user's files; of several targets, each in a
process of its own.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

from yota_src import api
from yota_src.cli import config
from yota_src.cli.failures import UsageError
from yota_src.cli.output_files import refuse_overwriting_what_was_read
from yota_src.cli.process import HASH_SEED, own_command
from yota_src.cli.user_files import load_inputs, user_code
from yota_src.codegen import loader
from yota_src.differentiate import cotangents


def sources(targets: list[config.Target]) -> list[str]:
    """What gen writes for each target. Of several, each is generated in a
    process of its own, as its own command would be: a module one target's
    files import (a helpers.py beside it) or a rule one registers must not
    stand in for another's, nor the bytes depend on what ran before."""
    if len(targets) == 1:
        return [_source(targets[0])]
    return [_source_apart(target) for target in targets]


def source_of(target: config.Target, apart: bool) -> str:
    """What gen writes for one target (`apart`: in a process of its own, as
    one of several)."""
    return _source_apart(target) if apart else _source(target)


def _source(target: config.Target) -> str:
    """The module `yota-src gen` writes for `target` now."""
    fn, args = load_inputs(target.function, target.args)
    with user_code(f"differentiating {target.function}", target.function.rpartition(":")[0],
                   "the function must return its value, not exit"):
        gradient = _generated(fn, args, target)
    if target.out:
        refuse_overwriting_what_was_read(target.out, fn, gradient._dependencies)
    loader.require_saveable(gradient._function)  # the module is meant to be saved
    return gradient.source


def _source_apart(target: config.Target) -> str:
    """`_source(target)`, computed by `yota-src gen` in a new process; what
    the user's code prints there goes to stderr, as here."""
    environment = {**os.environ, "PYTHONHASHSEED": HASH_SEED, "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run(own_command(["gen", *target.arguments()]), capture_output=True,
                            encoding="utf-8", errors="replace", env=environment)
    lines = result.stderr.splitlines(keepends=True)
    failed = result.returncode != 0 and lines and lines[-1].startswith("yota-src: ")
    sys.stderr.write("".join(lines[:-1] if failed else lines))
    if result.returncode != 0:
        message = lines[-1].removeprefix("yota-src: ").removeprefix("error: ").strip() \
            if failed else f"exit status {result.returncode}"
        raise UsageError(f"{target.function} (for {target.out}): {message}")
    return result.stdout


def _generated(fn, args: tuple, target: config.Target) -> api.GradFunction:
    """The module `gen` writes: the gradient, or the --transform asked for,
    its extra arguments (v, the tangents, dout) made like the example's."""
    loops = "unroll" if target.unroll else "roll"
    transform = target.transform
    wrt = None if target.wrt is None else list(target.wrt)
    if transform != "grad" and (wrt is not None or target.has_aux):
        raise UsageError(f"--transform {transform} takes neither --wrt nor --has-aux")
    if transform == "grad":
        return api.simplegrad(fn, *args, wrt=wrt, has_aux=target.has_aux, loops=loops)
    if transform == "vjp":
        return api.vjp(fn, *args, loops=loops)[1]
    if transform == "hvp":
        if len(args) != 1:
            raise UsageError(f"--transform hvp differentiates a function of one argument; "
                             f"--args gives {len(args)}")
        return api.derivative(fn, args[0], copy.deepcopy(args[0]), transform="hvp",
                              loops=loops)
    tangents = [copy.deepcopy(arg) for arg in args if cotangents.is_float(arg)]
    return api.derivative(fn, *args, *tangents, transform="jvp", loops=loops)
