"""What goes wrong in a run, said in one line on stderr.

Bad input is a UsageError (the command line), a config.ConfigError
(pyproject.toml), a UserExit (the user's code exited while yota-src ran it),
a YotaError of the pipeline, or whatever the user's code raised: each is
one line, led by the user's file and line where there is one.
"""

from __future__ import annotations

import os
import sysconfig
import traceback

from yota_src import errors
from yota_src.cli import config
from yota_src.errors import YotaError


class UsageError(Exception):
    """Bad command-line input, reported as one line."""


class UserExit(Exception):
    """The user's code exited (`sys.exit()`, `exit()`, `raise SystemExit`)
    while yota-src ran it: a failure of the input, not the end of the run."""

    def __init__(self, exit: SystemExit, doing: str, path: str, hint: str):
        super().__init__(f"exited with SystemExit({exit.code!r}) while yota-src was {doing}")
        self.exit, self.doing, self.path, self.hint = exit, doing, path, hint


def one_line(error: BaseException) -> str:
    """The error as one line, led by the user's file:line where there is one."""
    if isinstance(error, (UsageError, config.ConfigError)):
        return _first_line(error)
    if isinstance(error, UserExit):
        where = _user_location(error.exit) or error.path
        return f"{where}: {error}: {error.hint}"
    if isinstance(error, YotaError):
        first = _first_line(error)
        return f"{first} ({error.hint})" if error.hint else first
    if isinstance(error, SyntaxError):
        where = f"{error.filename}:{error.lineno}: " if error.filename else ""
        return f"{where}syntax error: {error.msg}"
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    where = _user_location(error)
    return f"{where + ': ' if where else ''}{type(error).__name__}: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _user_location(error: BaseException) -> str | None:
    """`file.py:12`: where the unroller was in the user's code, or else the
    innermost frame of the traceback that is in a file of the user's."""
    location = getattr(error, "yota_location", None)
    if location is not None:
        return f"{location.filename}:{location.lineno}"
    frames = [(frame.f_code.co_filename, lineno)
              for frame, lineno in traceback.walk_tb(error.__traceback__)]
    for filename, lineno in reversed(frames):
        if _is_user_file(filename):
            return f"{filename}:{lineno}"
    return None


_LIBRARY_DIRS = tuple(
    os.path.join(os.path.realpath(directory), "")
    for directory in {sysconfig.get_paths()[key] for key in
                      ("stdlib", "platstdlib", "purelib", "platlib")})


def _is_user_file(filename: str) -> bool:
    """Not yota-src, the standard library or an installed package, nor code
    without a file (`<frozen ...>`, generated modules)."""
    if filename.startswith("<") or errors.is_own_file(filename):
        return False
    return not os.path.join(os.path.realpath(filename), "").startswith(_LIBRARY_DIRS)
