"""The user's files: imported as modules, and the objects named in them.

`FILE.py:NAME` names the function and the example arguments. The user's code
runs while yota-src imports their files and calls the --args callable, so
an exit there is reported as bad input at its line (`user_code`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import types
from collections.abc import Iterator

from yota_src.cli.failures import UsageError, UserExit


@contextlib.contextmanager
def user_code(doing: str, path: str, hint: str) -> Iterator[None]:
    """The user's code runs in this block: an exit from it is reported at its
    line (or else as `path`), with `hint` saying what to do instead."""
    try:
        yield
    except SystemExit as exit:
        raise UserExit(exit, doing, path, hint) from None


def load_inputs(target: str, example: str) -> tuple:
    """The function and its example arguments, from the user's files."""
    importing = "put the script's own work under `if __name__ == \"__main__\":`"
    target_path, example_path = target.rpartition(":")[0], example.rpartition(":")[0]
    with user_code(f"importing {target_path}", target_path, importing):
        fn = _load_object(target)
    if not callable(fn):
        raise UsageError(f"{target} is not a function (it is {type(fn).__name__} {fn!r:.40}): "
                         "name the function to differentiate (FILE.py:NAME)")
    with user_code(f"importing {example_path}", example_path, importing):
        args = _load_object(example)
    if callable(args):
        with user_code(f"calling {example}", example_path,
                       "the --args callable must return the example arguments, not exit"):
            args = args()
    if not isinstance(args, tuple):
        raise UsageError(f"{example} must be a tuple of arguments or return one, "
                         f"not {type(args).__name__}")
    return fn, args


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


imported: dict[str, types.ModuleType] = {}  # the user's files imported so far, by path


def _import_file(path: str) -> types.ModuleType:
    """Run the user's file as a module named after it.

    Its directory goes to the end of sys.path (its sibling modules import,
    but never in place of the standard library or installed packages), and
    it is registered in sys.modules under its name only where that name is
    free: a user's operator.py must not replace the `operator` that yota-src
    and NumPy import, nor pass for it. Otherwise it is named `<operator.py>`,
    which no import reaches: generated code that would need to import it is
    refused by codegen with a clear message.
    """
    path = os.path.abspath(path)
    if path in imported:
        return imported[path]
    directory, filename = os.path.split(path)
    module_name = os.path.splitext(filename)[0]
    register = _name_is_free(module_name, path)
    if not register:  # a name that is not importable, so nothing mistakes it for the other
        module_name = f"<{filename}>"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python file")
    if directory not in sys.path:
        sys.path.append(directory)
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if register:
            del sys.modules[module_name]
        raise
    imported[path] = module
    return module


def _name_is_free(module_name: str, path: str) -> bool:
    """Whether `import module_name` could only ever mean the file at `path`."""
    if not module_name.isidentifier() or module_name in sys.modules:
        return False
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return False
    return found is None or (found.origin is not None and same_file(found.origin, path))


def same_file(first: str, second: str) -> bool:
    """Whether two paths name one file, through symlinks and hard links."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)  # hard links
    except OSError:
        return False
