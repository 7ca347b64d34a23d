"""Generated module text -> a live function, or a file on disk.

Compiled modules are registered with `linecache` under a stable name, so
tracebacks show the generated lines and `inspect.getsource` can read a
generated function back (which is what lets yota-src differentiate it again).
"""

from __future__ import annotations

import hashlib
import linecache
import os
import tempfile
from collections.abc import Callable

from . import errors

_ERROR_CLASSES = {"SignatureMismatch": errors.SignatureMismatch,
                  "ControlFlowChanged": errors.ControlFlowChanged}


def run_registered(source: str, label: str, namespace: dict) -> dict:
    """Execute `source` in `namespace` under a linecache-registered file name,
    so inspect and tracebacks can read the text back."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    filename = f"<yota-src {label} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace.setdefault("__file__", filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def load(source: str, function_name: str, constants: dict | None = None) -> Callable:
    """Compile `source`; `constants` rebinds module-level names to live objects."""
    namespace = run_registered(source, function_name,
                               {"__name__": f"yota_src_generated.{function_name}"})
    namespace.update(constants or {})
    # A saved module raises plain ValueError; in-process, the precise subclasses.
    for name, error_class in _ERROR_CLASSES.items():
        if name in namespace:
            namespace[name] = error_class
    return namespace[function_name]


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Replace `path` with `text` in one step: never a half-written file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
