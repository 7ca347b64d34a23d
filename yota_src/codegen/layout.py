"""Line layout: statements fitted to the line limit, as `ruff format` would
write them, and the quoting of messages, strings, docstrings and comments.

A message shows values the code computes (`Field`s) among its words; it is
written as an f-string (or with `.format` where a field holds what an f-string
cannot on every supported Python) and cut between words into implicitly
concatenated literals where one line would be too long.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import NamedTuple

LINE_LIMIT = 100  # columns: longer statements are written over several lines


class Field(NamedTuple):
    """A value shown in a message: the code that computes it, and "r" for its repr."""

    code: str
    conversion: str = ""


def message(*parts) -> tuple:
    """A message made of literal text and `Field`s (code whose value it
    shows), written out by `wrapped`."""
    return parts


def raising(error: str, message: tuple, indent: int, tail: str = "") -> list[str]:
    """`raise error(message)` inside an `if`, wrapped to the line limit."""
    return ["    " + line for line in wrapped(f"raise {error}(", message, indent, ")" + tail)]


def condition_lines(condition: str) -> list[str]:
    """`if condition:`, one too long for a line broken before its `and`s and
    `or`s (inside parentheses, which it gains where its own do not hold them)."""
    line = f"if {condition}:"
    if len(line) + 4 <= LINE_LIMIT:
        return [line]
    breaks = _boolean_operators(line)
    if any(depth == 0 for _, depth in breaks):
        line = f"if ({condition}):"
        breaks = _boolean_operators(line)
    starts, previous = [0], None  # each line as long as fits, broken before an operator

    def too_wide(end: int) -> bool:
        return end - starts[-1] + 4 + (8 if len(starts) > 1 else 0) > LINE_LIMIT

    for at, _ in breaks:
        if previous is not None and too_wide(at):
            starts.append(previous)
        previous = at
    if previous is not None and previous > starts[-1] and too_wide(len(line)):
        starts.append(previous)
    lines = [line[a:b].rstrip() for a, b in zip(starts, starts[1:] + [len(line)])]
    return [lines[0], *("        " + piece for piece in lines[1:])]


def _boolean_operators(line: str) -> list[tuple[int, int]]:
    """Where each `and`/`or` of a line starts, and how deep in brackets."""
    found, depth = [], 0
    for token in tokenize.generate_tokens(io.StringIO(line).readline):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        elif token.type == tokenize.NAME and token.string in ("and", "or"):
            found.append((token.start[1], depth))
    return found


def fitted(line: str) -> list[str]:
    """A statement longer than LINE_LIMIT columns over several lines: the
    items of a literal or the arguments of a call one per line, a sum broken
    before its `+` and `-`; as it was where it has none of these, and always
    for a comment (whose source line is cut instead)."""
    if len(line) <= LINE_LIMIT:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    if text.startswith("#"):
        return [line[: LINE_LIMIT - 3].rstrip() + "..."]
    try:
        (statement,) = ast.parse(text).body
    except (SyntaxError, ValueError):
        return [line]
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)) \
            and statement.value is not None:
        value = ast.unparse(statement.value)
        if not text.endswith(value):
            return [line]
        head = text[: len(text) - len(value)]
        lines = _broken(statement.value, indent, head)
        return lines or [line]
    return [line]


def _broken(value: ast.expr, indent: str, head: str) -> list[str] | None:
    inner = indent + "    "
    if isinstance(value, (ast.Dict, ast.List, ast.Tuple)) or (
            isinstance(value, ast.Call) and (value.args or value.keywords)):
        if isinstance(value, ast.Dict):
            items = [f"{ast.unparse(key)}: {ast.unparse(item)}"
                     for key, item in zip(value.keys, value.values)]
            opening, closing = "{", "}"
        elif isinstance(value, ast.Call):
            items = [ast.unparse(a) for a in value.args] + [ast.unparse(k) for k in value.keywords]
            opening, closing = ast.unparse(value.func) + "(", ")"
        else:
            items = [ast.unparse(e) for e in value.elts]
            opening, closing = ("[", "]") if isinstance(value, ast.List) else ("(", ")")
        return [f"{indent}{head}{opening}", *(f"{inner}{item}," for item in items),
                f"{indent}{closing}"]
    terms = _sum_terms(value)
    if len(terms) < 2:
        return None
    lines = [f"{indent}{head}({terms[0]}"]
    pad = indent + " " * (len(head) + 1)
    for term in terms[1:]:
        if len(lines[-1]) + len(term) + 1 > LINE_LIMIT - 1:
            lines.append(pad + term.lstrip())
        else:
            lines[-1] += " " + term
    lines[-1] += ")"
    return lines


def _sum_terms(value: ast.expr) -> list[str]:
    """`a + b - c` as ["a", "+ b", "- c"]: the operands of a left-leaning sum."""
    terms = []
    while isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        sign = "+" if isinstance(value.op, ast.Add) else "-"
        right = ast.unparse(value.right)
        if isinstance(value.right, ast.BinOp) and isinstance(value.right.op, (ast.Add, ast.Sub)):
            right = f"({right})"
        terms.append(f"{sign} {right}")
        value = value.left
    terms.append(ast.unparse(value))
    return terms[::-1]


def wrapped(head: str, parts: tuple, indent: int, tail: str = ")") -> list[str]:
    """`head`, the message `parts` as a string expression, and `tail`: split
    into implicitly concatenated literals where one line would pass
    LINE_LIMIT columns (starting `indent` columns in), as a person writes a
    long message."""
    one = head + _literal(parts) + tail
    if indent + len(one) <= LINE_LIMIT:
        return [one]
    width = LINE_LIMIT - indent - len(head) - len(tail)
    chunks = _chunks(parts, width)
    if chunks is None:
        return [one]
    pad = " " * len(head)
    lines = [pad + _literal(chunk) for chunk in chunks]
    lines[0] = head + lines[0][len(pad):]
    lines[-1] += tail
    return lines


def _chunks(parts: tuple, width: int) -> list[list] | None:
    """`parts` cut between words into pieces whose literals fit `width`;
    None where a field needs the `.format` spelling, which is not cut."""
    if any(char in part.code for part in parts if isinstance(part, Field) for char in '\\"#'):
        return None
    tokens = [token for part in parts for token in (
        re.findall(r"\S+\s*|\s+", part) if isinstance(part, str) else [part])]
    chunks: list[list] = [[]]
    for token in tokens:  # spaces stay at the end of a piece: no piece is a bare " "
        if chunks[-1] and len(_literal(chunks[-1] + [token])) > width \
                and (not isinstance(token, str) or token.strip()):
            chunks.append([])
        chunks[-1].append(token)
    return chunks


def _literal(parts) -> str:
    """Parts of a message as one string literal: an f-string only where it
    shows a field."""
    if not any(isinstance(part, Field) for part in parts):
        return quoted("".join(parts))
    return _message_source(*parts)


def _message_source(*parts) -> str:
    """Source text of a message made of literal text and `Field`s: an
    f-string, or `"...{!r}...".format(...)` where a field's code holds what an
    f-string field cannot on every supported Python (a backslash, a double
    quote, `#`)."""
    fields = [part for part in parts if isinstance(part, Field)]
    if not any(char in field.code for field in fields for char in '\\"#'):
        return 'f"' + "".join(
            _string_body(part).replace("{", "{{").replace("}", "}}") if isinstance(part, str)
            else "{" + part.code + (f"!{part.conversion}" if part.conversion else "") + "}"
            for part in parts) + '"'
    template = "".join(part.replace("{", "{{").replace("}", "}}") if isinstance(part, str)
                       else "{!r}" if part.conversion == "r" else "{}" for part in parts)
    return f"{quoted(template)}.format({', '.join(field.code for field in fields)})"


def _string_body(text: str) -> str:
    """`text` as written between double quotes: backslashes, double quotes
    and unprintable characters escaped."""
    return "".join(char if char.isprintable() and char not in '\\"'
                   else "\\" + char if char in '\\"' else repr(char)[1:-1] for char in text)


def quoted(text: str) -> str:
    return f'"{_string_body(text)}"'


def docstring_body(text: str) -> str:
    """`text` as written inside a triple-quoted docstring: backslashes and
    unprintable characters escaped, no run of three quotes."""
    body = "".join("\\\\" if char == "\\" else char if char.isprintable() or char == "\n"
                   else repr(char)[1:-1] for char in text)
    return body.replace('"""', '""\\"')


def comment(text: str) -> str:
    """`text` as the rest of a `#` comment: a line break in it would end the
    comment, so unprintable characters are escaped."""
    return "".join(char if char.isprintable() or char == "\t" else repr(char)[1:-1]
                   for char in text)
