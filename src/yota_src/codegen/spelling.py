"""Spelling: values and ops as NumPy expressions.

Every value that reaches the text goes through one speller, `literal`: a
value of the tape by its name, a static one as the literal that makes it
again (`np.float32(0.5)`, `np.dtype('>f8')`, `np.array([...])`), a function
or module by the name an import gives it. What cannot be spelled is refused
when the code is generated (`CodegenError`), never written wrong. Statements
are built as `ast` nodes and printed with `ast.unparse`.
"""

from __future__ import annotations

import ast
import enum
import functools
import logging
import math
import operator
import sys
import types
import warnings

import numpy as np

from yota_src.codegen.names import Names
from yota_src.core import operators, primitives
from yota_src.core.fused import Fused
from yota_src.core.values import ATTR, describe_value, is_attribute_name, path_expression
from yota_src.errors import UnsupportedSyntaxError
from yota_src.ir.dims import Count, Dim
from yota_src.ir.signature import Signature
from yota_src.ir.tape import Call, Const, Op
from yota_src.tracing import array_library

_BINARY = operators.to_node(ast, "binary")
# names an expression of NumExpr reads as its own, beside its functions
_NUMEXPR_NAMES = {"True", "False", "None", "inf", "nan", "e", "pi", "and", "or", "not", "in",
                  "is", "if", "else", "lambda"}
_COMPARE = {**operators.to_node(ast, "compare"), operator.is_: ast.Is}
_UNARY = operators.to_node(ast, "unary")
# NumPy functions written as the array's method where the first argument is an
# array: `np.sum(x)` dispatches through a Python wrapper and costs twice
# `x.sum()` on a small array. Each method takes the function's positional
# arguments in the same order; keywords beyond these are spelled differently.
_METHOD_SPELLINGS = {
    np.sum: "sum", np.prod: "prod", np.mean: "mean", np.max: "max", np.amax: "max",
    np.min: "min", np.amin: "min", np.any: "any", np.all: "all", np.argmax: "argmax",
    np.argmin: "argmin", np.std: "std", np.var: "var", np.cumsum: "cumsum",
    np.cumprod: "cumprod", np.reshape: "reshape", np.transpose: "transpose",
    np.squeeze: "squeeze", np.ravel: "ravel", np.clip: "clip"}
_METHOD_KEYWORDS = {"axis", "dtype", "out", "keepdims", "initial", "where", "ddof", "order"}


# How many of each function's arguments after the array its method takes by
# position, in the same places: `x.reshape(shape)` but not `x.reshape(shape,
# "C")` (the method's `order` is keyword-only). As NumPy 2's signatures say
# (tests/codegen/test_spelling.py reads them where NumPy has them).
_METHOD_POSITIONAL = {
    np.sum: 3, np.prod: 3, np.mean: 3, np.max: 2, np.amax: 2, np.min: 2, np.amin: 2,
    np.any: 3, np.all: 3, np.argmax: 2, np.argmin: 2, np.std: 4, np.var: 4, np.cumsum: 3,
    np.cumprod: 3, np.reshape: 1, np.transpose: 1, np.squeeze: 1, np.ravel: 1, np.clip: 3}


def _method_positional(fn) -> int:
    return _METHOD_POSITIONAL.get(fn, 0)


class CodegenError(UnsupportedSyntaxError):
    """A value the generated code has no way to spell; raised at the line of
    the op that needs it."""


def _is_array(value) -> bool:
    """An op that is an array when the code runs, not a number, list or tuple."""
    if not isinstance(value, Op) or not value.shape:  # () may be a float; None a tuple
        return False
    if isinstance(value, Const):
        return isinstance(value.value, np.ndarray)
    return not (isinstance(value, Call) and value.fn in primitives.METHODS)


def _float_scalar(value) -> bool:
    """A float that may be a Python or NumPy scalar when the code runs."""
    if isinstance(value, (float, np.floating)):
        return True
    return isinstance(value, Op) and value.shape == () and value.dtype is not None \
        and np.issubdtype(value.dtype, np.inexact)


# NumPy functions whose first parameter is a number, not an array-like.
_NUMBER_FIRST = frozenset({np.arange, np.linspace, np.logspace, np.geomspace, np.full,
                           np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri,
                           np.array, np.asarray, np.asanyarray, np.ascontiguousarray})


def _array_first(fn) -> bool:
    """A NumPy routine (not a ufunc) whose first parameter is an array-like,
    which NumPy makes an array of and CuPy requires to be one already."""
    path = primitives.function_path(fn)
    return path is not None and path.startswith("np.") and not isinstance(fn, np.ufunc) \
        and path.count(".") == 1 + path.startswith(("np.linalg.", "np.fft.")) \
        and fn not in _NUMBER_FIRST


class Speller:
    """Spells values and ops for the module's function, importing what the
    spelling needs: modules, and dtypes made once for the guards."""

    def __init__(self, signature: Signature, params: list[str], names: Names):
        self.sig, self.params, self.names = signature, params, names
        self.imports = {"import numpy as np"}
        self.modules: dict[str, str] = {}  # imported module -> the name code uses for it
        self.import_roots = {"math"}
        self.guard_dtypes: dict[str, str] = {}  # a dtype's spelling -> the module's name for it
        self.dims = None  # dimensions.Dimensions: run-time sizes, set by the module writer

    def literal(self, value) -> ast.expr:
        """A static value (or a structure holding ops) as an expression."""
        if isinstance(value, Op):
            return self.names.ref(value)
        if isinstance(value, Dim):
            return self.dims.spell(value)
        if value is None or value is Ellipsis or isinstance(value, bool):
            return ast.Constant(value)
        if isinstance(value, str):  # a subclass (a str Enum) as the plain string
            return ast.Constant(str.__str__(value))
        if isinstance(value, bytes):
            return ast.Constant(bytes(value))
        if isinstance(value, (complex, np.complexfloating)):
            return self._complex(value)
        if isinstance(value, np.bool_):
            return ast.Constant(bool(value))
        if isinstance(value, (int, np.integer)):
            return ast.Constant(int(value))
        if isinstance(value, (float, np.floating)):
            return self._float(value)
        if isinstance(value, tuple):  # a namedtuple handed to a NumPy function: its items
            return ast.Tuple([self.literal(item) for item in value])
        if isinstance(value, list):
            return ast.List([self.literal(item) for item in value])
        if isinstance(value, (set, frozenset)):
            items = sorted((self.literal(item) for item in value), key=ast.unparse)
            if isinstance(value, frozenset):
                return ast.Call(ast.Name("frozenset"), [ast.Set(items)] if items else [], [])
            return ast.Set(items) if items else ast.Call(ast.Name("set"), [], [])
        if isinstance(value, dict):
            return ast.Dict([self.literal(key) for key in value],
                            [self.literal(item) for item in value.values()])
        if isinstance(value, (slice, range)):
            return ast.Call(ast.Name(type(value).__name__), [self.literal(p) for p in
                                                             (value.start, value.stop, value.step)],
                            [])
        if isinstance(value, np.dtype):
            return parse_expression(self._dtype(value))
        if isinstance(value, primitives.StandardStream):
            return parse_expression(f"{self.imported('sys')}.{value.name}")
        if isinstance(value, type) and issubclass(value, np.generic):
            return parse_expression(_scalar_type(value))
        if isinstance(value, np.ndarray):
            return self._array(value)
        if isinstance(value, enum.Enum):
            return self._member(value)
        if callable(value):
            return self.function(value)
        if isinstance(value, types.ModuleType):
            return self._module(value)
        raise CodegenError(f"generated code cannot spell the value {value!r}")

    def _member(self, value: enum.Enum) -> ast.expr:
        """`model.Kind.A`: an Enum member, from the module its class is defined in."""
        kind = type(value)
        if not reachable(kind, kind.__module__, kind.__qualname__) \
                or getattr(kind, value.name, None) is not value:
            raise CodegenError(f"generated code cannot import {kind.__qualname__} to spell "
                               f"{value!r}")
        where = self.imported(kind.__module__)
        return ast.Attribute(parse_expression(f"{where}.{kind.__qualname__}"), value.name)

    def expression(self, op: Op) -> ast.expr:
        """What an op computes, as an expression: an operator, an index, an
        attribute, an f-string, a method or a call."""
        if isinstance(op, Const):
            return self.literal(op.value)
        fn, args, kwargs = op.fn, op.args, op.kwargs
        if fn is operator.truediv and len(args) == 2 and not kwargs \
                and not isinstance(args[0], Op) and _a_count(args[1]):
            # a number over a mask's count (`1.0 / t2.shape[0]`), which the data may make
            # 0: NumPy's division gives inf or nan there, as the primal's NumPy code does
            return self.call(np.divide, args, {})
        if fn in _BINARY and len(args) == 2 and not kwargs:
            return ast.BinOp(self.literal(args[0]), _BINARY[fn](), self.literal(args[1]))
        if fn in _COMPARE and len(args) == 2 and not kwargs:
            return ast.Compare(self.literal(args[0]), [_COMPARE[fn]()], [self.literal(args[1])])
        if fn is operator.contains and len(args) == 2 and not kwargs:  # `item in container`
            return ast.Compare(self.literal(args[1]), [ast.In()], [self.literal(args[0])])
        if fn in _UNARY and len(args) == 1:
            return ast.UnaryOp(_UNARY[fn](), self.literal(args[0]))
        if fn is operator.getitem:
            return ast.Subscript(self.literal(args[0]), self.index(args[1]))
        if fn is primitives.T:
            return ast.Attribute(self.literal(args[0]), "T")
        if fn is primitives.fstring:
            return self.fstring(args)
        if fn is primitives.dimension:
            return self.literal(args[0])
        if isinstance(fn, Fused):
            return self.fused(op)
        if getattr(fn, "__objclass__", None) is str and args:  # '{:.3f}'.format(x), s.upper()
            return ast.Call(ast.Attribute(self.literal(args[0]), fn.__name__),
                            [self.literal(a) for a in args[1:]], self.keywords(kwargs))
        return self.call(fn, args, kwargs)

    def call(self, fn, args, kwargs) -> ast.expr:
        """`fn(args)`, or `args[0].method(rest)` for the pseudo-primitives that
        stand for a method."""
        if fn in primitives.METHODS:
            return ast.Call(ast.Attribute(self.literal(args[0]), primitives.METHODS[fn]),
                            [self.literal(a) for a in args[1:]], self.keywords(kwargs))
        if fn in _METHOD_SPELLINGS and args and _is_array(args[0]) \
                and _METHOD_KEYWORDS.issuperset(kwargs) \
                and len(args) - 1 <= _method_positional(fn):
            return ast.Call(ast.Attribute(self.literal(args[0]), _METHOD_SPELLINGS[fn]),
                            [self.literal(a) for a in args[1:]], self.keywords(kwargs))
        if fn is primitives.draw:  # rng.normal(size=3)
            return ast.Call(ast.Attribute(self.literal(args[0]), args[1]),
                            [self.literal(a) for a in args[2:]], self.keywords(kwargs))
        arguments = [self.literal(a) for a in args]
        if args and self.sig.library == array_library.CUPY and _float_scalar(args[0]) \
                and _array_first(fn):  # CuPy's routines take arrays only: cp.broadcast_to(1.0, s)
            arguments[0] = ast.Call(self.function(np.asarray), [arguments[0]], [])
        return ast.Call(self.function(fn), arguments, self.keywords(kwargs))

    def fused(self, op: Call) -> ast.expr:
        """`numexpr.evaluate("1 / (1 + exp(-x))", {"x": x})` (core/fused.py):
        an operand is called in the text by the name the code gives it, where
        it has one NumExpr does not read as a function or constant."""
        from numexpr.expressions import functions  # installed: the code calls it

        spelled = [self.literal(arg) for arg in op.args]
        keys: list[str] = []
        for index, each in enumerate(spelled):
            key = each.id if isinstance(each, ast.Name) else f"a{index}"
            while key in keys or key in _NUMEXPR_NAMES or key in functions:
                key = f"{key}_"
            keys.append(key)
        evaluate = parse_expression(f"{self.imported('numexpr')}.evaluate")
        text = ast.Constant(op.fn.text.format(*keys))
        table = ast.Dict([ast.Constant(key) for key in keys], spelled)
        return ast.Call(evaluate, [text, table], self.keywords(op.kwargs))

    def fstring(self, pieces) -> ast.expr:
        """The user's f-string, with the recorded values in its fields (a
        static string or number is written into the text). Where a field
        holds what no f-string can on every supported Python (a backslash,
        `#`), the same text as `"...{!r:>8}...".format(...)`."""
        values, fields = [], []
        for piece in pieces:
            if isinstance(piece, str) or _plain_static(piece[0]):
                values.append(ast.Constant(primitives.fstring(piece)))
                continue
            value, conversion, spec = piece
            fields.append((self.literal(value), conversion, spec))
            values.append(ast.FormattedValue(
                fields[-1][0], ord(conversion) if conversion else -1,
                ast.JoinedStr([ast.Constant(spec)]) if spec else None))
        joined = ast.JoinedStr(values)
        try:
            compile(ast.unparse(joined), "<f-string>", "eval")
            return joined
        except (SyntaxError, ValueError):
            pass
        template, arguments, field = [], [], iter(fields)
        for value in values:
            if isinstance(value, ast.Constant):
                template.append(value.value.replace("{", "{{").replace("}", "}}"))
                continue
            expr, conversion, spec = next(field)
            template.append("{" + (f"!{conversion}" if conversion else "")
                            + (":{}" if spec else "") + "}")
            arguments += [expr, ast.Constant(spec)] if spec else [expr]
        return ast.Call(ast.Attribute(ast.Constant("".join(template)), "format"), arguments, [])

    def keywords(self, kwargs: dict) -> list[ast.keyword]:
        """`key=value` arguments, each value spelled."""
        return [ast.keyword(key, self.literal(value)) for key, value in kwargs.items()]

    def index(self, index) -> ast.expr:
        """An index as written between brackets: `a:b`, `i, :`."""
        if isinstance(index, tuple):
            return ast.Tuple([self._index_item(item) for item in index])
        return self._index_item(index)

    def _index_item(self, item) -> ast.expr:
        if isinstance(item, slice):
            part = lambda p: None if p is None else self.literal(p)  # noqa: E731
            return ast.Slice(part(item.start), part(item.stop), part(item.step))
        return self.literal(item)

    def function(self, fn) -> ast.expr:
        """A function by the name code calls it by: NumPy's, `math`'s or
        SciPy's by its path (imported), a user's through its module."""
        path = primitives.function_path(fn)
        if path is None:
            path = self._user_function(fn)
        elif path.startswith("math."):
            self.imports.add("import math")
        elif path.startswith("scipy."):  # `scipy.stats.norm.logpdf`: import scipy.stats
            package, module, rest = path.split(".", 2)
            path = f"{self.imported(f'{package}.{module}')}.{rest}"
        return parse_expression(path)

    def _user_function(self, fn) -> str:
        """A user's function, reached through its module: only where importing
        that module and following the qualified name gives `fn` itself."""
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, logging.Logger):  # loggers are found by name
            name = "" if isinstance(owner, logging.RootLogger) else repr(owner.name)
            return f"{self.imported('logging')}.getLogger({name}).{fn.__name__}"
        if owner is not None and not isinstance(owner, type(sys)):
            home = sys.modules.get(type(owner).__module__)  # random.random: random._inst's
            if home is not None and getattr(home, fn.__name__, None) is fn:
                return f"{self.imported(home.__name__)}.{fn.__name__}"
            raise CodegenError(
                f"generated code cannot refer to the method {getattr(fn, '__name__', fn)}() of "
                f"a {type(owner).__name__} object: it has no name a module can import. Call a "
                "module-level function instead (e.g. np.random.normal), or pass what it "
                "computes in as an argument")
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", "")
        if module and module.startswith("_") and reachable(fn, module[1:], qualname):
            module = module[1:]  # `warnings.warn`, not the `_warnings` that implements it
        if not reachable(fn, module, qualname):
            raise CodegenError(f"generated code cannot refer to {describe_value(fn)}: define it "
                               "at the top level of an importable module")
        return f"{self.imported(module)}.{qualname}"

    def _module(self, module: types.ModuleType) -> ast.expr:
        """`np`, `math`, or another module by the name that imports it."""
        if module is np:
            return ast.Name("np")
        name = module.__name__
        if not reachable(module, name.split(".")[0], ".".join(name.split(".")[1:]) or None):
            raise CodegenError(f"generated code cannot import the module {name}")
        return parse_expression(self.imported(name))

    def imported(self, module: str) -> str:
        """The name code reads `module` by, imported: `import a.b` gives `a.b`;
        where `a` already names something else (a parameter, a value),
        `import a.b as a_b`."""
        if module not in self.modules:
            root = module.split(".")[0]
            if root in self.import_roots or root not in self.names.taken:
                self.imports.add(f"import {module}")
                self.import_roots.add(root)
                self.names.taken.add(root)
                self.modules[module] = module
            else:
                alias = self.names.fresh(module.replace(".", "_"))
                self.imports.add(f"import {module} as {alias}")
                self.modules[module] = alias
        return self.modules[module]

    def guard_type(self) -> str:
        """`ndarray`, bound once at module level: the guards' type test reads
        shorter, and as fast."""
        if "np.ndarray" not in self.guard_dtypes:
            self.guard_dtypes["np.ndarray"] = self.names.fresh("ndarray")
        return self.guard_dtypes["np.ndarray"]

    def guard_dtype(self, dtype) -> str:
        """A dtype made once at module level for guards to compare with:
        comparing with `np.float64`, a type, converts it on every call, which
        costs twice as much as the comparison."""
        spelled = self._dtype(dtype)
        if spelled not in self.guard_dtypes:
            base = spelled[3:] if "(" not in spelled else "dtype"
            self.guard_dtypes[spelled] = self.names.fresh(base)
        return self.guard_dtypes[spelled]

    def _dtype(self, dtype) -> str:
        """`np.float64` where the scalar type names the dtype exactly, else
        `np.dtype('>f8')` (byte order, string lengths, units, fields)."""
        dtype = np.dtype(dtype)
        try:
            scalar = _scalar_type(dtype.type)
            if np.dtype(dtype.type) == dtype:
                return scalar
        except CodegenError:
            pass
        spelling = dtype.str if dtype.names is None else dtype.descr
        try:
            exact = np.dtype(spelling) == dtype
        except (TypeError, ValueError):
            exact = False
        if not exact:
            raise CodegenError(f"generated code cannot spell the dtype {dtype}")
        return f"np.dtype({spelling!r})"

    def _array(self, value: np.ndarray) -> ast.expr:
        """`np.array([...])`, with the dtype where the items do not imply it.
        Long doubles are written as their decimal strings, which float64
        would round."""
        items = value.tolist()
        if value.dtype.kind == "f" and value.dtype.itemsize > 8:
            items = np.vectorize(str, otypes=[object])(value).tolist()
        call = ast.Call(self.function(np.array), [self.literal(items)], [])
        if value.dtype != np.array(items).dtype:
            call.keywords.append(ast.keyword("dtype", self.literal(value.dtype)))
        return call

    def _float(self, value) -> ast.expr:
        """`0.1`, `np.inf`, `-np.inf`, `np.nan`; a NumPy float other than
        float64 in its type, `np.float32(0.5)`, and from its decimal string
        where float64 would round it (`np.longdouble('0.1')`)."""
        number = float(value)
        if math.isnan(number):
            text = "np.nan"
        elif math.isinf(number):
            text = "np.inf" if number > 0 else "-np.inf"
        else:
            text = repr(number)
        if isinstance(value, np.floating) and not isinstance(value, np.float64):
            scalar = _scalar_type(type(value))
            if not math.isnan(number) and type(value)(number) != value:
                exact = str(value)
                if type(value)(exact) != value:
                    raise CodegenError(f"generated code cannot spell the {scalar} {exact}")
                text = repr(exact)
            text = f"{scalar}({text})"
        return parse_expression(text)

    def _complex(self, value) -> ast.expr:
        """`(1+2j)`; `complex(np.inf, 0.0)` where a part is not finite; a
        NumPy complex other than complex128 in its type."""
        number = complex(value)
        if math.isfinite(number.real) and math.isfinite(number.imag):
            expr = ast.Constant(number)
        else:
            expr = ast.Call(ast.Name("complex"), [self._float(number.real),
                                                  self._float(number.imag)], [])
        if isinstance(value, np.complexfloating) and not isinstance(value, np.complex128):
            expr = ast.Call(ast.parse(_scalar_type(type(value)), mode="eval").body, [expr], [])
        return expr

    def path(self, index: int, path: tuple) -> ast.expr:
        """`m.layers[0].W`; a dict key spelled as a literal (`d["it's"]`), an
        attribute that is no identifier read with getattr."""
        expr = ast.Name(self.params[index])
        for depth, (kind, key) in enumerate(path, 1):
            if kind != ATTR:
                expr = ast.Subscript(expr, self.dict_key(key, index, path[:depth]))
            elif is_attribute_name(key):
                expr = ast.Attribute(expr, key)
            else:
                expr = ast.Call(ast.Name("getattr"), [expr, ast.Constant(key)], [])
        return expr

    def dict_key(self, key, index: int, path: tuple) -> ast.expr:
        """A dict key as a literal the generated code looks the item up with."""
        where = path_expression(self.sig.params[index], path)
        if has_nan(key):
            raise CodegenError(
                f"argument `{where}`: its dict key {describe_value(key)} holds a NaN, which is "
                "unequal to itself, so generated code could never look the item up again",
                hint="Key the dict with something equal to itself (a string, a number).")
        try:
            return self.literal(key)
        except CodegenError:
            raise CodegenError(
                f"argument `{where}`: generated code cannot spell its dict key "
                f"{describe_value(key)}",
                hint="Key the dict with strings, numbers, None, or tuples of them.") from None


def reachable(value, module: str | None, qualname: str) -> bool:
    """Whether `import module` and `module.qualname` give back `value` itself."""
    if not module or module not in sys.modules or "<" in (qualname or ""):
        return False
    found = sys.modules[module]
    if getattr(found, "__name__", None) != module:
        return False  # registered under another name: `import module` would not give it
    for part in qualname.split(".") if qualname else ():
        found = getattr(found, part, None)
    return found is value


@functools.lru_cache(maxsize=4096)
def parse_expression(text: str) -> ast.expr:
    """The expression `text` spells (`np.sum`, `np.inf`): parsed once, and
    shared, since printing a tree never changes it."""
    return ast.parse(text, mode="eval").body


def has_nan(value) -> bool:
    """Whether a static value holds a NaN, which no spelling of it equals."""
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, (complex, np.complexfloating)):
        return math.isnan(value.real) or math.isnan(value.imag)
    if isinstance(value, (tuple, list, set, frozenset)):
        return any(has_nan(item) for item in value)
    if isinstance(value, dict):
        return any(has_nan(key) or has_nan(item) for key, item in value.items())
    return False


def _plain_static(value) -> bool:
    """A static value an f-string field shows the same way at every call."""
    return value is None or type(value) in (str, int, float, bool)


def _scalar_type(cls: type) -> str:
    """`np.float32`: how generated code names a NumPy scalar type."""
    with warnings.catch_warnings():  # np.bytes and friends warn when looked up
        warnings.simplefilter("ignore")
        found = getattr(np, cls.__name__, None)
    if found is not cls:
        raise CodegenError(f"generated code cannot name the NumPy type {cls.__qualname__}")
    return f"np.{cls.__name__}"


def _a_count(value) -> bool:
    """A size used as a number (primitives.dimension) that counts what a mask
    selects (ir/dims.Count)."""
    if isinstance(value, Call) and value.fn is primitives.dimension:
        value = value.args[0]
    return isinstance(value, Dim) and any(
        isinstance(symbol, Count) for monomial in value.facts.terms(value) for symbol in monomial)
