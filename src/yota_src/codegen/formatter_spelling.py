"""The module's text as the formatters projects run over it (`ruff format`,
black) would spell it, so that formatting a generated file changes nothing
they agree on: strings in double quotes, `**` hugged between simple
operands (`x**2`, `-(x**2)`), a unary minus over a power parenthesised,
spaces around a slice's colon where a bound is an expression (`x[: n - 1]`).

Line breaking is layout.py's; this pass changes no line's breaks, only
spellings within lines, and is checked against ruff format by the tests
(tests/codegen/test_formatter_spelling.py).
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize

_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # (Python 3.12+)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@functools.lru_cache(maxsize=4096)  # (a module is made twice, at the example and the probe)
def formatter_spelled(text: str) -> str:
    """`text` with double-quoted strings, hugged powers and spaced slices (a
    lone block header, `if x[n - 1:] > 0:`, too)."""
    single = "\n" not in text.strip()
    indent = text[: len(text) - len(text.lstrip())] if single else ""  # a line of a block
    suffix = " pass" if single and text.rstrip().endswith(":") else ""
    spelled = text[len(indent):] + suffix
    if "'" in spelled:  # (each pass reads the text only where it may change something)
        spelled = _double_quoted(spelled)
    if "**" in spelled:
        spelled = _hugged(spelled)
    if _SLICE.search(spelled):
        spelled = _spaced_slices(spelled)
    return indent + spelled[: len(spelled) - len(suffix)]


# a subscript with a colon beside something other than a name or a number
_SLICE = re.compile(r"\[[^\]\n]*[-+*/%@(.~][^\]\n]*:|\[[^\]\n]*:[^\]\n]*[-+*/%@(.~]")


def _double_quoted(text: str) -> str:
    """Single-quoted strings (f-strings too) in double quotes, where that
    needs no more escapes: black's and ruff's preferred quote."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    offset = lambda position: starts[position[0] - 1] + position[1]  # noqa: E731
    spans, opened = [], []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):  # a piece of a statement
        return text
    for token in tokens:
        if token.type == tokenize.STRING:
            spans.append((offset(token.start), offset(token.end)))
        elif token.type == _FSTRING_START:
            opened.append(offset(token.start))
        elif token.type == _FSTRING_END:
            start = opened.pop()
            if not opened:  # (an f-string inside another's field: the outer one decides)
                spans.append((start, offset(token.end)))
    for start, end in reversed(spans):
        text = text[:start] + _in_double_quotes(text[start:end]) + text[end:]
    return text


def _in_double_quotes(literal: str) -> str:
    match = re.fullmatch(r"([A-Za-z]*)'(?!'')(.*)'", literal, re.S)
    if match is None:
        return literal  # double-quoted already, or triple-quoted
    prefix, body = match.groups()
    if '"' in body or "\\'" in body:
        return literal  # (it would need more escapes)
    return f'{prefix}"{body}"'


def _rewritten(text: str, edits_of) -> str:
    """`text` with the edits `edits_of(tree, lines)` gives, each `(line,
    column, end column, replacement)` on one line; unchanged where it does
    not parse on its own (a piece of a statement)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    for number, start, end, replacement in sorted(edits_of(tree, lines), reverse=True):
        line = lines[number - 1]
        lines[number - 1] = line[:start] + replacement + line[end:]
    return "".join(lines)


def _hugged(text: str) -> str:
    """`x ** 2` as `x**2` where both operands are simple (names, numbers,
    attribute chains, each maybe negated), and `-x ** 2` as `-(x**2)`."""
    return _rewritten(text, _power_edits)


def _power_edits(tree: ast.AST, lines: list[str]):
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) \
                and _simple(node.left) and _simple(node.right) \
                and node.left.end_lineno == node.right.lineno:
            line = lines[node.left.end_lineno - 1]
            start, end = _column(line, node.left.end_col_offset), _column(line,
                                                                          node.right.col_offset)
            if line[start:end].strip() == "**" and not _parenthesised(line, start, end):
                yield node.left.end_lineno, start, end, "**"
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.BinOp) \
                and isinstance(node.operand.op, ast.Pow) \
                and node.lineno == node.operand.end_lineno:
            line = lines[node.lineno - 1]
            start = _column(line, node.operand.col_offset)
            end = _column(line, node.operand.end_col_offset)
            if line[_column(line, node.col_offset):start].strip() in "-+~" \
                    and not line[:start].rstrip().endswith("("):
                yield node.lineno, end, end, ")"
                yield node.lineno, start, start, "("


def _spaced_slices(text: str) -> str:
    """`x[u:u + 3]` as `x[u : u + 3]`: a slice whose bound is an expression
    takes its colon as an operator, with spaces (none beside an omitted bound)."""
    return _rewritten(text, _slice_edits)


def _slice_edits(tree: ast.AST, lines: list[str]):
    for node in ast.walk(tree):
        if isinstance(node, ast.Slice) and node.step is None and node.lineno == node.end_lineno \
                and any(bound is not None and not _simple_bound(bound)
                        for bound in (node.lower, node.upper)):
            line = lines[node.lineno - 1]
            spelled = [line[_column(line, bound.col_offset):_column(line, bound.end_col_offset)]
                       if bound is not None else "" for bound in (node.lower, node.upper)]
            yield (node.lineno, _column(line, node.col_offset),
                   _column(line, node.end_col_offset), " : ".join(spelled).strip())


def _simple(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _simple(node.operand)
    if isinstance(node, ast.Attribute):
        return _simple_chain(node)
    return isinstance(node, ast.Name) or isinstance(node, ast.Constant) and (
        isinstance(node.value, (int, float, complex)) or node.value is None)


def _simple_bound(node: ast.expr) -> bool:
    """A slice bound the formatters write against its colon: a name or a
    number, maybe negated."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _simple_bound(node.operand)
    return isinstance(node, (ast.Name, ast.Constant))


def _simple_chain(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _column(line: str, offset: int) -> int:
    """ast's column (UTF-8 bytes) as an index into the line's characters."""
    return len(line.encode()[:offset].decode())


def _parenthesised(line: str, start: int, end: int) -> bool:
    """Whether the text between the operands holds brackets (`(x) ** (2)`:
    an operand in parentheses is not simple)."""
    return any(char in "()[]" for char in line[start:end])
