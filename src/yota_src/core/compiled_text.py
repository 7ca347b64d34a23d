"""Python text run under a file name that `linecache` knows.

Generated modules, expression rules and transform wrappers are all text
yota-src writes and runs; registered so, `inspect.getsource` and tracebacks
read their lines back, which is what lets yota-src trace a generated
function again (a gradient inside a differentiated function).
"""

from __future__ import annotations

import hashlib
import linecache

GENERATED = "yota_src_generated"  # the package name of modules loaded here, not of ours


def run_registered(source: str, label: str, namespace: dict) -> dict:
    """Execute `source` in `namespace` under a linecache-registered file name,
    so inspect and tracebacks can read the text back."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    filename = f"<yota-src {label} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace.setdefault("__file__", filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace
