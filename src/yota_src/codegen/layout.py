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


def definition(name: str, params: list[str]) -> list[str]:
    """`def name(params):`, its parameters one per line where too long."""
    line = f"def {name}({', '.join(params)}):"
    if len(line) <= LINE_LIMIT or not params:
        return [line]
    return [f"def {name}(", *(f"    {param}," for param in params), "):"]


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
    lines = [lines[0], *("        " + piece for piece in lines[1:])]
    if all(len(piece) + 4 <= LINE_LIMIT for piece in lines):
        return lines
    # an operand too long for a line of its own: broken inside its brackets
    text = _Source(condition)
    return [piece[4:] for piece in text.lines(ast.parse(text, mode="eval").body, "    ",
                                                "if ", ":")]


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
    """A statement longer than LINE_LIMIT columns over several lines, broken
    inside brackets as `ruff format` breaks it: the items of a literal or the
    arguments of a call one per line, a chain of operators before each
    operator, going inwards until every line fits (a sum keeps its terms
    several to a line). A comment's source line is cut instead; a statement
    of another kind, or a name or number longer than a line, stays whole."""
    if len(line) <= LINE_LIMIT:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    text = line.strip()
    if text.startswith("#"):
        return [line[: LINE_LIMIT - 3].rstrip() + "..."]
    try:
        (statement,) = ast.parse(text + " pass" if text.endswith(":") else text).body
    except (SyntaxError, ValueError):
        return [line]
    if isinstance(statement, (ast.If, ast.While)) and text.startswith(("if ", "while ")):
        head = text.split(" ", 1)[0] + " "  # `if x > 0:`: its test broken
        return _Source(text).lines(statement.test, indent, head, ":")
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)) \
            and statement.value is not None:
        value = _Source(text)(statement.value)
        if not text.endswith(value):
            return [line]
        return _Source(text).lines(statement.value, indent, text[: len(text) - len(value)], "")
    return [line]


class _Source(str):
    """A statement's text, whose parts are written as they are spelled in it
    (its quotes, its numbers), not as `ast.unparse` would."""

    def __call__(self, node: ast.AST) -> str:
        return ast.get_source_segment(self, node)

    def lines(self, value: ast.expr, indent: str, head: str, tail: str) -> list[str]:
        """`head`, `value` and `tail` at `indent`, broken where one line would not fit."""
        one = f"{indent}{head}{self(value)}{tail}"
        if len(one) <= LINE_LIMIT:
            return [one]
        inner = indent + "    "
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            pieces = _pieces(value.value, LINE_LIMIT - len(inner) - len(tail) - 1)
            if len(pieces) > 1:  # implicitly concatenated, in parentheses of their own
                return [f"{indent}{head}(", *(f"{inner}{piece}" for piece in pieces),
                        f"{indent}){tail}"]
        bracketed = self.items(value)
        if bracketed is not None:
            opening, items, closing = bracketed
            first = [f"{indent}{head}{opening}"]
            arguments = ", ".join(prefix + self(item) for prefix, item in items)
            if len(first[0]) > LINE_LIMIT and isinstance(value, ast.Call):
                first = self.lines(value.func, indent, head, "(")  # what is called breaks first
                if len(first[-1] + arguments + closing + tail) <= LINE_LIMIT:
                    return [*first[:-1], first[-1] + arguments + closing + tail]
            if len(inner + arguments) <= LINE_LIMIT and isinstance(value, ast.Call):
                return [*first, inner + arguments, f"{indent}{closing}{tail}"]  # (a literal's:
                # one a line, as black explodes them)
            if len(items) == 1 and not isinstance(value, ast.Tuple):  # broken inside it, no comma
                prefix, item = items[0]
                return [*first, *self.lines(item, inner, prefix, ""), f"{indent}{closing}{tail}"]
            return [*first, *(piece for prefix, item in items
                              for piece in self.lines(item, inner, prefix, ",")),
                    f"{indent}{closing}{tail}"]
        chain = _chain(value)
        if chain is not None and len(chain) == 2 and self.ends_in_brackets(chain[1]):
            # one operator, brackets last: broken inside them, as black does
            (before, operand, after), (operator, last, closing) = chain
            start = f"{head}{before}{self(operand)}{after} {operator}"
            lines = [f"{indent}{start}", *self.body(last, inner), f"{indent}){tail}"] \
                if closing else self.lines(last, indent, start, tail)
            if all(len(piece) <= LINE_LIMIT for piece in lines):
                return lines
        if chain is not None:  # in parentheses: on one line there, else an operand a line
            joined = inner + " ".join(before + self(operand) + after
                                      for before, operand, after in chain)
            if len(joined) <= LINE_LIMIT:
                return [f"{indent}{head}(", joined, f"{indent}){tail}"]
            return [f"{indent}{head}(",
                    *(piece for before, operand, after in chain
                      for piece in self.lines(operand, inner, before, after)),
                    f"{indent}){tail}"]
        if isinstance(value, ast.Call):  # a call without arguments: break what is called
            return self.lines(value.func, indent, head, "()" + tail)
        if isinstance(value, ast.Attribute):
            bare = _precedence(value.value) == ATOM and not isinstance(value.value, ast.Constant)
            return self.lines(value.value, indent, head + ("" if bare else "("),
                              ("" if bare else ")") + f".{value.attr}{tail}")
        if isinstance(value, ast.Subscript):
            bare = _precedence(value.value) == ATOM
            first = self.lines(value.value, indent, head + ("" if bare else "("),
                               ("" if bare else ")") + "[")
            if isinstance(value.slice, ast.Tuple):  # x[a, b]: each index with its comma
                inside = [piece for item in value.slice.elts
                          for piece in self.lines(item, inner, "", ",")]
            else:
                inside = self.lines(value.slice, inner, "", "")
            return [*first, *inside, f"{indent}]{tail}"]
        if isinstance(value, ast.UnaryOp):
            before, operand, after = _operand(
                _UNARY[type(value.op)], value.operand, value, False)
            return self.lines(operand, indent, head + before, after + tail)
        return [one]

    def ends_in_brackets(self, operand: tuple) -> bool:
        """Whether a chain's last operand ends in brackets black breaks inside:
        its own parentheses, or a call's or a literal's (not a subscript's),
        through any operators before them."""
        before, node, after = operand
        if after:
            return True
        while isinstance(node, (ast.BinOp, ast.UnaryOp)):
            last = _chain(node)[-1] if isinstance(node, ast.BinOp) else \
                _operand("", node.operand, node, False)
            if last[2]:
                return True
            node = last[1]
        return isinstance(node, (ast.Call, ast.List, ast.Dict, ast.Set)) \
            and self.items(node) is not None

    def body(self, value: ast.expr, indent: str) -> list[str]:
        """What stands inside brackets: one line where it fits, else an
        operand a line (its operators leading), as black writes a body."""
        one = f"{indent}{self(value)}"
        chain = _chain(value)
        if len(one) <= LINE_LIMIT or chain is None:
            return self.lines(value, indent, "", "")
        return [piece for before, operand, after in chain
                for piece in self.lines(operand, indent, before, after)]

    def items(self, value: ast.expr) -> tuple[str, list, str] | None:
        """The bracket, the items (each with the text before it) and the closing
        bracket of a literal or a call with arguments; None for anything else."""
        if isinstance(value, ast.Dict):
            return "{", [(f"{self(key)}: " if key is not None else "**", item)
                         for key, item in zip(value.keys, value.values)], "}"
        if isinstance(value, ast.Call) and (value.args or value.keywords):
            items = [("", arg) for arg in value.args] + [
                (f"{keyword.arg}=" if keyword.arg else "**", keyword.value)
                for keyword in value.keywords]
            return self(value.func) + "(", items, ")"
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and value.elts:
            opening, closing = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}"}[type(value)]
            return opening, [("", element) for element in value.elts], closing
        return None


ATOM = 20  # the precedence of a name, a call, a subscript: never parenthesised
_PRECEDENCE = {ast.Or: 1, ast.And: 2, ast.BitOr: 5, ast.BitXor: 6, ast.BitAnd: 7,
               ast.LShift: 8, ast.RShift: 8, ast.Add: 9, ast.Sub: 9, ast.Mult: 10,
               ast.Div: 10, ast.FloorDiv: 10, ast.Mod: 10, ast.MatMult: 10, ast.Pow: 12}
_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not "}
_SYMBOL = {ast.Or: "or", ast.And: "and", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
           ast.LShift: "<<", ast.RShift: ">>", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
           ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.Pow: "**",
           ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
           ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def _precedence(node: ast.expr) -> int:
    if isinstance(node, (ast.BinOp, ast.BoolOp)):
        return _PRECEDENCE[type(node.op)]
    if isinstance(node, ast.Compare):
        return 4
    if isinstance(node, ast.UnaryOp):
        return 3 if isinstance(node.op, ast.Not) else 11
    if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Starred)):
        return 0
    return ATOM


def _chain(value: ast.expr) -> list[tuple[str, ast.expr, str]] | None:
    """An operator chain's operands, each with the text before and after it
    (`a * b / c` as a, * b, / c; `a / (b * c)` as a, / (b * c)); None for
    anything else."""
    if isinstance(value, ast.BoolOp):
        symbol = _SYMBOL[type(value.op)]
        return [_operand("" if i == 0 else symbol + " ", operand, value, i > 0)
                for i, operand in enumerate(value.values)]
    if isinstance(value, ast.Compare):
        return [_operand("", value.left, value, False)] + [
            _operand(_SYMBOL[type(op)] + " ", right, value, True)
            for op, right in zip(value.ops, value.comparators)]
    if isinstance(value, ast.IfExp):
        return [_operand("", value.body, value, True), _operand("if ", value.test, value, True),
                _operand("else ", value.orelse, value, False)]
    if not isinstance(value, ast.BinOp):
        return None
    if isinstance(value.op, ast.Pow):  # right-associative: one step
        return [_operand("", value.left, value, True), _operand("** ", value.right, value, False)]
    operands, at = [], value
    while isinstance(at, ast.BinOp) and _precedence(at) == _precedence(value):
        operands.append(_operand(_SYMBOL[type(at.op)] + " ", at.right, at, True))
        at = at.left
    return [_operand("", at, value, False), *operands[::-1]]


def _operand(before: str, operand: ast.expr, parent: ast.expr, right: bool) -> tuple:
    """An operand of `parent` with the text around it: in parentheses where
    it binds no tighter than `parent` on that side."""
    mine, theirs = _precedence(operand), _precedence(parent)
    if mine < theirs or (mine == theirs and (right or isinstance(parent, (ast.Compare,
                                                                          ast.BoolOp)))):
        return before + "(", operand, ")"
    return before, operand, ""


def _pieces(text: str, width: int) -> list[str]:
    """`text` as string literals of at most `width` columns, cut after spaces."""
    words = re.findall(r"\S+\s*|\s+", text)
    pieces = [""]
    for word in words:
        if pieces[-1] and len(quoted(pieces[-1] + word)) > width:
            pieces.append("")
        pieces[-1] += word
    return [quoted(piece) for piece in pieces]


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
