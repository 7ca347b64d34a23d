"""The tape as a readable Python module.

Statements are built as `ast` nodes and printed with `ast.unparse`; this
module adds what an AST cannot hold: the docstring's specialisation, the
source-line comments, and the names. Names follow the user's (`h`, `h_2`),
gradients are `d<name>`, and a temporary used once on the same source line is
folded back into the expression that uses it, so a forward line reads like
the line the user wrote.
"""

from __future__ import annotations

import ast
import builtins
import collections
import enum
import functools
import hashlib
import itertools
import keyword
import logging
import math
import operator
import re
import symtable
import sys
import textwrap
import types
import unicodedata
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from yota_src.codegen import loop_code, respell
from yota_src.codegen.facts import Fact, facts
from yota_src.codegen.loader import InProcessOnly, load
from yota_src.codegen.loop_code import call_guards
from yota_src.core import operators, primitives
from yota_src.core.values import (
    ATTR,
    GENERATOR,
    ITEM,
    STATIC,
    describe_dtype,
    describe_value,
    is_attribute_name,
    path_expression,
    path_name,
)
from yota_src.errors import UnsupportedSyntaxError
from yota_src.ir import contexts
from yota_src.ir.loops import is_loop, is_loop_output
from yota_src.ir.signature import Container
from yota_src.ir.tape import Call, Const, Guard, Input, Op, Tape, operands, readers
from yota_src.passes.naming import Naming
from yota_src.trace import array_library

_BINARY = operators.to_node(ast, "binary")
_COMPARE = {**operators.to_node(ast, "compare"), operator.is_: ast.Is}
_UNARY = operators.to_node(ast, "unary")
_INLINE_LIMIT = 64  # longest expression a temporary is folded into, in characters
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
_AUGMENTED = {np.add: "+", np.subtract: "-", np.multiply: "*", np.divide: "/"}
_METHOD_KEYWORDS = {"axis", "dtype", "out", "keepdims", "initial", "where", "ddof", "order"}
LINE_LIMIT = 100  # columns: longer statements are written over several lines
# Most elements an array from outside the arguments may have to be written
# into the module as a literal (about 5 kB of text); a larger one is read
# from its module by name at each call (`outside_read`).
LITERAL_LIMIT = 256
# names the code reads without taking them: modules, and the errors it raises
# the kinds of derivative module, and the prefix of their function's name
_PREFIXES = {"gradient": "grad", "vjp": "vjp", "hvp": "hvp", "jvp": "jvp"}
_WHAT = {"gradient": "Gradient", "vjp": "Vector-Jacobian product", "forward": "Forward pass",
         "hvp": "Hessian-vector product", "jvp": "Jacobian-vector product"}
_RESERVED = frozenset({"np", "math", "SignatureMismatch", "ControlFlowChanged"})


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


class CodegenError(UnsupportedSyntaxError):
    """A value the generated code has no way to spell; raised at the line of
    the op that needs it."""


def function_name(tape: Tape, kind: str) -> str:
    """`grad_loss` for loss; a lambda (named `<lambda>`) gives `grad_lambda`.
    A forward module's function keeps the primal's name unless the module
    needs that name for something else (`sum_` for a primal called `sum`)."""
    name = tape.signature.function_name
    if not _is_identifier(name):
        name = _identifier(re.sub(r"\W", "", name)) or "function"
    if kind in _PREFIXES:
        return f"{_PREFIXES[kind]}_{name}"
    if not name.isidentifier():  # it starts with a digit
        return f"f_{name}"
    reserved = keyword.iskeyword(name) or name in _RESERVED or hasattr(builtins, name)
    return f"{name}_" if reserved else name


def compile_forward(tape: Tape) -> Callable:
    """The primal tape as a loaded Python function (`Tape.compile`)."""
    source, constants = generate(tape, kind="forward")
    constants, _ = array_library.device_constants(constants, tape.signature.library)
    return load(source, function_name(tape, "forward"), constants)


def module_source(tape: Tape, kind: str = "gradient") -> str:
    """The module text for a gradient tape, or (kind="forward") a primal tape."""
    return generate(tape, kind)[0]


def generate(tape: Tape, kind: str = "gradient") -> tuple[str, dict]:
    """The module text and its module-level arrays by name.

    The text holds a snapshot of each array the primal read from its globals
    or closures; an in-process loader binds the names to the live arrays.
    Code for CuPy arguments is written for NumPy, then respelled.
    """
    text, constants = _numpy_module(tape, kind)
    if tape.signature.library == array_library.CUPY:
        text = respell.respell(text, function_name(tape, kind))
    return text, constants


def _numpy_module(tape: Tape, kind: str) -> tuple[str, dict]:
    """`generate`'s module as written for NumPy.

    A parameter may be called like something the code needs (`np`, `len`,
    `type`): the function keeps the user's parameters, and where one would
    hide a name its body reads, it hands its arguments to a body function
    that takes that parameter under a fresh name.
    """
    writer = _Writer(tape, kind)
    text = writer.module()
    bound = _module_names(text)  # parsed once: a long unrolled module takes a while
    suspects = frozenset(index for index, param in enumerate(tape.signature.params)
                         if hasattr(builtins, param) or param in bound)
    if suspects:
        renamed = _Writer(tape, kind, suspects)
        renamed_text = renamed.module()
        reads = _global_reads(renamed_text, renamed.body_name)
        needed = frozenset(index for index in suspects if tape.signature.params[index] in reads)
        if needed == suspects:
            writer, text = renamed, renamed_text
        elif needed:
            writer = _Writer(tape, kind, needed)
            text = writer.module()
    return text, writer.live_constants


class _Field(NamedTuple):
    """A value shown in a message: the code that computes it, and "r" for its repr."""

    code: str
    conversion: str = ""


class _Writer:
    def __init__(self, tape: Tape, kind: str, renamed: frozenset = frozenset()):
        self.tape, self.kind, self.sig = tape, kind, tape.signature
        self.name = function_name(tape, kind)
        self.names: dict[Op, str] = {}
        self.inlined: dict[Op, ast.expr] = {}
        self.taken = set(self.sig.params) | _RESERVED | {self.name} | set(dir(builtins))
        self.suffixes: dict[str, int] = {}  # base name -> the last suffix `fresh` gave it
        # The body's names for the parameters: the user's, or a fresh one for
        # a parameter that would hide a name the body reads (see `generate`).
        self.params = [self.fresh(param) if index in renamed else param
                       for index, param in enumerate(self.sig.params)]
        self.body_name = self.fresh(f"{self.name}_body") if renamed else self.name
        self.modules: dict[str, str] = {}  # imported module -> the name code uses for it
        self.import_roots = {"math"}
        self.temps = 0
        self.assignments: set[Op] = set()
        self.augmented: set[Op] = set()  # a loop's updates of its own arrays, in place
        self.counter: str | None = None  # the name loop counters take, once one is named
        self.imports = {"import numpy as np"}
        self.errors_used: set[str] = set()
        self.constants: list[str] = []  # module-level arrays the function reads
        self.live_constants: dict[str, object] = {}
        self.identities: list[str] = []  # module-level names of objects compared by identity
        self.guard_dtypes: dict[str, str] = {}  # a dtype's spelling -> the module's name for it
        self.work: str | None = None  # the name of a call's work arrays (passes/work_arrays.py)
        self.work_slots: dict[int, tuple] = {}  # slot -> (shape, dtype)
        self.unreachable: list[str] = []  # module-level names of large arrays no import reaches
        self.outside_reads: list[str] = []  # large arrays read from their modules, and checked
        self.read_by_name: list[str] = []  # what those are, for the docstring
        self.users = readers(tape.ops, tape.output)
        self.overwritten = {op.kwargs["out"] for op in tape.ops  # passes/in_place.py
                            if isinstance(op, Call) and isinstance(op.kwargs.get("out"), Op)}
        self.overwritten |= _in_shared_work_arrays(tape.ops)
        self.backward = set(tape.ops[tape.n_forward:])
        loops = loop_code.loop_calls(tape)
        body_labels = {}
        for call in loops:
            self.users.update(loop_code.body_readers(call.fn))
            body_labels.update(call.fn.labels)
            if call in self.backward:
                self.backward.update(call.fn.ops + list(call.fn.params))
        self.loop_reads = {op for call in loops for op in call.fn.ops  # `xs[t]`, `t + 1`
                           if op.loc is None and isinstance(op, Call)}
        self.preset: dict[Op, str] = {}  # a body value's name, set by its loop
        self.pinned: set[Op] = set()  # body values written where they stand, never folded
        self.outputs: dict[Call, list[str]] = {}  # a loop's outputs: the variables it sets
        self.naming = Naming(tape, kind, self.sig.params, self.users, body_labels,
                             self.backward, [op for call in loops for op in call.fn.ops])
        self.in_place = self.naming.in_place
        self.writes_in_place = set(self.in_place.values())
        self.facts = facts([guard for op in tape.ops for guard in
                            (call_guards(op) if is_loop(op) else [op])
                            if isinstance(guard, Guard)])
        self.fact_names: dict[Fact, str] = {}  # facts decided more than once: module constants
        self.fact_lines: list[str] = []
        self.other_path = "_other_path"  # the helper guards raise through (fresh drops "_")
        for suffix in itertools.count(2):
            if self.other_path not in self.taken:
                break
            self.other_path = f"_other_path_{suffix}"
        self.taken.add(self.other_path)

    # -- the module ---------------------------------------------------------

    def module(self) -> str:
        guards = self.signature_guards()
        body = self.body()  # finds the outside reads
        body = guards + self.outside_reads + self.take_work() + body
        imports = sorted(self.imports, key=lambda line: (line != "import numpy as np", line))
        lines = [self.docstring(), *imports, ""]
        if self.errors_used:
            names = " = ".join(sorted(self.errors_used, reverse=True))
            lines += ["# Raised when called outside the specialisation above; "
                      f"{'both are' if len(self.errors_used) > 1 else 'it is'} ValueError.",
                      f"{names} = ValueError", ""]
        work = self.work_helper() if self.work_slots else []  # first: it names dtypes
        if self.guard_dtypes:
            lines += ["# The dtypes the guards compare with, made once.",
                      *(f"{name} = {spelled if '(' in spelled else f'np.dtype({spelled})'}"
                        for spelled, name in self.guard_dtypes.items()), ""]
        if self.constants:
            lines += ["# Arrays the primal read from its globals and closures, as they were.",
                      *self.constants, ""]
        if self.identities:
            lines += ["# Objects the arguments held, compared by identity: only the process that",
                      "# generated this module has them, so it cannot be saved and run elsewhere.",
                      *self.identities, ""]
        lines += work
        if self.unreachable:
            lines += ["# Arrays too large to write here, which no import reaches: only the process",
                      "# that generated this module has them, so it cannot be saved and run",
                      "# elsewhere.",
                      *self.unreachable, ""]
        if self.fact_lines:
            lines += ["# Decisions the data took more than once for the example; a call whose",
                      "# data take another path raises ControlFlowChanged naming them.",
                      *self.fact_lines, ""]
        code_start = len(lines)
        lines += ["", f"def {self.body_name}({', '.join(self.params)}):"]
        lines += [fitted for line in body
                  for fitted in (_fitted("    " + line) if line else [""])]
        if not _uses_name("\n".join(lines[len(imports) + 1:]), "np"):
            lines.remove("import numpy as np")
            code_start -= 1
        if self.body_name != self.name:
            lines[code_start:code_start] = ["", *self.entry_point(), ""]
        if self.facts:  # after the function: a reader meets the gradient first
            lines += ["", "", *self.other_path_helper()]
        return "\n".join(lines) + "\n"

    def take_work(self) -> list[str]:
        return [f"{self.work} = {self.take}()"] if self.work_slots else []

    def work_helper(self) -> list[str]:
        """The work arrays a call writes large temporaries into: each call
        takes a free set and gives it back, so concurrent calls never share one."""
        arrays = ", ".join(f"np.empty({shape!r}, {self._guard_dtype(dtype)})"
                           for shape, dtype in (self.work_slots[slot]
                                                for slot in sorted(self.work_slots)))
        return ["# Arrays the large temporaries are written into, kept from call to call.",
                f"{self.spare} = []", "", "",
                f"def {self.take}():",
                '    """A free set of work arrays: a spare one, or a new one while all are in '
                'use."""',
                "    try:",
                f"        return {self.spare}.pop()",
                "    except IndexError:",
                *_fitted(f"        return [{arrays}]"), "", ""]

    def other_path_helper(self) -> list[str]:
        """The one function every data-dependent guard raises through."""
        message = (f"{self.name} was generated for data where ", _Field("fact"),
                   "; this call goes the other way, so the generated code does not apply")
        return [f"def {self.other_path}(fact):",
                '    """The data took another path than the example\'s: the generated code '
                'does not apply."""',
                *_wrapped("    raise ControlFlowChanged(", message, 0)]

    def entry_point(self) -> list[str]:
        """The function with the user's parameters, where one of them would
        hide a name the body reads: it hands its arguments to the body."""
        renamed = [(user, body) for user, body in zip(self.sig.params, self.params)
                   if user != body]
        hidden = _listed([user for user, _ in renamed])
        taken = _listed([f"{user} as {body}" for user, body in renamed])
        params = ", ".join(self.sig.params)
        return [f"def {self.name}({params}):",
                f"    # The code below reads the name{'s' if len(renamed) > 1 else ''} "
                f"{hidden} for itself, so it takes {taken}.",
                f"    return {self.body_name}({params})"]

    def docstring(self) -> str:
        sig = self.sig
        what = _WHAT[self.kind]
        qualified = f"{sig.module}.{sig.qualname}" if sig.module else sig.qualname
        paragraphs = [f"{what} of {qualified} (source sha1 {sig.source_hash})."]
        device = " (CuPy arrays, on the device)" if sig.library == array_library.CUPY else ""
        paragraphs.append(f"Specialised to{device}: "
                          f"{sig.describe(self.tape.free_counts) or 'no arguments'}.")
        stated = []
        for op, fact in self.facts.items():
            text = fact.text if fact.repeated else f"{op.loc.short} `{op.text}` " + (
                f"was {op.expected}" if op.convert is bool else
                f"gave {describe_value(op.expected)}")
            if text not in stated:
                stated.append(text)
        if stated:
            paragraphs.append("Data-dependent facts: " + "; ".join(stated) + ".")
        if sig.outside:
            arrays = ("small arrays are snapshots below, larger ones read at each call"
                      if self.read_by_name else "arrays are snapshots below")
            paragraphs.append(f"Read from outside the arguments and frozen here ({arrays}): "
                              + "; ".join(sig.outside) + ".")
        if self.read_by_name:
            paragraphs.append(
                f"Arrays from outside with more than {LITERAL_LIMIT} elements are not copied "
                "here: each call reads them from their modules, which must be importable, and "
                "checks their type, shape and dtype (an integer or boolean array's contents "
                "too, which the code was specialised to): " + "; ".join(self.read_by_name) + ".")
        paragraphs.append("Generated by yota-src; edit the primal, not this file.")
        text = "\n\n".join(textwrap.fill(p, 79, break_long_words=False,
                                         break_on_hyphens=False) for p in paragraphs)
        return f'"""{_docstring_body(text)}\n"""'

    # -- guards on the arguments --------------------------------------------

    def signature_guards(self) -> list[str]:
        """Checks that an argument is what the code reads it as: each struct's
        type and keys (in order: the primal may have iterated them), each
        array's type, shape and dtype, each static value, so that any other
        argument is refused before a line of the body runs."""
        checks = [check for node in self.sig.containers
                  for check in self._container_checks(node)]
        checks += [check for index, leaves in enumerate(self.sig.leaves) for leaf in leaves
                   for check in self._leaf_checks(index, leaf)]
        lines = []
        for condition, message, *before in checks:
            self.errors_used.add("SignatureMismatch")
            lines += [*_condition_lines(condition), *("    " + line for line in sum(before, [])),
                      *self.raising("SignatureMismatch", message, 8)]
        return lines

    def raising(self, error: str, message: tuple, indent: int, tail: str = "") -> list[str]:
        """`raise error(message)` inside an `if`, wrapped to the line limit."""
        return ["    " + line for line in _wrapped(f"raise {error}(", message, indent, ")" + tail)]

    def _subject(self, index: int, path: tuple) -> tuple[str, str]:
        """The code that reaches a part of argument `index`, and its name in messages."""
        return ast.unparse(self.path(index, path)), path_expression(self.sig.params[index], path)

    def path(self, index: int, path: tuple) -> ast.expr:
        """`m.layers[0].W`; a dict key spelled as a literal (`d["it's"]`), an
        attribute that is no identifier read with getattr."""
        expr = ast.Name(self.params[index])
        for depth, (kind, key) in enumerate(path, 1):
            if kind != ATTR:
                expr = ast.Subscript(expr, self._key(key, index, path[:depth]))
            elif is_attribute_name(key):
                expr = ast.Attribute(expr, key)
            else:
                expr = ast.Call(ast.Name("getattr"), [expr, ast.Constant(key)], [])
        return expr

    def _key(self, key, index: int, path: tuple) -> ast.expr:
        """A dict key as a literal the generated code looks the item up with."""
        where = path_expression(self.sig.params[index], path)
        if _has_nan(key):
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

    def _container_checks(self, node: Container) -> list[tuple[str, str]]:
        code, label = self._subject(node.index, node.path)
        head = f"{self.name} was generated for {label}"
        type_name = node.type.__qualname__
        checks = [(self._type_differs(code, node.type),
                   _message(f"{head} of type {type_name}, got ",
                            _Field(f"type({code}).__qualname__")))]
        if node.kind == "sequence":
            n = len(node.keys)
            checks.append((f"len({code}) != {n}",
                           _message(f"{head} with {n} items, got ", _Field(f"len({code})"))))
        elif node.kind == "dict":
            keys = ast.unparse(ast.List([self._key(key, node.index, node.path + ((ITEM, key),))
                                         for key in node.keys]))
            checks.append((f"list({code}) != {keys}",
                           _message(f"{head} with the keys {keys} in this order, got ",
                                    _Field(f"list({code})"))))
        elif node.keys:
            names = ast.unparse(self.literal(node.keys))
            name = "name" if "name" not in self.params else self.fresh("name")
            missing = "missing" if "missing" not in self.params else self.fresh("missing")
            present = [f"hasattr({code}, {ast.unparse(self.literal(key))})" for key in node.keys]
            checks.append((f"not ({' and '.join(present)})" if len(present) > 1  # no list made
                           else f"not {present[0]}",                      # on every call
                           _message(f"{head} with the attributes {names}, missing: ",
                                    _Field(missing)),
                           [f"{missing} = [{name} for {name} in {names} "
                            f"if not hasattr({code}, {name})]"]))
        return checks

    def _type_differs(self, expr: str, cls: type) -> str:
        """`type(x) is not list`; a class generated code cannot name without
        importing the user's module is compared by its qualified name."""
        path = primitives.function_path(cls)
        if path is not None and path.startswith("math."):
            self.imports.add("import math")
        if path is not None:
            return f"type({expr}) is not {path}"
        return f"type({expr}).__qualname__ != {cls.__qualname__!r}"

    def _leaf_checks(self, index: int, leaf) -> list[tuple[str, str]]:
        code, label = self._subject(index, leaf.path)
        head = f"{self.name} was generated for {label}"
        if leaf.kind == STATIC and index in self.tape.free_counts and not leaf.path:
            return [(self._type_differs(code, int),  # a trip count: any int
                     _message(f"{head} of type int, got ", _Field(f"type({code}).__qualname__")))]
        if leaf.kind == STATIC:
            return [self._static_check(code, label, leaf.value, head)]
        got_type = _Field(f"type({code}).__qualname__")
        if leaf.kind == GENERATOR:
            return [(self._type_differs(code, leaf.type),
                     _message(f"{head} of type {leaf.type.__qualname__}, got ", got_type))]
        if leaf.scalar:
            kind = leaf.describe()
            if leaf.type in (float, np.float64, complex, np.complex128):
                python_type = "float" if leaf.type in (float, np.float64) else "complex"
                test = f"not isinstance({code}, {python_type})"
            else:
                test = self._type_differs(code, leaf.type)
            return [(test, _message(f"{head} of type {kind}, got ", got_type))]
        if index in self.tape.free_counts and not leaf.path:  # any number of rows
            return self._array_checks(code, head, leaf.type, leaf.shape, leaf.dtype,
                                      leaf.describe_rows())
        return self._array_checks(code, head, leaf.type, leaf.shape, leaf.dtype)

    def _array_checks(self, code: str, head: str, cls: type, shape: tuple,
                      dtype, rows: str | None = None) -> list[tuple[str, str]]:
        """The array `code` is a `cls` of this shape and dtype (`rows`: of any
        number of rows, so described)."""
        got_type = (_Field(f"type({code}).__qualname__"),)
        kind = cls.__qualname__
        if self.sig.library != array_library.NUMPY and cls is np.ndarray:  # either is `ndarray`
            kind = f"{self.sig.library}.{kind}"
            got_type = (_Field(f"type({code}).__module__"), ".", *got_type)
        test = f"{code}.shape != {shape!r}"
        if rows is not None:
            test = f"{code}.shape[1:] != {shape[1:]!r}" if len(shape) > 1 \
                else f"{code}.ndim != 1"
        return [(self._type_differs(code, cls),
                 _message(f"{head} of type {kind}, got ", *got_type)),
                (f"{test} or {code}.dtype != {self._guard_dtype(dtype)}",
                 _message(f"{head} {rows or describe_dtype(dtype) + ' ' + str(shape)}, got ",
                          _Field(f"{code}.dtype"), " ", _Field(f"{code}.shape")))]

    def _static_check(self, code: str, label: str, value, head: str) -> tuple[str, str]:
        """By value where the code can spell it, by identity otherwise (and for
        a value holding a NaN, which no spelling of it equals). An enum member
        is known by its class's qualified name and its own, as classes are, so
        the module imports nothing of the user's."""
        if isinstance(value, enum.Enum) and not isinstance(value, (int, str)):
            member = f"{type(value).__qualname__}.{value.name}"
            test = (f"type({code}).__qualname__ != {type(value).__qualname__!r} "
                    f"or {code}.name != {value.name!r}")
            return test, _message(f"{head} is {member}, got ", _Field(code, "r"))
        try:
            spelled = None if _has_nan(value) else ast.unparse(self.literal(value))
        except CodegenError:
            spelled = None
        if spelled is None:
            return self._identity_check(code, label, value, head)
        got = _Field(code, "r")
        if value is None or isinstance(value, (bool, types.ModuleType)) or callable(value):
            return f"{code} is not {spelled}", _message(f"{head} is {spelled}, got ", got)
        if isinstance(value, (int, float, complex, np.number, np.bool_)):
            test = f"{self._type_differs(code, type(value))} or {code} != {spelled}"
        else:
            test = f"{code} != {spelled}"
        return test, _message(f"{head} == {spelled}, got ", got)

    def _identity_check(self, code: str, label: str, value, head: str) -> tuple[str, str]:
        """A value with no spelling (a lambda, a local function, an object) is
        compared with the live object, bound by the in-process loader; a saved
        copy of the module has no such object, so saving is refused."""
        name = self.fresh(re.sub(r"\W+", "_", label).strip("_") + "_object")
        description = describe_value(value)
        self.identities.append(f"{name} = None  # {_comment(f'{label}: {description}')}")
        self.live_constants[name] = InProcessOnly(value, f"{label} is {description}")
        return (f"{code} is not {name}",
                _message(f"{head} is {description} (that very object), got ", _Field(code, "r")))

    # -- the body -----------------------------------------------------------

    def body(self) -> list[str]:
        """The statements, each source line's under a comment naming it; ops
        the primal computed inside `with np.errstate(...)`, `with
        warnings.catch_warnings()` or a `try` body (contexts.py) are written
        inside the same blocks."""
        lines: list[str] = []
        group, blocks = None, []
        for index, op in enumerate(self.tape.ops):
            if index == self.tape.n_forward and self.kind != "forward":
                lines += self.close_blocks(blocks, 0)
                lines.append("# backward")
                group = None
            try:
                statements = self.statements(op)
            except CodegenError as error:
                if error.location is not None or op.loc is None:
                    raise
                raise CodegenError(error.message, op.loc, error.hint) from None
            if not statements:
                continue
            context = contexts.blocks(op.loc.context) if op.loc is not None else ()
            if tuple(blocks) != context:
                kept = next((i for i, (a, b) in enumerate(zip(blocks, context)) if a != b),
                            min(len(blocks), len(context)))
                lines += self.close_blocks(blocks, kept)
                for entry in context[kept:]:
                    lines += ["    " * len(blocks) + line for line in self.open_block(entry)]
                    blocks.append(entry)
                group = None
            indent = "    " * len(blocks)
            here = self.group(op)
            if op.loc is not None and here != group:
                lines.append(indent + self.source_comment(op))
            group = None if is_loop(op) else here  # after a loop: say the line
            lines += [indent + line for line in statements]
        lines += self.close_blocks(blocks, 0)
        lines += self.return_statements()
        return lines

    def open_block(self, entry) -> list[str]:
        kind, *rest = entry
        if kind == contexts.ERRSTATE:
            arguments = ", ".join(f"{name}={value!r}" for name, value in rest[0])
            return [f"with np.errstate({arguments}):"]
        if kind == contexts.WARNINGS:
            module = self._import("warnings")
            calls = [ast.unparse(ast.Call(ast.parse(f"{module}.{function.__name__}",
                                                    mode="eval").body,
                                          [self.literal(a) for a in args],
                                          self.keywords(dict(kwargs))))
                     for function, args, kwargs in rest[0]]
            return [f"with {module}.catch_warnings():"] + ["    " + call for call in calls]
        return ["try:"]

    def close_blocks(self, blocks: list, keep: int) -> list[str]:
        """Close the blocks opened after the first `keep`; a `try` closes with
        the refusal of data on which its body raised."""
        lines = []
        while len(blocks) > keep:
            kind, *rest = blocks.pop()
            if kind == contexts.TRY:
                caught, where = rest
                types = ast.unparse(ast.Tuple([self.literal(kind) for kind in caught]))
                self.errors_used.add("ControlFlowChanged")
                message = (f"{self.name} was generated for data on which the `try` at {where} "
                           "raised nothing; this call raises, so the unrolled code does not "
                           "apply")
                indent = "    " * len(blocks)
                lines += [indent + f"except {types} as error:"]
                lines += [indent + line for line in self.raising(
                    "ControlFlowChanged", (message,), 8 + len(indent), " from error")]
        return lines

    def statements(self, op: Op) -> list[str]:
        if isinstance(op, Input):
            if not op.path:
                self.names[op] = self.params[op.index]
                return []
            self.names[op] = self.fresh(path_name(self.sig.params[op.index], op.path))
            return [f"{self.names[op]} = {ast.unparse(self.path(op.index, op.path))}"]
        if isinstance(op, Guard):
            return self.guard(op)
        if isinstance(op, Const) and isinstance(op.value, primitives.GENERATORS):
            name = self.names[op] = self.fresh(op.hint or "generator")
            self.identities.append(f"{name} = None  # the random generator {op.hint}, drawn from")
            self.live_constants[name] = InProcessOnly(
                op.value, f"the random generator {op.hint} of this process (pass the generator "
                          "in as an argument to save a module that draws from it)")
            return []
        if isinstance(op, Const) and op.hint is not None:  # a global or closure array
            self.names[op] = name = self.fresh(op.hint)
            if np.size(op.value) > LITERAL_LIMIT:
                self.outside_read(op, name)
                return []
            self.constants.append(f"{name} = {ast.unparse(self.literal(op.value))}")
            self.live_constants[name] = op.value
            return []
        if isinstance(op, Call) and op.fn in primitives.INDEX_STORES:
            return self.index_store(op)
        if is_loop(op):
            return loop_code.loop_statements(self, op)
        if is_loop_output(op):  # a variable the loop sets
            self.names[op] = self.outputs[op.args[0]][op.args[1]]
            return []
        if isinstance(op, Call) and op.fn is primitives.work_array:
            if self.work is None:
                self.work = self.fresh("work")
                self.take, self.spare = self.fresh("work_arrays"), self.fresh("spare_work")
            self.work_slots[op.args[0]] = (op.shape, op.dtype)
            self.inlined[op] = ast.Subscript(ast.Name(self.work), ast.Constant(op.args[0]))
            return []
        if isinstance(op, Call) and isinstance(op.kwargs.get("out"), Op):
            return self.in_place_statement(op)
        expr = self.expression(op)
        if isinstance(op, Call) and op not in self.users:  # kept for its effect: print, seed
            return [ast.unparse(ast.Expr(expr))]
        if self.should_inline(op, expr):
            self.inlined[op] = expr
            return []
        if op in self.augmented:  # a loop's accumulator: `dW += g`
            self.names[op] = self.preset.pop(op)
            return [f"{self.names[op]} += {ast.unparse(self.literal(op.args[1]))}"]
        if op in self.preset:
            self.names[op] = self.preset.pop(op)
        else:
            base = self.base_name(op) or loop_code.initial_name(self, op) \
                or self.naming.described(op, self.names) or self.temp()
            self.names[op] = self.fresh(base)
        self.assignments.add(op)
        return [f"{self.names[op]} = {ast.unparse(expr)}"]

    def in_place_statement(self, op: Call) -> list[str]:
        """A result written into a dead operand's buffer (passes/in_place.py):
        `t3 /= t2`, or `np.exp(t5, out=t5)`; a value with a name of its own
        is assigned it, `dx = np.multiply(t3, t1, out=t3)`."""
        if op.kwargs["out"] in self.inlined:  # a work array: `t2 = np.add(1, t1, out=work[0])`
            self.names[op] = self.fresh(self.base_name(op) or self.naming.described(
                op, self.names) or self.temp())
            self.assignments.add(op)
            return [f"{self.names[op]} = {ast.unparse(self.expression(op))}"]
        buffer = self.names[op.kwargs["out"]]
        rest = [ast.unparse(self.literal(arg)) for arg in op.args[1:]]
        name = self.base_name(op)
        if name is None:
            self.names[op] = buffer
            if op.fn in _AUGMENTED and op.args[0] is op.kwargs["out"]:
                return [f"{buffer} {_AUGMENTED[op.fn]}= {rest[0]}"]
            return [ast.unparse(self.expression(op))]
        self.names[op] = self.fresh(name)
        self.assignments.add(op)
        return [f"{self.names[op]} = {ast.unparse(self.expression(op))}"]

    def assigned(self, op: Op) -> bool:
        """Whether the code assigns `op` a variable of its own (not a parameter's,
        a module constant's or a loop's)."""
        return op in self.assignments

    def block(self, ops: list, header=None) -> list[str]:
        """The statements of a loop body, each source line's under its comment
        (but the loop's own line, which the loop statement stands for)."""
        lines, group = [], None
        for op in ops:
            statements = self.statements(op)
            if not statements:
                continue
            here = self.group(op)
            on_header = header is not None and op.loc is not None and (
                op.loc.filename, op.loc.lineno) == (header.filename, header.lineno)
            if op.loc is not None and here != group and not on_header:
                lines.append(self.source_comment(op))
            group = here
            lines += statements
        return lines

    def source_comment(self, op: Op) -> str:
        """`# file.py:12  the line`, above the statements of a source line."""
        return f"# {_comment(f'{op.loc.short}  {op.loc.line.strip()}')}"

    def outside_read(self, op: Const, name: str) -> None:
        """A large array from outside the arguments is never written into the
        module: the function reads it from its module at each call (`W =
        model.W`), as the in-process code reads it live, and checks what the
        code was specialised to. One that no import reaches (a closure
        variable, a default, a global of `__main__`) is bound by the loader
        alone, and the module cannot be saved."""
        what = f"{describe_dtype(op.dtype)} array {op.shape}"
        if self.sig.library == array_library.CUPY:
            raise CodegenError(
                f"{op.hint}, a NumPy {what} read from outside the arguments, is too large to "
                f"write into the module (more than {LITERAL_LIMIT} elements), and the code runs "
                "on the device, where no NumPy array can be read", op.loc,
                hint=f"Pass {op.hint} to the function as an argument (cupy.asarray({op.hint})).")
        reach = self._reach(op)
        if reach is None:
            where = f"the array {op.hint} ({what}, read at {op.loc.short})" if op.loc \
                else f"the array {op.hint} ({what})"
            self.unreachable.append(f"{name} = None  # {_comment(where)}")
            self.live_constants[name] = InProcessOnly(
                op.value, where, op.loc,
                f"it reads {where}, which is too large to write into the module (more than "
                f"{LITERAL_LIMIT} elements) and is not a global of a module that the saved "
                "module could import",
                f"Pass {op.hint} to the function as an argument, or make it a global of an "
                "importable module rather than a closure variable, a default or a global of "
                "the script being run; or use the gradient in this process.")
            return
        label = ast.unparse(reach)
        self.read_by_name.append(f"{label} ({what})")
        self.errors_used.add("SignatureMismatch")
        checks = self._array_checks(name, f"{self.name} was generated for {label}",
                                    type(op.value), op.shape, op.dtype)
        if not np.issubdtype(op.dtype, np.inexact):  # folded by its contents: they are checked
            digest = hashlib.sha1(np.ascontiguousarray(op.value).tobytes()).hexdigest()
            checks.append((f"{self._import('hashlib')}.sha1({name}.tobytes()).hexdigest() != "
                           f"{digest!r}", _message(f"{self.name} was generated for {label} with "
                                                   f"other contents (sha1 {digest[:12]})")))
        self.outside_reads.append(f"{name} = {label}")
        for condition, message in checks:
            self.outside_reads += [f"if {condition}:",
                                   *self.raising("SignatureMismatch", message, 8)]

    def _reach(self, op: Const) -> ast.expr | None:
        """`model.W`: the expression that reads `op`'s array from an importable
        module, if following `op.origin` from that module gives the very array."""
        if op.origin is None:
            return None
        module_name, path = op.origin
        module = sys.modules.get(module_name)
        if module_name == "__main__" or module is None or not _reachable(module, module_name, "") \
                or not isinstance(getattr(module, "__file__", None), str):
            return None
        found, steps = module, []
        try:
            for kind, key in path:
                found = getattr(found, key) if kind == ATTR else found[key]
                steps.append((kind, key, None if kind == ATTR or _has_nan(key)
                              else self.literal(key)))
        except Exception:  # noqa: BLE001 - any failure to follow it means no reach
            return None
        if found is not op.value or any(kind != ATTR and spelled is None
                                        for kind, _, spelled in steps):
            return None
        expr = _expression(self._import(module_name))
        for kind, key, spelled in steps:
            if kind != ATTR:
                expr = ast.Subscript(expr, spelled)
            elif is_attribute_name(key):
                expr = ast.Attribute(expr, key)
            else:
                expr = ast.Call(ast.Name("getattr"), [expr, ast.Constant(key)], [])
        return expr

    def guard(self, op: Guard) -> list[str]:
        value = self.ref(op.value)
        if op.convert is bool:
            test = value if op.expected is False else _negated(value)
        else:
            convert = int if op.convert is operator.index else op.convert
            test = ast.Compare(self.call(convert, (op.value,), {}), [ast.NotEq()],
                               [self.literal(op.expected)])
        self.errors_used.add("ControlFlowChanged")
        fact = self.facts[op]
        if fact.repeated:
            if fact not in self.fact_names:
                name = self.fresh(f"{'LOOP' if fact.loop else 'DECISION'}_{fact.line}")
                self.fact_names[fact] = name
                one = f"{name} = {_quoted(fact.text)}"
                self.fact_lines += [one] if len(one) <= LINE_LIMIT else \
                    _wrapped(f"{name} = (", (fact.text,), 0)
            call = [f"{self.other_path}({self.fact_names[fact]})"]
        else:
            call = _wrapped(f"{self.other_path}(", (fact.text,), 8)
        return [f"if {ast.unparse(test)}:", *("    " + line for line in call)]

    def index_store(self, op: Call) -> list[str]:
        """`buf[i] = v`, `buf[i] += v` or `np.add.at(buf, i, v)`, on a copy unless
        the buffer is fresh and this is its only use."""
        buffer, index, values = op.args
        lines = []
        if op in self.writes_in_place or op in self.augmented:
            name = self.names[buffer]
            self.preset.pop(op, None)
        else:
            name = self.fresh(self.base_name(op) or self.temp())
            lines.append(f"{name} = {ast.unparse(self.ref(buffer))}.copy()")
        self.names[op] = name
        target, values_expr = ast.Name(name), self.literal(values)
        if op.fn is primitives.index_update:
            store = ast.unparse(ast.Subscript(target, self.index(index)))
            return lines + [f"{store} = {ast.unparse(values_expr)}"]
        if primitives.is_basic_index(index):
            statement = ast.AugAssign(ast.Subscript(target, self.index(index)), ast.Add(),
                                      values_expr)
        else:
            statement = ast.Expr(ast.Call(self.function(np.add.at),
                                          [target, self.literal(index), values_expr], []))
        return lines + [ast.unparse(statement)]

    def return_statements(self) -> list[str]:
        output = self.tape.output
        if self.kind == "forward":
            return [f"return {ast.unparse(self.literal(output))}"]
        if self.kind == "hvp":
            return [f"return {ast.unparse(self.literal(output[1]))}"]
        if self.kind == "jvp":
            return [f"return {ast.unparse(self.literal(output[0]))}, "
                    f"{ast.unparse(self.literal(output[1]))}"]
        lines = [f"{self.spare}.append({self.work})"] if self.work_slots else []
        parts = [ast.unparse(self.literal(output[0]))]
        for index, grad in enumerate(output[1:]):
            if isinstance(grad, dict):
                name = self.fresh(f"d{self.sig.params[index]}")
                lines.append(f"{name} = {ast.unparse(self.literal(grad))}")
                parts.append(name)
            else:
                parts.append(ast.unparse(self.literal(grad)))
        return lines + [f"return {', '.join(parts)}"]

    # -- names --------------------------------------------------------------

    def base_name(self, op: Op) -> str | None:
        return self.naming.base(op, self.names)

    def fresh(self, base: str) -> str:
        """An unused identifier from `base` (`dd_(1, 'a')` -> `dd_1_a`): the
        base itself, else the first free of `base_2`, `base_3`, ... Names are
        never given back, so the search goes on from the last suffix given:
        `h_10000` costs no more than `h_2`."""
        base = _identifier(base).strip("_") or "v"
        base = base if base.isidentifier() and not keyword.iskeyword(base) else f"v_{base}"
        n = self.suffixes.get(base, 1)
        name = base if n == 1 else f"{base}_{n}"
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.suffixes[base] = n
        self.taken.add(name)
        return name

    def temp(self) -> str:
        while True:
            self.temps += 1
            if f"t{self.temps}" not in self.taken:
                return f"t{self.temps}"

    def group(self, op: Op | None):
        """Ops of one source line in one section: the unit of comments and of
        folding temporaries."""
        if op is None or op.loc is None:
            return None
        return (op in self.backward, op.loc.filename, op.loc.lineno, op.loc.context)

    def should_inline(self, op: Op, expr: ast.expr) -> bool:
        """Fold a value used once into its user's line, but never a random
        draw: folded, it would run when its user does, after draws the tape
        made later (and the generator would give each other numbers)."""
        users = self.users.get(op, [])
        if isinstance(op, Call) and any(each in self.overwritten for each in operands(op)):
            return False  # it must read its operand before an update in place
        return ((self.base_name(op) is None or op in self.loop_reads) and len(users) == 1
                and not is_loop(users[0]) and op not in self.preset
                and op not in self.pinned
                and not (isinstance(op, Call) and primitives.has_effect(op.fn))
                and users[0] is not None and (self.group(users[0]) == self.group(op)
                                              or op in self.loop_reads)
                and not (isinstance(users[0], Call) and users[0].fn in primitives.INDEX_STORES
                         and users[0].args[0] is op)
                and len(ast.unparse(expr)) <= _INLINE_LIMIT)

    # -- expressions ----------------------------------------------------------

    def ref(self, op: Op) -> ast.expr:
        if op in self.inlined:
            return self.inlined[op]
        return ast.Name(self.names[op])

    def expression(self, op: Op) -> ast.expr:
        if isinstance(op, Const):
            return self.literal(op.value)
        fn, args, kwargs = op.fn, op.args, op.kwargs
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
                and _METHOD_KEYWORDS.issuperset(kwargs):
            return ast.Call(ast.Attribute(self.literal(args[0]), _METHOD_SPELLINGS[fn]),
                            [self.literal(a) for a in args[1:]], self.keywords(kwargs))
        if fn is primitives.draw:  # rng.normal(size=3)
            return ast.Call(ast.Attribute(self.literal(args[0]), args[1]),
                            [self.literal(a) for a in args[2:]], self.keywords(kwargs))
        arguments = [self.literal(a) for a in args]
        if args and self.sig.library != array_library.NUMPY and _float_scalar(args[0]) \
                and _array_first(fn):  # CuPy's routines take arrays only: cp.broadcast_to(1.0, s)
            arguments[0] = ast.Call(self.function(np.asarray), [arguments[0]], [])
        return ast.Call(self.function(fn), arguments, self.keywords(kwargs))

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
        return [ast.keyword(key, self.literal(value)) for key, value in kwargs.items()]

    def index(self, index) -> ast.expr:
        if isinstance(index, tuple):
            return ast.Tuple([self._index_item(item) for item in index])
        return self._index_item(index)

    def _index_item(self, item) -> ast.expr:
        if isinstance(item, slice):
            part = lambda p: None if p is None else self.literal(p)  # noqa: E731
            return ast.Slice(part(item.start), part(item.stop), part(item.step))
        return self.literal(item)

    def function(self, fn) -> ast.expr:
        path = primitives.function_path(fn)
        if path is None:
            path = self._user_function(fn)
        elif path.startswith("math."):
            self.imports.add("import math")
        elif path.startswith("scipy."):  # `scipy.stats.norm.logpdf`: import scipy.stats
            package, module, rest = path.split(".", 2)
            path = f"{self._import(f'{package}.{module}')}.{rest}"
        return _expression(path)

    def _user_function(self, fn) -> str:
        """A user's function, reached through its module: only where importing
        that module and following the qualified name gives `fn` itself."""
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, logging.Logger):  # loggers are found by name
            name = "" if isinstance(owner, logging.RootLogger) else repr(owner.name)
            return f"{self._import('logging')}.getLogger({name}).{fn.__name__}"
        if owner is not None and not isinstance(owner, type(sys)):
            home = sys.modules.get(type(owner).__module__)  # random.random: random._inst's
            if home is not None and getattr(home, fn.__name__, None) is fn:
                return f"{self._import(home.__name__)}.{fn.__name__}"
            raise CodegenError(
                f"generated code cannot refer to the method {getattr(fn, '__name__', fn)}() of "
                f"a {type(owner).__name__} object: it has no name a module can import. Call a "
                "module-level function instead (e.g. np.random.normal), or pass what it "
                "computes in as an argument")
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", "")
        if module and module.startswith("_") and _reachable(fn, module[1:], qualname):
            module = module[1:]  # `warnings.warn`, not the `_warnings` that implements it
        if not _reachable(fn, module, qualname):
            raise CodegenError(f"generated code cannot refer to {describe_value(fn)}: define it "
                               "at the top level of an importable module")
        return f"{self._import(module)}.{qualname}"

    def _module(self, module: types.ModuleType) -> ast.expr:
        """`np`, `math`, or another module by the name that imports it."""
        if module is np:
            return ast.Name("np")
        name = module.__name__
        if not _reachable(module, name.split(".")[0], ".".join(name.split(".")[1:]) or None):
            raise CodegenError(f"generated code cannot import the module {name}")
        return _expression(self._import(name))

    def _import(self, module: str) -> str:
        """The name code reads `module` by, imported: `import a.b` gives `a.b`;
        where `a` already names something else (a parameter, a value),
        `import a.b as a_b`."""
        if module not in self.modules:
            root = module.split(".")[0]
            if root in self.import_roots or root not in self.taken:
                self.imports.add(f"import {module}")
                self.import_roots.add(root)
                self.taken.add(root)
                self.modules[module] = module
            else:
                alias = self.fresh(module.replace(".", "_"))
                self.imports.add(f"import {module} as {alias}")
                self.modules[module] = alias
        return self.modules[module]

    def literal(self, value) -> ast.expr:
        """A static value (or a structure holding ops) as an expression."""
        if isinstance(value, Op):
            return self.ref(value)
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
            return _expression(self._dtype(value))
        if isinstance(value, primitives.StandardStream):
            return _expression(f"{self._import('sys')}.{value.name}")
        if isinstance(value, type) and issubclass(value, np.generic):
            return _expression(_scalar_type(value))
        if isinstance(value, np.ndarray):
            return self._array(value)
        if callable(value):
            return self.function(value)
        if isinstance(value, types.ModuleType):
            return self._module(value)
        raise CodegenError(f"generated code cannot spell the value {value!r}")

    def _guard_dtype(self, dtype) -> str:
        """A dtype made once at module level for guards to compare with:
        comparing with `np.float64`, a type, converts it on every call, which
        costs twice as much as the comparison."""
        spelled = self._dtype(dtype)
        if spelled not in self.guard_dtypes:
            base = spelled[3:] if "(" not in spelled else "dtype"
            self.guard_dtypes[spelled] = self.fresh(base)
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
        return _expression(text)

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


def _in_shared_work_arrays(ops: list) -> set:
    """Values held in a work array that a later temporary takes over
    (passes/work_arrays.py): what reads them is written where it stands,
    never folded into a later line, where it would read the newer value."""
    slots = collections.Counter(op.args[0] for op in ops
                                if isinstance(op, Call) and op.fn is primitives.work_array)
    held = {op for op in ops if isinstance(op, Call) and op.fn is primitives.work_array
            and slots[op.args[0]] > 1}
    for op in ops:
        if isinstance(op, Call) and isinstance(op.kwargs.get("out"), Op) \
                and op.kwargs["out"] in held:
            held.add(op)
    return held


def _reachable(value, module: str | None, qualname: str) -> bool:
    """Whether `import module` and `module.qualname` give back `value` itself."""
    if not module or module not in sys.modules or "<" in (qualname or ""):
        return False
    found = sys.modules[module]
    if getattr(found, "__name__", None) != module:
        return False  # registered under another name: `import module` would not give it
    for part in qualname.split(".") if qualname else ():
        found = getattr(found, part, None)
    return found is value


def _uses_name(text: str, name: str) -> bool:
    """Whether the code reads or assigns the variable `name` (an import nobody
    uses is dead code)."""
    return any(symbol.is_referenced() or symbol.is_assigned()
               for table in _tables(symtable.symtable(text, "<generated>", "exec"))
               for symbol in [_symbol(table, name)] if symbol is not None)


@functools.lru_cache(maxsize=4096)
def _expression(text: str) -> ast.expr:
    """The expression `text` spells (`np.sum`, `np.inf`): parsed once, and
    shared, since printing a tree never changes it."""
    return ast.parse(text, mode="eval").body


def _module_names(text: str) -> set[str]:
    """The names a module's top-level statements bind (imports, assignments,
    functions)."""
    table = symtable.symtable(text, "<generated>", "exec")
    return {symbol.get_name() for symbol in table.get_symbols()
            if symbol.is_imported() or symbol.is_assigned()}


def _global_reads(text: str, function: str) -> set[str]:
    """The names the function `function` of a module reads from outside itself."""
    table = next(child for child in symtable.symtable(text, "<generated>", "exec").get_children()
                 if child.get_type() == "function" and child.get_name() == function)
    return {symbol.get_name() for scope in _tables(table) for symbol in scope.get_symbols()
            if symbol.is_global() and symbol.is_referenced()}


# The module's text is read back through `symtable`, which compiles it in C:
# a Python syntax tree of a long unrolled module would take seconds and
# hundreds of megabytes.

def _tables(table: symtable.SymbolTable) -> list[symtable.SymbolTable]:
    """A scope and every scope nested in it (functions, comprehensions)."""
    tables, pending = [], [table]
    while pending:
        scope = pending.pop()
        tables.append(scope)
        pending.extend(scope.get_children())
    return tables


def _symbol(table: symtable.SymbolTable, name: str) -> symtable.Symbol | None:
    try:
        return table.lookup(name)
    except KeyError:
        return None


def _listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _is_identifier(text: str) -> bool:
    """Whether `text` is an identifier that Python reads as itself (not
    folded into another by NFKC normalisation)."""
    return text.isidentifier() and unicodedata.normalize("NFKC", text) == text


def _identifier(text: str) -> str:
    """`text` with every character an identifier cannot continue with (and
    each run of non-word characters) replaced by `_`."""
    text = re.sub(r"\W+", "_", unicodedata.normalize("NFKC", text))
    return "".join(char if ("_" + char).isidentifier() else "_" for char in text)


def _message(*parts) -> tuple:
    """A message made of literal text and `_Field`s (code whose value it
    shows), written out by `_wrapped`."""
    return parts


def _condition_lines(condition: str) -> list[str]:
    """`if condition:`, a parenthesised conjunction too long for one line
    broken before its `and`s."""
    line = f"if {condition}:"
    if len(line) + 4 <= LINE_LIMIT or not condition.startswith("not (") or " and " not in line:
        return [line]
    lines, rest = [], line
    while len(rest) + 4 > LINE_LIMIT and " and " in rest:
        cut = rest.rfind(" and ", 0, LINE_LIMIT - 4)
        if cut <= 0:
            break
        lines.append(rest[:cut])
        rest = "        and " + rest[cut + 5:]
    return lines + [rest]


def _fitted(line: str) -> list[str]:
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
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.Return)) \
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


def _wrapped(head: str, parts: tuple, indent: int, tail: str = ")") -> list[str]:
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
    if any(char in part.code for part in parts if isinstance(part, _Field) for char in '\\"#'):
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
    if not any(isinstance(part, _Field) for part in parts):
        return _quoted("".join(parts))
    return _message_source(*parts)


def _message_source(*parts) -> str:
    """Source text of a message made of literal text and `_Field`s: an
    f-string, or `"...{!r}...".format(...)` where a field's code holds what an
    f-string field cannot on every supported Python (a backslash, a double
    quote, `#`)."""
    fields = [part for part in parts if isinstance(part, _Field)]
    if not any(char in field.code for field in fields for char in '\\"#'):
        return 'f"' + "".join(
            _string_body(part).replace("{", "{{").replace("}", "}}") if isinstance(part, str)
            else "{" + part.code + (f"!{part.conversion}" if part.conversion else "") + "}"
            for part in parts) + '"'
    template = "".join(part.replace("{", "{{").replace("}", "}}") if isinstance(part, str)
                       else "{!r}" if part.conversion == "r" else "{}" for part in parts)
    return f"{_quoted(template)}.format({', '.join(field.code for field in fields)})"


def _string_body(text: str) -> str:
    """`text` as written between double quotes: backslashes, double quotes
    and unprintable characters escaped."""
    return "".join(char if char.isprintable() and char not in '\\"'
                   else "\\" + char if char in '\\"' else repr(char)[1:-1] for char in text)


def _quoted(text: str) -> str:
    return f'"{_string_body(text)}"'


def _docstring_body(text: str) -> str:
    """`text` as written inside a triple-quoted docstring: backslashes and
    unprintable characters escaped, no run of three quotes."""
    body = "".join("\\\\" if char == "\\" else char if char.isprintable() or char == "\n"
                   else repr(char)[1:-1] for char in text)
    return body.replace('"""', '""\\"')


def _comment(text: str) -> str:
    """`text` as the rest of a `#` comment: a line break in it would end the
    comment, so unprintable characters are escaped."""
    return "".join(char if char.isprintable() or char == "\t" else repr(char)[1:-1]
                   for char in text)


def _has_nan(value) -> bool:
    """Whether a static value holds a NaN, which no spelling of it equals."""
    if isinstance(value, (float, np.floating)):
        return math.isnan(value)
    if isinstance(value, (complex, np.complexfloating)):
        return math.isnan(value.real) or math.isnan(value.imag)
    if isinstance(value, (tuple, list, set, frozenset)):
        return any(_has_nan(item) for item in value)
    if isinstance(value, dict):
        return any(_has_nan(key) or _has_nan(item) for key, item in value.items())
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


def _negated(test: ast.expr) -> ast.expr:
    """`not test`, as `a not in b` and `a is not b` where it reads better
    (the other comparisons are not negated: `not a < b` differs for NaN)."""
    flipped = {ast.In: ast.NotIn, ast.Is: ast.IsNot}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in flipped:
        return ast.Compare(test.left, [flipped[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)
