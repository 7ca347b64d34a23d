"""Python's operators, once: the function each one calls, its symbol, the
syntax node that spells it (gast and ast share the names) and its dunder
methods. The interpreter reads the nodes, Traced answers the dunders, codegen
writes the nodes back, messages show the symbols."""

from __future__ import annotations

import operator
from typing import NamedTuple


class Operator(NamedTuple):
    fn: object  # operator.add
    symbol: str  # "+"
    node: str  # "Add": gast.Add when read, ast.Add when written
    kind: str  # "binary", "compare" or "unary"


OPERATORS = (
    Operator(operator.add, "+", "Add", "binary"),
    Operator(operator.sub, "-", "Sub", "binary"),
    Operator(operator.mul, "*", "Mult", "binary"),
    Operator(operator.truediv, "/", "Div", "binary"),
    Operator(operator.floordiv, "//", "FloorDiv", "binary"),
    Operator(operator.mod, "%", "Mod", "binary"),
    Operator(operator.pow, "**", "Pow", "binary"),
    Operator(operator.matmul, "@", "MatMult", "binary"),
    Operator(operator.and_, "&", "BitAnd", "binary"),
    Operator(operator.or_, "|", "BitOr", "binary"),
    Operator(operator.xor, "^", "BitXor", "binary"),
    Operator(operator.lshift, "<<", "LShift", "binary"),
    Operator(operator.rshift, ">>", "RShift", "binary"),
    Operator(operator.eq, "==", "Eq", "compare"),
    Operator(operator.ne, "!=", "NotEq", "compare"),
    Operator(operator.lt, "<", "Lt", "compare"),
    Operator(operator.le, "<=", "LtE", "compare"),
    Operator(operator.gt, ">", "Gt", "compare"),
    Operator(operator.ge, ">=", "GtE", "compare"),
    Operator(operator.neg, "-", "USub", "unary"),
    Operator(operator.pos, "+", "UAdd", "unary"),
    Operator(operator.invert, "~", "Invert", "unary"),
)


def of_kind(kind: str) -> tuple[Operator, ...]:
    return tuple(each for each in OPERATORS if each.kind == kind)


def by_node(module, kind: str) -> dict:
    """{module.Add: operator.add, ...}: how the interpreter reads syntax."""
    return {getattr(module, each.node): each.fn for each in of_kind(kind)}


def to_node(module, kind: str) -> dict:
    """{operator.add: module.Add, ...}: how codegen writes an op back."""
    return {each.fn: getattr(module, each.node) for each in of_kind(kind)}


SYMBOLS = {each.fn: each.symbol for each in OPERATORS}


def dunder(fn) -> str:
    """`add` for operator.add (its dunders: __add__, __radd__, __iadd__)."""
    return fn.__name__.strip("_")
