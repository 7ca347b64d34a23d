"""From a function object to its gast tree, scope and source locations."""

from __future__ import annotations

import functools
import hashlib
import inspect
import textwrap
import types
from dataclasses import dataclass

import gast

from .errors import Location, SourceUnavailableError, UnsupportedSyntaxError


@dataclass(eq=False)
class FunctionSource:
    """The parsed source of one function and how to point into it."""

    node: gast.FunctionDef | gast.Lambda
    filename: str
    first_line: int  # the file's line number of the snippet's first line
    lines: list[str]  # the snippet's original (un-dedented) lines
    indent: int  # columns removed by dedenting
    text: str

    @property
    def source_hash(self) -> str:
        return hashlib.sha1(self.text.encode()).hexdigest()[:12]

    def location(self, node) -> Location:
        row = getattr(node, "lineno", 1) - 1
        line = self.lines[row] if 0 <= row < len(self.lines) else ""
        col = getattr(node, "col_offset", None)
        end_col = getattr(node, "end_col_offset", None)
        if getattr(node, "end_lineno", None) != getattr(node, "lineno", None):
            end_col = None
        return Location(self.filename, self.first_line + row, line.rstrip("\n"),
                        None if col is None else col + self.indent,
                        None if end_col is None else end_col + self.indent)


def unwrap(fn):
    """Strip decorators (functools.wraps) and bind nothing: the plain function."""
    fn = inspect.unwrap(fn)
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    return fn


def function_source(fn) -> FunctionSource:
    fn = unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"{_describe(fn)} is not a Python function, so it has no source to differentiate",
            hint="Differentiate a Python function that calls it, or register a rule for it "
                 "with ys.diffrule.")
    return _parse(fn.__code__)


@functools.lru_cache(maxsize=1024)
def _parse(code: types.CodeType) -> FunctionSource:
    name = code.co_name
    try:
        lines, first_line = inspect.getsourcelines(code)
    except (OSError, TypeError):
        raise SourceUnavailableError(
            f"the source of {name}() (from {code.co_filename}) cannot be read",
            hint="yota-src reads source with inspect: define the function in a file "
                 "(not in exec(), eval() or the interactive prompt).") from None
    first_line = max(first_line, 1)
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = _indent_removed(raw, text)
    location = Location(code.co_filename, first_line, lines[0].rstrip("\n"))
    if name == "<lambda>":
        node = _find_lambda(text, code, first_line)
    else:
        try:
            tree = gast.parse(text)
        except SyntaxError as error:
            raise UnsupportedSyntaxError(f"cannot parse the source of {name}(): {error.msg}",
                                         location) from None
        node = tree.body[0]
        if isinstance(node, gast.AsyncFunctionDef):
            raise UnsupportedSyntaxError(f"{name}() is `async`", location,
                                         hint="Differentiate a plain (synchronous) function.")
    if node is None:
        raise SourceUnavailableError(f"cannot find the lambda's source in {code.co_filename}",
                                     location, hint="Give the function a name with `def`.")
    return FunctionSource(node, code.co_filename, first_line, lines, indent, text)


def _indent_removed(raw: str, dedented: str) -> int:
    for before, after in zip(raw.splitlines(), dedented.splitlines()):
        if before.strip():
            return len(before) - len(after)
    return 0


def _find_lambda(text: str, code: types.CodeType, first_line: int):
    """The Lambda node of `code` within its source lines."""
    tree = None
    for candidate in (text, f"({text.strip()})", text.strip().rstrip(",")):
        try:
            tree = gast.parse(candidate)
            break
        except SyntaxError:
            continue
    if tree is None:
        return None
    params = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    row = code.co_firstlineno - first_line + 1
    found = [node for node in gast.walk(tree) if isinstance(node, gast.Lambda)
             and node.lineno == row
             and [a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
             == params]
    return found[0] if found else None


def closure_values(fn) -> dict:
    """The values of a function's free variables (empty cells are left out)."""
    fn = unwrap(fn)
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            pass
    return values


def _describe(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module != "builtins" else name
