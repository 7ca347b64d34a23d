"""The errors a user reads: raised from their own call and their own line.

A public entry point is wrapped by `user_facing`, so that an error meant for
the user (errors.meant_for_user) leaves out yota-src's frames; an error the
trace stage placed at a line of the user's source is raised again from that
line by `errors_at_user_lines`, so the traceback shows their file, their line
and the source line itself.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from yota_src.errors import AT_USER_LINE, meant_for_user, without_internal_frames

P = ParamSpec("P")
R = TypeVar("R")


def user_facing(function: Callable[P, R]) -> Callable[P, R]:
    """The public entry point `function`, raising the errors meant for the
    user (errors.meant_for_user) without yota-src's frames: what they read is
    their call, their line where the error has one, and what to do. Its one
    frame is named after `function` (`in simplegrad`); IPython and pytest
    hide even that (`__tracebackhide__`). Type checkers see `function`'s
    own signature."""

    def entry(*args: P.args, **kwargs: P.kwargs) -> R:
        __tracebackhide__ = True  # noqa: F841 - read by IPython and pytest
        try:
            return function(*args, **kwargs)
        except Exception as error:
            if not meant_for_user(error):
                raise
            raise without_internal_frames(error) from error.__cause__  # yota-src's frames left out
    names = {"co_name": function.__name__}
    if sys.version_info >= (3, 11):
        names["co_qualname"] = function.__qualname__
    entry.__code__ = entry.__code__.replace(**names)
    return functools.wraps(function)(entry)


class errors_at_user_lines:  # noqa: N801 - used as a `with` statement
    """Re-raise errors from unrolling at the user's line, without unroller frames.

    A class rather than contextlib.contextmanager: that restores the original
    traceback when the same exception object is re-raised.
    """

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if not isinstance(error, Exception):
            return False
        location = getattr(error, "location", None) or getattr(error, "yota_location", None)
        if location is None:
            return False
        raise _at_line(error.with_traceback(None), location) from None


def _at_line(error: Exception, location) -> Exception:
    """`error` with a traceback whose one frame is the user's source line.

    The `raise` is compiled at that line, indented like it and exactly as
    wide (the name is underscores), so the traceback shows the line cleanly.
    """
    indent = len(location.line) - len(location.line.lstrip())
    name = "_" * max(len(location.line.strip()) - len("raise "), 1)
    if indent and location.lineno >= 2:
        text = "\n" * (location.lineno - 2) + "if 1:\n" + " " * indent + f"raise {name}"
    else:
        text = "\n" * (location.lineno - 1) + f"raise {name}"
    code = compile(text, location.filename, "exec")
    try:
        exec(code.replace(co_name=AT_USER_LINE), {name: error})
    except Exception as raised:
        return error.with_traceback(raised.__traceback__.tb_next)
    return error  # pragma: no cover - the exec always raises
