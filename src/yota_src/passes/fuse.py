"""Chains of elementwise operations on large arrays, fused by NumExpr.

`1 / (1 + np.exp(-x))` on a million elements makes four passes over memory
and four new arrays in NumPy; NumExpr evaluates it in one pass, blockwise in
cache, on all cores (core/fused.py). This pass finds such chains in
`ys.grad`'s code, where the optional `numexpr` is installed, and writes each
as one `numexpr.evaluate`: measured in benchmarks/bench_workloads.py.
`simplegrad`'s code, which people read and save, stays plain NumPy.

A chain is a tree of elementwise float64 operations NumExpr has (arithmetic,
`exp`, `log`, `tanh`, ...): an operation joins the expression of the one
operation that reads it, or, where it is one cheap step from a value kept
anyway (`1 + t` read twice), is recomputed in each of its readers rather
than stored. Values read elsewhere (a sum, a product, the output) stay
arrays. Trees of two operations or more on arrays of `MIN_ELEMENTS` or more
(the example's sizes) are fused; the overhead of a call to NumExpr (some
microseconds) is more than fusing saves on smaller ones.

Whether it pays at all depends on the machine: NumPy's loops use the CPU's
vector instructions (its `exp` is several times NumExpr's own), NumExpr
has threads and fewer passes. On the 2-core machine the benchmarks run on,
NumExpr's `1 / (1 + x) * x` takes 2.5 ms per 10^6 elements on one thread
where NumPy's three operations take 0.9 ms, and fusing made ys.grad of
`sum(1 / (1 + exp(-x)))` 1.8x slower. So the first fusion in a process
measures a chain both ways (`pays`, some milliseconds) and fuses only where
NumExpr is the faster; `YOTA_SRC_FUSE=1` (or `0`) says so instead.

NumExpr's `exp`, `log` and the like are its own (or Intel VML's), and may
differ from NumPy's in the last bit, as may the order its powers multiply
in: fused code is right to rounding, not bit-equal to the plain code
(tests/passes/test_fuse.py checks it against finite differences).
"""

from __future__ import annotations

import ast
import importlib.util
import math
import operator
import os
import timeit

import numpy as np

from yota_src.core.fused import Fused
from yota_src.ir.tape import Call, Op, Tape, iter_refs, readers
from yota_src.passes.rewrite import rewrite

MIN_ELEMENTS = 1 << 16
AVAILABLE = importlib.util.find_spec("numexpr") is not None
_MEASURED: list[bool] = []  # whether fusing pays on this machine, once measured

_BINARY = {operator.add: ast.Add, np.add: ast.Add, operator.sub: ast.Sub,
           np.subtract: ast.Sub, operator.mul: ast.Mult, np.multiply: ast.Mult,
           operator.truediv: ast.Div, np.divide: ast.Div, operator.pow: ast.Pow,
           np.power: ast.Pow}
_UNARY = {operator.neg: ast.USub, np.negative: ast.USub, operator.pos: ast.UAdd,
          np.positive: ast.UAdd}
_FUNCTIONS = {np.exp: "exp", np.log: "log", np.log1p: "log1p", np.expm1: "expm1",
              np.log10: "log10", np.sqrt: "sqrt", np.sin: "sin", np.cos: "cos", np.tan: "tan",
              np.arcsin: "arcsin", np.arccos: "arccos", np.arctan: "arctan",
              np.sinh: "sinh", np.cosh: "cosh", np.tanh: "tanh", np.absolute: "abs",
              np.arctan2: "arctan2"}  # (NumExpr's names are NumPy's)
_CHEAP = (operator.add, np.add, operator.sub, np.subtract, operator.mul, np.multiply,
          operator.neg, np.negative, operator.pos, np.positive)
_FLOAT64 = np.dtype(np.float64)
_POWERS = (2, 3, 4)  # the exponents NumExpr multiplies out, as NumPy's `x ** 2` does


def fuse_elementwise(tape: Tape) -> Tape:
    if not AVAILABLE:
        return tape
    fusible = {op for op in tape.ops if _elementwise(op)}
    if not any(_large(op) for op in fusible) or not pays():
        return tape
    users = readers(tape.ops, tape.output)
    returned = set(iter_refs(tape.output))

    def joins(op: Op) -> bool:
        """`op` is written into the expressions of its readers."""
        if op not in fusible or op in returned:
            return False
        reading = set(users.get(op, ()))
        if not reading or not reading <= fusible:
            return False
        return len(reading) == 1 and len(users[op]) == 1 or _cheap(op)

    joined = {op for op in fusible if joins(op)}
    fused: dict[Op, tuple[str, list]] = {}  # a root -> its text and operands
    for op in tape.ops:
        if op in fusible and op not in joined and _large(op):
            leaves: list = []
            text, count = _text(op, joined, leaves)
            if count >= 2:
                fused[op] = text, leaves
    if not fused:
        return tape
    kept: dict[Op, Op] = {}  # what each op became: operands are read through it

    def visit(op: Op, forward: bool, original: Op) -> Op:
        if original in fused:
            text, leaves = fused[original]
            op = Call(Fused(text), tuple(kept.get(leaf, leaf) for leaf in leaves), {},
                      op.shape, op.dtype, op.loc, op.depends)
            op.dims = original.dims
        kept[original] = op
        return op

    return rewrite(tape, visit)


def _elementwise(op: Op) -> bool:
    """An operation NumExpr has, on float64 values and finite numbers, giving float64."""
    if not isinstance(op, Call) or op.kwargs or op.dtype != _FLOAT64 or op.shape is None:
        return False
    if op.fn in _BINARY or op.fn is np.arctan2:
        arity = 2
    elif op.fn in _UNARY or op.fn in _FUNCTIONS:
        arity = 1
    else:
        return False
    if len(op.args) != arity or not all(
            arg.dtype == _FLOAT64 if isinstance(arg, Op) else _number(arg) for arg in op.args):
        return False
    if op.fn in (operator.pow, np.power):  # NumExpr's `x ** 0.5` is sqrt (-0.0 at -0.0)
        return not isinstance(op.args[1], Op) and op.args[1] in _POWERS
    # NumExpr folds `x / c` into `x * (1 / c)`: inf for a tiny c, an error for 0
    return op.fn not in (operator.truediv, np.divide) or isinstance(op.args[1], Op)


def _number(value) -> bool:
    return type(value) in (int, float, np.float64) and math.isfinite(value)


def _cheap(op: Call) -> bool:
    """One addition, subtraction, multiplication or sign change, with one
    array operand at most: cheaper to do again than to store and read."""
    return op.fn in _CHEAP and sum(isinstance(arg, Op) and bool(arg.shape)
                                   for arg in op.args) <= 1


def _large(op: Op) -> bool:
    return all(type(n) is int for n in op.shape) and math.prod(op.shape) >= MIN_ELEMENTS


def _text(op, joined: set, leaves: list) -> tuple[str, int]:
    """`op`'s expression, the operands not joined into it written `{0}`,
    `{1}`, ... and listed in `leaves` (each once), and the count of
    operations it holds."""
    tree, count = _tree(op, joined, leaves, root=True)
    return ast.unparse(tree), count


def _tree(op, joined: set, leaves: list, root: bool = False) -> tuple[ast.expr, int]:
    if not isinstance(op, Op):
        return ast.Constant(float(op)), 0
    if not root and op not in joined:
        if op not in leaves:
            leaves.append(op)
        return ast.Name(f"{{{leaves.index(op)}}}"), 0  # unparsed as it is: `{0}`
    parts = [_tree(arg, joined, leaves) for arg in op.args]
    count = 1 + sum(each for _, each in parts)
    trees = [tree for tree, _ in parts]
    if op.fn in _BINARY:
        return ast.BinOp(trees[0], _BINARY[op.fn](), trees[1]), count
    if op.fn in _UNARY:
        return ast.UnaryOp(_UNARY[op.fn](), trees[0]), count
    return ast.Call(ast.Name(_FUNCTIONS[op.fn]), trees, []), count


def pays() -> bool:
    """Whether NumExpr evaluates a chain faster than NumPy's operations one
    by one (into arrays made once, as work arrays are) on this machine:
    `YOTA_SRC_FUSE` where set, else measured once per process, best of five
    on 2^18 elements, and true where NumExpr takes under 0.8 of the time."""
    setting = os.environ.get("YOTA_SRC_FUSE")
    if setting in ("0", "1"):
        return setting == "1"
    if not _MEASURED:
        import numexpr

        x = np.linspace(-3.0, 3.0, 1 << 18)
        a, b = np.empty_like(x), np.empty_like(x)

        def plain():
            np.negative(x, out=a)
            np.exp(a, out=a)
            np.add(1.0, a, out=a)
            np.divide(1.0, a, out=a)
            np.multiply(a, x, out=b)

        def fused():
            numexpr.evaluate("1.0 / (1.0 + exp(-x)) * x", {"x": x}, out=b)

        times = [min(timeit.repeat(each, number=1, repeat=5)) for each in (plain, fused)]
        _MEASURED.append(times[1] < 0.8 * times[0])
    return _MEASURED[0]
