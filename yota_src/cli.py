"""`yota-src gen` and `yota-src trace`.

Bad input ends with one line on stderr and a non-zero exit, never a
traceback, and never touches an existing output file.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence

from . import api, codegen
from .errors import YotaError
from .loader import write_atomic


class UsageError(Exception):
    """Bad command-line input, reported as one line."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="yota-src", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("gen", help="write the gradient module of FILE.py:FUNC")
    gen.add_argument("target", metavar="FILE.py:FUNC")
    gen.add_argument("--args", required=True, metavar="FILE.py:NAME",
                     help="a zero-argument callable (or a tuple) giving example arguments")
    gen.add_argument("-o", "--output", metavar="OUT.py", help="write here instead of stdout")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if OUT.py is not what gen would write now")
    trace = commands.add_parser("trace", help="print the tape of FILE.py:FUNC")
    trace.add_argument("target", metavar="FILE.py:FUNC")
    trace.add_argument("--args", required=True, metavar="FILE.py:NAME")
    options = parser.parse_args(argv)
    try:
        return _run(options)
    except (UsageError, YotaError, SyntaxError, ImportError, OSError, ValueError, TypeError,
            AttributeError, NameError, KeyError, IndexError, AssertionError,
            codegen.CodegenError) as error:
        print(f"yota-src: error: {_one_line(error)}", file=sys.stderr)
        return 2


def _run(options) -> int:
    fn = _load_object(options.target)
    args = _load_object(options.args)
    args = args() if callable(args) else args
    if not isinstance(args, tuple):
        raise UsageError(f"{options.args} must be a tuple of arguments or return one, "
                         f"not {type(args).__name__}")
    if options.command == "trace":
        _, tape = api.trace(fn, *args)
        print(tape)
        return 0
    if options.check and not options.output:
        raise UsageError("--check needs -o OUT.py, the file to compare")
    source = api.simplegrad(fn, *args).source
    if options.check:
        try:
            with open(options.output, encoding="utf-8") as file:
                current = file.read()
        except FileNotFoundError:
            current = None
        if current != source:
            print(f"yota-src: {options.output} is stale: regenerate it with "
                  f"`yota-src gen {options.target} --args {options.args} -o {options.output}`",
                  file=sys.stderr)
            return 1
        return 0
    if options.output:
        write_atomic(options.output, source)
    else:
        sys.stdout.write(source)
    return 0


def _load_object(spec: str):
    """`path/to/file.py:NAME` -> the object, importing the file as a module."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:NAME, got {spec!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module = _import_file(path)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    return obj


_modules: dict[str, object] = {}


def _import_file(path: str):
    path = os.path.abspath(path)
    if path in _modules:
        return _modules[path]
    directory, filename = os.path.split(path)
    module_name = os.path.splitext(filename)[0]
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise UsageError(f"{path}:{error.lineno}: syntax error: {error.msg}") from None
    _modules[path] = module
    return module


def _one_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    first = text.splitlines()[0]
    if isinstance(error, YotaError):
        return f"{first} ({error.hint})" if error.hint else first
    if isinstance(error, UsageError):
        return first
    return f"{type(error).__name__}: {first}"


if __name__ == "__main__":
    sys.exit(main())
