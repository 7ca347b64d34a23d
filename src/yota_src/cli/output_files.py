"""The files `gen` writes: never one of its inputs, written atomically, and
read back as they are to compare with what gen would write now.
"""

from __future__ import annotations

import os

from yota_src.cli.failures import UsageError
from yota_src.cli.made_from import files_read
from yota_src.cli.user_files import same_file
from yota_src.codegen import loader


def refuse_overwriting_inputs(output: str, *specs: str) -> None:
    """`-o` naming the file being differentiated (or the --args file) would
    replace the user's source with generated code: refuse before any work."""
    for spec in specs:
        path = spec.rpartition(":")[0]
        if path and same_file(output, path):
            raise UsageError(f"-o {output} names the input file {path}: "
                             "choose another output file")


def refuse_overwriting_what_was_read(output: str, fn, dependencies) -> None:
    """`-o` naming a file the gradient was made from (the function's source, a
    module whose globals or attributes the trace read, one a name read was
    imported from, a helper's source) would replace what the gradient froze
    with the gradient: the next run would import generated code. Refuse."""
    for path, what in files_read(fn, dependencies):
        if same_file(output, path):
            raise UsageError(f"-o {output} names {path}, which the gradient was made from "
                             f"({what}): choose another output file")


def write(path: str, text: str) -> None:
    """Write the module, making its directory first (`-o grads/grad_loss.py`
    in a new project)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{path}: cannot make its directory {directory}: "
                         f"{error.strerror or error}") from None
    loader.write_atomic(path, text)


def committed(path: str) -> str | None:
    """The file's text as it is now (None: there is none), line endings as
    they are (a CRLF file is not what gen writes). Bytes that are not UTF-8
    make it differ, not fail: it is stale, whatever it holds."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None
