"""Generated module text -> a live function, or a file on disk.

Compiled modules are registered with `linecache` under a stable name, so
tracebacks show the generated lines and `inspect.getsource` can read a
generated function back (which is what lets yota-src differentiate it again).
"""

from __future__ import annotations

import linecache
import os
import tempfile
from collections.abc import Callable
from typing import Any, NamedTuple

from yota_src import errors
from yota_src.core.compiled_text import GENERATED, run_registered

_ERROR_CLASSES = {"SignatureMismatch": errors.SignatureMismatch,
                  "ControlFlowChanged": errors.ControlFlowChanged}


class InProcessOnly(NamedTuple):
    """A live object the generated code compares by identity, or a large
    array no import reaches: the module text cannot spell it, so only the
    loaded function has it."""

    value: Any
    description: str  # `act is model.<lambda>`, for the refusal to save
    location: errors.Location | None = None  # where the primal read it, if not a definition
    refusal: str | None = None  # why it cannot be saved, where not an object's identity
    hint: str | None = None  # the way out, where not a function's


_IN_PROCESS_ONLY = "__yota_src_in_process_only__"


def load(source: str, function_name: str, constants: dict | None = None) -> Callable:
    """Compile `source`; `constants` rebinds module-level names to live objects."""
    namespace = run_registered(source, function_name,
                               {"__name__": f"{GENERATED}.{function_name}"})
    constants = constants or {}
    namespace.update({name: getattr(value, "value", value) if isinstance(value, InProcessOnly)
                      else value for name, value in constants.items()})
    namespace[_IN_PROCESS_ONLY] = tuple(value for value in constants.values()
                                        if isinstance(value, InProcessOnly))
    # A saved module raises plain ValueError; in-process, the precise subclasses.
    for name, error_class in _ERROR_CLASSES.items():
        if name in namespace:
            namespace[name] = error_class
    return namespace[function_name]


def require_saveable(function: Callable) -> None:
    """Refuse a loaded function whose guards compare arguments with live objects:
    a saved copy would refuse every call, or worse if edited to run."""
    live = getattr(function, "__globals__", {}).get(_IN_PROCESS_ONLY, ())
    if live and live[0].refusal is not None:
        raise errors.UnsaveableError(f"{function.__name__} cannot be saved: {live[0].refusal}",
                                     live[0].location, hint=live[0].hint)
    if live:
        value, description, *_ = live[0]
        raise errors.UnsaveableError(
            f"{function.__name__} cannot be saved: it was generated for {description}, "
            "an object that only this process has and the module cannot write down",
            _definition(value),
            hint="Pass a function defined at the top level of an importable module, or a "
                 "value written as a literal (a number, string, tuple), or use the "
                 "gradient in this process.")


def _definition(value) -> errors.Location | None:
    """Where a function was defined, to point the user at it."""
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    if code is None:
        return None
    line = linecache.getline(code.co_filename, code.co_firstlineno)
    return errors.Location(code.co_filename, code.co_firstlineno, line)


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Replace `path` with `text` in one step: never a half-written file.

    A symlink is followed and its target replaced (the link stays a link);
    the file keeps its mode, or a new one gets what a plain `open` would give
    under the umask. Errors name `path`, never the temporary file.
    """
    path = os.fspath(path)
    target = os.path.realpath(path)
    try:
        _replace(target, text)
    except OSError as error:
        raise type(error)(error.errno, error.strerror, path) from None


def _replace(target: str, text: str) -> None:
    directory, name = os.path.split(target)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def _umask() -> int:
    """The process umask (reading it means setting it, so set it straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
