"""Dimensions read at run time (ir/dims.py), as the module writes them.

Each size the code reads from its arguments gets a name (N, M, K, ...),
bound where an argument's check first reads it, as a person writes
`N, M = W.shape`; a Dim is spelled as an expression of those names (`3 * N`,
`N - 1`), a mask's count as the size of the first value it sizes. What the
code relies on is checked before the body runs: each array's rank, the sizes
it keeps and the sizes it shares with an earlier argument (in its one-line
check: `b.shape != (N,)`, SignatureMismatch), then the other decisions taken
from sizes (`N > 4`: ControlFlowChanged).
"""

from __future__ import annotations

import ast

from yota_src.codegen.spelling import CodegenError
from yota_src.ir.dims import Count, Dim, DimFacts, Symbol, comparison_text

_LETTERS = ("N", "M", "K", "L", "P", "Q", "R", "S", "U", "V")


class Dimensions:
    """Names and spellings of one module's run-time sizes."""

    def __init__(self, facts: DimFacts | None, path, names, arguments: int, ops=()):
        self.facts = facts
        self.arguments = arguments  # how many positional arguments the function takes
        self.counts: dict[Count, tuple] = {}  # a mask's count -> (the op it sizes, axis)
        for op in ops if facts is not None else ():
            for axis, size in enumerate(op.dims or ()):
                terms = facts.terms(size) if isinstance(size, Dim) else {}
                if len(terms) == 1 and list(terms.values()) == [1]:
                    (monomial,) = terms
                    if len(monomial) == 1 and isinstance(monomial[0], Count):
                        self.counts.setdefault(monomial[0], (op, axis))
        self.path = path  # (index, path) -> the expression that reaches the leaf
        self.names = names
        self.ref = names.ref  # an op as the code reads it
        self.named: dict[Symbol, str] = {}  # in order of first use
        self.used: set[Symbol] = set()  # read by the code (the others only described)
        self.bound: set[Symbol] = set()  # read by an argument check already

    @property
    def active(self) -> bool:
        return self.facts is not None and bool(self.facts.free())

    def axis(self, index: int, path: tuple, axis: int):
        """An argument's size as the code sees it: a free Symbol (its class's
        representative) or the int it is fixed at (None: not a size)."""
        if self.facts is None:
            return None
        symbol = Symbol(index, path, axis)
        if symbol not in self.facts.values:
            return None
        return self.facts.find(symbol)

    def name(self, symbol: Symbol) -> str:
        """The user's name for the size (`T, N, D = xs.shape`), where it is
        free; else the next letter no parameter or name has."""
        if symbol not in self.named:
            given = [self.facts.names[s] for s in self.facts.members(symbol)
                     if s in self.facts.names]
            chosen = next((name for name in given if name not in self.names.taken
                           and name not in self.named.values()), None)
            if chosen is None:  # a letter the user's code does not give another size
                users = set(self.facts.names.values())
                chosen = next((letter for letter in _LETTERS if letter not in self.names.taken
                               and letter not in users), f"N{len(self.named)}")
            self.named[symbol] = self.names.fresh(chosen)
        return self.named[symbol]

    def spell(self, value) -> ast.expr:
        """A Dim as an expression of the named sizes: `3 * n + 1`."""
        terms = self.facts.terms(value) if isinstance(value, Dim) else \
            ({(): int(value)} if value else {})
        if not terms:
            return ast.Constant(0)
        pieces = []
        for monomial, coefficient in sorted(terms.items(), key=lambda item: -len(item[0])):
            self.used.update(symbol for symbol in monomial if isinstance(symbol, Symbol))
            factors = [self._count(symbol) if isinstance(symbol, Count) else
                       ast.Name(self.name(symbol)) for symbol in monomial]
            if not factors:
                pieces.append((coefficient, ast.Constant(abs(coefficient))))
                continue
            product = factors[0]
            for factor in factors[1:]:
                product = ast.BinOp(product, ast.Mult(), factor)
            if abs(coefficient) != 1:
                product = ast.BinOp(ast.Constant(abs(coefficient)), ast.Mult(), product)
            pieces.append((coefficient, product))
        sign, expression = pieces[0]
        expression = ast.UnaryOp(ast.USub(), expression) if sign < 0 else expression
        for sign, piece in pieces[1:]:
            expression = ast.BinOp(expression, ast.Sub() if sign < 0 else ast.Add(), piece)
        return expression

    def _count(self, symbol: Count) -> ast.expr:
        """A mask's count, read off the first value it sizes: `pos.shape[0]`."""
        if symbol not in self.counts:
            raise CodegenError("a mask's count that no value of the code has")
        op, axis = self.counts[symbol]
        return ast.Subscript(ast.Attribute(self.ref(op), "shape"), ast.Constant(axis))

    def name_in_order(self, leaves) -> None:
        """Name the free sizes in the order the arguments' leaves hold them
        (`leaves`: (index, path, shape) each), before the body names any."""
        if self.facts is None:
            return
        for index, path, shape in leaves:
            for axis in range(len(shape)):
                found = self.axis(index, path, axis)
                if isinstance(found, Symbol):
                    self.name(found)

    def shape_text(self, index: int, path: tuple, shape: tuple, fields: bool = False) -> str:
        """`(8, N)`: a leaf's shape, its run-time sizes by name; `fields`: those
        read before as an f-string's fields, `({M}, L)`, for a check's message."""
        sizes = []
        for axis, n in enumerate(shape):
            found = self.axis(index, path, axis)
            sizes.append(str(n) if not isinstance(found, Symbol) else
                         f"{{{self.name(found)}}}" if fields and found in self.bound
                         else self.name(found))
        return _tuple_text(sizes)

    def leaf(self, code: str, index: int, path: tuple, shape: tuple,
             needed: set) -> tuple[str, list[str]] | None:
        """(the shape test, the lines binding sizes first read here) for an
        array leaf with sizes read at run time, or None where it has none.
        A size read before is compared with its name (`x.shape[0] != M`, or
        `b.shape != (N,)`), a fixed one with its value; a size first read
        here is bound after the test where `needed`: `N, M = W.shape`."""
        found = [self.axis(index, path, axis) for axis in range(len(shape))]
        if not any(isinstance(f, Symbol) for f in found):
            return None
        expected, new, tests, twice = [], {}, [], []
        for axis, (size, n) in enumerate(zip(found, shape)):
            if not isinstance(size, Symbol):
                expected.append(str(n))
                tests.append(f"{code}.shape[{axis}] != {n}")
            elif size in self.bound:
                expected.append(self.name(size))
                tests.append(f"{code}.shape[{axis}] != {self.name(size)}")
            elif size in new:  # twice in this leaf, `(N, N)`: checked whatever the form
                expected.append(None)
                twice.append(f"{code}.shape[{axis}] != {code}.shape[{new[size]}]")
            else:
                new[size] = axis
                expected.append(None)
        fresh = [axis for axis, e in enumerate(expected) if e is None]
        known = [e for e in expected if e is not None]
        spelled = _tuple_text(known)
        if not fresh:
            test = f"{code}.shape != {spelled}"
        elif not known:
            test = f"{code}.ndim != {len(shape)}"
        elif fresh == list(range(len(fresh))):  # `W.shape[1:] != (N,)`: the rank too
            test = f"{code}.shape[{len(fresh)}:] != {spelled}"
        elif fresh == list(range(len(shape) - len(fresh), len(shape))):
            test = f"{code}.shape[:-{len(fresh)}] != {spelled}"  # the rank too
        else:
            test = " or ".join([f"{code}.ndim != {len(shape)}", *tests])
        test = " or ".join([test, *twice])
        self.bound.update(new)
        wanted = [(axis, size) for size, axis in new.items() if size in needed]
        for _, size in wanted:
            self.used.add(size)
        if not wanted:
            return test, []
        if [axis for axis, _ in wanted] == list(range(len(shape))):
            names = ", ".join(self.name(size) for _, size in wanted)
            target = f"({names},)" if len(wanted) == 1 else names  # as formatters write it
            return test, [f"{target} = {code}.shape"]
        return test, [f"{self.name(size)} = {code}.shape[{axis}]" for axis, size in wanted]

    def require_bound(self) -> None:
        """Every size the code reads is bound by an argument's check; one held
        only by an argument the function does not take (a transform's wrapper
        drops one) or by rows read at run time cannot be: refused, so the
        module is made for the example's sizes."""
        if self.used - self.bound:
            raise CodegenError("a size read by the code that no argument's check binds")

    def needed(self, leaves) -> set:
        """The sizes the code reads: in the body and decisions, or to check a
        later leaf against (the same size held by a second leaf)."""
        seen, needed = set(), set(self.used)
        for index, path, shape in leaves:
            for axis in range(len(shape)):
                found = self.axis(index, path, axis)
                if isinstance(found, Symbol):
                    if found in seen:
                        needed.add(found)
                    seen.add(found)
        return needed

    def decisions(self) -> list[tuple[str, str]]:
        """(the test that fails, the fact) for each decision taken from sizes."""
        found = []
        for decision in self.facts.decisions:
            difference = self.facts.terms(decision.left - decision.right) \
                if isinstance(decision.left, Dim) else self.facts.terms(decision.right)
            if all(not key for key in difference):
                continue  # its sizes were fixed since: decided by the arithmetic
            left, right = self.spell(decision.left), self.spell(decision.right)
            text = f"{ast.unparse(left)} {comparison_text(decision.op)} {ast.unparse(right)}"
            held = text if decision.truth else f"not {text}"
            test = f"not ({text})" if decision.truth else text
            where = f" ({decision.where.short})" if decision.where is not None else ""
            found.append((test, f"`{held}`{where}"))
        return found


def _tuple_text(items: list) -> str:
    """`(a, b)`, `(a,)`: a tuple's text from its items' texts."""
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"
