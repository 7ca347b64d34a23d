"""From a function object to its gast tree, scope and source locations."""

from __future__ import annotations
import __future__

import ast
import functools
import hashlib
import inspect
import linecache
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field

import gast

from yota_src.errors import Location, SourceUnavailableError, UnsupportedSyntaxError


@dataclass(eq=False)
class FunctionSource:
    """The parsed source of one function and how to point into it."""

    node: gast.FunctionDef | gast.Lambda
    filename: str
    first_line: int  # the file's line number of the snippet's first line
    lines: list[str]  # the snippet's original (un-dedented) lines
    indent: int  # columns removed by dedenting
    text: str
    private: dict = field(default_factory=dict)  # `__x` -> `_Class__x`, as compiled

    def mangle(self, name: str) -> str:
        """A private attribute name as the compiler mangled it inside a class."""
        return self.private.get(name, name)

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


    def user_location(self, node) -> Location:
        """Where a decision is, for its message: in code yota-src generated (a
        gradient differentiated again), the user's line that code computes,
        from the comment above it (`# model.py:12  h = np.tanh(...)`)."""
        if self.filename.startswith("<yota-src "):
            found = self._commented(getattr(node, "lineno", 1) - 1)
            if found is not None:
                return found
        return self.location(node)

    def _commented(self, row: int) -> Location | None:
        for line in reversed(self.lines[: row + 1]):
            found = _COMMENT.match(line)
            if found is not None:
                return Location(found.group(1), int(found.group(2)), found.group(3))
        return None


_COMMENT = re.compile(r"\s*# ([^\s:]+\.py):(\d+)  (.*)$")


def unwrap(fn):
    """The function whose source to read: staticmethod/classmethod objects are
    looked through. Decorators (functools.wraps included) are code of their
    own, inlined like any function: a wrapper may change the result. A cache
    (functools.lru_cache) is not looked through either: what it returns
    depends on the calls before, so it runs natively."""
    while isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    return fn


def function_source(fn) -> FunctionSource:
    fn = unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"{_describe(fn)} is not a Python function, so it has no source to differentiate",
            hint="Differentiate a Python function that calls it, or register a rule for it "
                 "with ys.diffrule.")
    return _parse(fn.__code__, fn.__code__.co_filename)


@functools.lru_cache(maxsize=1024)
def _parse(code: types.CodeType, filename: str) -> FunctionSource:
    """(`filename` in the key: equal code objects of two files compare equal,
    and each has its own lines to name)"""
    name = code.co_name
    try:
        lines, first_line = inspect.getsourcelines(code)
    except (OSError, TypeError):
        raise SourceUnavailableError(
            f"the source of {name}() cannot be read: {_why_no_source(code.co_filename)}",
            hint="yota-src reads a function's source with inspect. Put the function in a "
                 "file (a module you import, or a script you run), or use IPython or "
                 "Jupyter, which keep the source of every cell.") from None
    first_line = max(first_line, 1)
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = _indent_removed(raw, text)
    location = Location(code.co_filename, first_line, lines[0].rstrip("\n"))
    if not _compiles_to(code):
        raise SourceUnavailableError(
            f"the source of {getattr(code, 'co_qualname', name)}() in {code.co_filename} "
            "changed after it was imported: yota-src would differentiate the new text while "
            "the function runs the old code", location,
            hint="Re-import the module (importlib.reload) or restart Python, then "
                 "differentiate again.")
    if name == "<lambda>":
        node = _find_lambda(text, code, first_line, indent)
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
    return FunctionSource(node, code.co_filename, first_line, lines, indent, text,
                          _private_names(code))


def _why_no_source(filename: str) -> str:
    """Where a function without readable source came from, in the user's
    words: the prompt and `python -c` are where people meet this first."""
    if filename == "<stdin>" and not hasattr(sys, "ps1"):  # `python - < file.py`
        return "it was read from standard input (`python - < file.py`), which keeps no source"
    if filename == "<stdin>":
        return ("it was typed at Python's interactive prompt, which keeps no source "
                "(the prompt of Python 3.13 and newer does)")
    if filename == "<string>":
        return "it was defined by code run from a string (exec(), eval() or `python -c`)"
    if filename.startswith("<"):
        return f"it was defined in {filename}, which keeps no source"
    return f"its file, {filename}, cannot be read"


_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _compiles_to(code: types.CodeType) -> bool:
    """Does the function's file, as it reads now, compile to the code it runs?

    The whole file is compiled, as the import did (the compiler's choices
    depend on the module: names bound by imports, future flags), and the
    function's code must be among its code objects, at the same line (the
    line inspect reads the source from). A file that cannot be
    read is given the benefit of the doubt; one that no longer compiles has
    changed.
    """
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return True
    try:
        compiled = _compile_file("".join(lines), code.co_filename,
                                 code.co_flags & _FUTURE_FLAGS)
    except (SyntaxError, ValueError):
        return False
    name = getattr(code, "co_qualname", code.co_name)
    return any(_same_code(candidate, code) for candidate in _code_objects(compiled)
               if getattr(candidate, "co_qualname", candidate.co_name) == name
               and candidate.co_firstlineno == code.co_firstlineno)


@functools.lru_cache(maxsize=64)
def _compile_file(text: str, filename: str, flags: int) -> types.CodeType:
    return compile(text, filename, "exec", flags=flags, dont_inherit=True)


def _private_names(code: types.CodeType) -> dict:
    """`__x` -> `_Class__x` for the mangled names the function's code uses."""
    private = {}
    for each in (code, *_code_objects(code)):
        for name in each.co_names:
            split = name.find("__", 1)
            if name.startswith("_") and split > 1 and not name.endswith("__"):
                private[name[split:]] = name
    return private


def _code_objects(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _code_objects(const)


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Same instructions, names and constants; line numbers may differ."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars) != \
            (b.co_code, b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    return all(_same_constant(x, y) for x, y in zip(a.co_consts, b.co_consts))


def _same_constant(x, y) -> bool:
    """Equal as constants of code: 0.0 and -0.0 differ, NaN equals NaN."""
    if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
        return _same_code(x, y)
    if type(x) is not type(y):
        return False
    if isinstance(x, (tuple, frozenset)):
        return len(x) == len(y) and all(
            _same_constant(a, b) for a, b in zip(_ordered(x), _ordered(y)))
    if isinstance(x, (float, complex)):
        return repr(x) == repr(y)
    return x == y


def _ordered(constants):
    return constants if isinstance(constants, tuple) else sorted(constants, key=repr)


def _indent_removed(raw: str, dedented: str) -> int:
    for before, after in zip(raw.splitlines(), dedented.splitlines()):
        if before.strip():
            return len(before) - len(after)
    return 0


def _find_lambda(text: str, code: types.CodeType, first_line: int, indent: int):
    """The Lambda node of `code` within its source lines: the one on its line
    with its parameters or, when several are, the one whose code it is.

    The lines inspect gives are parsed alone where they make an expression;
    where they do not (an entry of a dict literal, a keyword argument of a
    call spread over lines), the lambda is found in the whole file."""
    for candidate in (text, f"({text.strip()})", text.strip().rstrip(",")):
        try:
            tree = gast.parse(candidate)
        except SyntaxError:
            continue
        return _lambda_on_line(tree, code, code.co_firstlineno - first_line + 1)
    try:
        tree = gast.parse("".join(linecache.getlines(code.co_filename)))
    except (SyntaxError, ValueError):
        return None
    node = _lambda_on_line(tree, code, code.co_firstlineno)
    if node is not None:  # make its positions relative to the dedented snippet
        for part in gast.walk(node):
            if hasattr(part, "lineno"):
                part.lineno -= first_line - 1
                part.end_lineno -= first_line - 1
                part.col_offset -= indent
                part.end_col_offset -= indent
    return node


def _lambda_on_line(tree, code: types.CodeType, row: int):
    found = sorted((node for node in gast.walk(tree)
                    if isinstance(node, gast.Lambda) and node.lineno == row
                    and _parameters(node) == _code_parameters(code)),
                   key=lambda node: node.col_offset)
    if len(found) <= 1:
        return found[0] if found else None
    index = _lambda_index(code, len(found))
    if index is None:
        raise SourceUnavailableError(
            f"line {code.co_firstlineno} of {code.co_filename} has {len(found)} lambdas with "
            "the same parameters, and which one this is cannot be told",
            Location(code.co_filename, code.co_firstlineno,
                     linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")),
            hint="Give the function a name with `def`, or put the lambdas on separate lines.")
    return found[index]


_MARK = 1_000_000  # a line number no file reaches


def _lambda_index(code: types.CodeType, count: int) -> int | None:
    """Which of the `count` lambdas on code's line (with its parameters, in
    column order) `code` was compiled from: the file is compiled again with
    each of them moved to a line of its own, and their code compared with
    `code`. Lambdas with the same code are interchangeable: the first is taken."""
    lines = linecache.getlines(code.co_filename)
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    nodes = sorted((node for node in ast.walk(tree)
                    if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno
                    and _parameters(node) == _code_parameters(code)),
                   key=lambda node: node.col_offset)
    if len(nodes) != count:
        return None
    for index, node in enumerate(nodes):
        node.lineno = node.end_lineno = _MARK + index
    try:
        compiled = compile(tree, code.co_filename, "exec",
                           flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    matches = [each.co_firstlineno - _MARK for each in _code_objects(compiled)
               if each.co_firstlineno >= _MARK and _same_code(each, code)]
    return min(matches) if matches else None


def _parameters(node) -> list[str]:
    arguments = node.args
    names = [a.id if hasattr(a, "id") else a.arg
             for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    return names


def _code_parameters(code: types.CodeType) -> list[str]:
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def node_text(node) -> str:
    """The source text of an expression, for messages."""
    try:
        return ast.unparse(gast.gast_to_ast(node))
    except Exception:  # pragma: no cover - text is only for messages
        return "<expression>"


def closure_cells(fn) -> dict:
    """A function's free variables by name: cells, read when the name is
    (a cell's contents can be rebound after the function was made)."""
    fn = unwrap(fn)
    return dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))


def _describe(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module != "builtins" else name
