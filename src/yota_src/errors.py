"""One exception type per failure the user can act on.

Every error that concerns the user's code carries a `Location` and prints it
the way a compiler would: file, line, the line itself and a caret under the
construct, then what to do about it.

`SignatureMismatch` and `ControlFlowChanged` are ValueErrors, raised by
generated code when it is called outside what it was generated for; a saved
module, which imports nothing of yota-src, raises ValueError with the same
message. The public API raises these errors without yota-src's own frames
in the traceback (set YOTA_SRC_FULL_TRACEBACK=1 to see them all).

Example:

    >>> import numpy as np
    >>> import yota_src as ys
    >>> from yota_src.errors import SourceUnavailableError
    >>> try:
    ...     ys.grad(np.sum, np.ones(3))
    ... except SourceUnavailableError as error:
    ...     print(error.message.split(" (")[0])
    np.sum is a primitive
"""

from __future__ import annotations

import os
import re
import sys
import types
from dataclasses import dataclass, field

__all__ = ["Location", "YotaError", "SourceUnavailableError", "UnsupportedSyntaxError",
           "NoDiffRuleError", "MutationError", "UnsaveableError", "SignatureMismatch",
           "ControlFlowChanged"]


@dataclass(frozen=True)
class Location:
    """Where in the user's source an operation came from: file, line, the
    line's text and the columns of the construct."""

    filename: str
    lineno: int
    line: str = ""
    col: int | None = None
    end_col: int | None = None
    # the blocks the primal computes under there (np.errstate, warnings filters,
    # try): contexts.py; the generated code computes under them too
    context: tuple = ()
    # the loops running there, outermost first: (LoopEntry, iteration) per
    # loop; see iterations.py
    loops: tuple = ()
    # the arms of `if` statements decided by the data running there, outermost
    # first: (BranchEntry, arm) each, where arm is True or False for an op of
    # that arm, "test" for the decision's guard, "join" for what a name holds
    # after it (tracing/branches.py)
    branches: tuple = ()

    @property
    def short(self) -> str:
        """`file.py:12`, the form used in comments and messages; code yota-src
        generated in this process (`<yota-src grad_f 1a2b...>`) is `grad_f:12`;
        a notebook cell is named as IPython's tracebacks name it."""
        generated = re.fullmatch(r"<yota-src (\w+) [0-9a-f]+>", self.filename)
        return place(generated.group(1) if generated else self.filename, self.lineno)

    def excerpt(self) -> str:
        """The source line with a caret under the construct, if known."""
        if not self.line:
            return ""
        text = self.line.rstrip()
        out = f"    {text.strip()}"
        if self.col is not None:
            indent = len(text) - len(text.lstrip())
            start = max(self.col - indent, 0)
            end = self.end_col if self.end_col and self.end_col > self.col else self.col + 1
            end = min(end - indent, len(text.strip()))
            out += "\n    " + " " * start + "^" * max(end - start, 1)
        return out


def place(filename: str, lineno: int, full: bool = False) -> str:
    """`file.py:12` (`full`: the file's whole path); code typed into IPython
    or Jupyter is `Cell In[3], line 2`, as IPython's tracebacks say, not the
    temporary file IPython compiled it from."""
    cell = _cell(filename)
    if cell is not None:
        return f"{cell}, line {lineno}"
    return f"{filename if full else os.path.basename(filename)}:{lineno}"


def _cell(filename: str) -> str | None:
    """IPython's name for the cell compiled from `filename`, where IPython runs."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    found = name(filename) if callable(name) else None
    return " ".join(found) if found else None


@dataclass(frozen=True, order=True)
class LoopEntry:
    """One run of a loop statement (an inner loop started again in each outer
    iteration is a new entry), numbered in the order they start; `header` is
    the statement's location, for what the code generated for it says."""

    number: int
    header: Location | None = field(default=None, compare=False)
    # where its trip count came from, when an int argument (counts.LoopCount)
    count: object = field(default=None, compare=False)
    is_while: bool = field(default=False, compare=False)  # a `while` (its test runs first)
    # the first number of a `for` over a range of step 1: the user's counter is
    # that plus the iteration's number
    start: int | None = field(default=None, compare=False)
    # whether its iterations change state the trace folds (counts.LoopState)
    state: object = field(default=None, compare=False)


@dataclass(frozen=True, order=True)
class BranchEntry:
    """One run of an `if` statement decided by the data inside a loop,
    numbered in the order they run; `node` is the statement (the same for
    every run: what tells the iterations' branches apart). `names`: the
    names the statement assigns, joined after it."""

    number: int
    node: object = field(default=None, compare=False)
    names: tuple = field(default=(), compare=False)


class YotaError(Exception):
    """Base of the errors that point at the user's code: `message` says what
    happened, `location` (a `Location`, or None) where, `hint` what to do;
    `str(error)` puts them together as a compiler would."""

    def __init__(self, message: str, location: Location | None = None, hint: str = ""):
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(f"{place(self.location.filename, self.location.lineno, full=True)}: "
                         f"{self.message}")
            excerpt = self.location.excerpt()
            if excerpt:
                parts.append(excerpt)
        else:
            parts.append(self.message)
        if self.hint:
            parts.append(self.hint)
        return "\n".join(parts)


class SourceUnavailableError(YotaError):
    """The function has no Python source to read (builtin, exec, REPL)."""


class UnsupportedSyntaxError(YotaError):
    """A construct the unroller cannot turn into straight-line code."""


class NoDiffRuleError(YotaError):
    """A primitive on the gradient path has no adjoint template."""


class MutationError(YotaError):
    """An in-place change of a value that is being differentiated."""


class UnsaveableError(YotaError):
    """A generated module that compares an argument with a live object (a
    lambda, a local function) cannot be saved: no file can hold the object."""


class SignatureMismatch(ValueError):
    """A generated gradient was called outside the shapes, dtypes or static
    values it was generated for."""


class ControlFlowChanged(ValueError):
    """A data-dependent branch went the other way than when the gradient was
    generated."""


# --- what the user sees ---------------------------------------------------

# The name of the one frame an error placed at the user's line is raised
# from (api/user_facing.py): the traceback shows the user's file and line there.
AT_USER_LINE = "<unrolled by yota-src>"

# yota-src's own files: the package, and its templates wherever they lie
# (a development checkout links yota_src/templates to templates/).
_OWN = tuple(sorted({os.path.join(path, "") for path in (
    os.path.dirname(os.path.abspath(__file__)),
    os.path.realpath(os.path.dirname(os.path.abspath(__file__))),
    os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")))}))


def is_own_file(filename: str) -> bool:
    """A file of yota-src's own (the package, its templates), never the
    user's line an error names."""
    return filename.startswith(_OWN) or os.path.realpath(filename).startswith(_OWN)


def meant_for_user(error: BaseException) -> bool:
    """Is `error` one yota-src raised for the user to act on (a YotaError, or
    an error placed at the user's line), rather than a bug of ours, whose
    frames whoever fixes it needs? YOTA_SRC_FULL_TRACEBACK=1 says no to all,
    to see every frame."""
    if os.environ.get("YOTA_SRC_FULL_TRACEBACK"):
        return False
    if isinstance(error, YotaError):
        return True
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name == AT_USER_LINE:
            return True
        traceback = traceback.tb_next
    return False


def without_internal_frames(error: BaseException) -> BaseException:
    """`error` with yota-src's own frames taken out of its traceback, so that
    what the user reads is their call, their line and the message: a dozen
    frames of the unroller say nothing they can act on. Their own frames
    (a function of theirs that ran natively, the line an error was placed
    at) stay."""
    kept = []
    traceback = error.__traceback__
    while traceback is not None:
        if not is_own_file(traceback.tb_frame.f_code.co_filename):
            kept.append(traceback)
        traceback = traceback.tb_next
    trimmed = None
    for each in reversed(kept):
        trimmed = types.TracebackType(trimmed, each.tb_frame, each.tb_lasti, each.tb_lineno)
    return error.with_traceback(trimmed)
