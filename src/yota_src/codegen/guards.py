"""Guards: the checks that the generated code applies to a call.

Signature guards refuse, before a line of the body runs, any argument the
code would read otherwise than the example's (a struct's type and keys, an
array's type, shape and dtype, a static value). Data guards check each
decision the data took for the example (a branch, a loop's trip count),
grouped into facts stated once (facts.py), and raise through one helper.
"""

from __future__ import annotations

import ast
import enum
import operator
import re
import types
from typing import NamedTuple

import numpy as np

from yota_src.codegen.facts import Fact, facts
from yota_src.codegen.formatter_spelling import formatter_spelled
from yota_src.codegen.layout import (
    LINE_LIMIT,
    Field,
    comment,
    condition_lines,
    message,
    quoted,
    wrapped,
)
from yota_src.codegen.loader import InProcessOnly
from yota_src.codegen.loop_code import call_guards
from yota_src.codegen.module_level import ModuleLevel
from yota_src.codegen.names import Names
from yota_src.codegen.spelling import CodegenError, Speller, has_nan
from yota_src.core import primitives
from yota_src.core.values import (
    GENERATOR,
    ITEM,
    STATIC,
    Rows,
    describe_dtype,
    describe_value,
    path_expression,
    path_name,
)
from yota_src.ir.signature import Container
from yota_src.ir.tape import Guard, Tape
from yota_src.tracing import array_library
from yota_src.tracing.samples import DaskSample


class Check(NamedTuple):
    """A signature check: `condition` holds where the argument, reached by
    `code`, is not what the code reads it as; `label` and `expected` say what
    the code was generated for, `kind` how to describe what came instead."""

    condition: str
    label: str
    expected: str
    code: str
    kind: str = "value"
    attributes: tuple = ()
    after: tuple = ()  # lines after the check: the sizes it read first, bound (`N, M = W.shape`)


class Guards:
    """The module's guards, and the helper data guards raise through."""

    def __init__(self, tape: Tape, function: str, params: list[str], names: Names,
                 spell: Speller, module_level: ModuleLevel):
        self.tape, self.sig, self.name, self.params = tape, tape.signature, function, params
        self.names, self.spell, self.module_level = names, spell, module_level
        found = [(op, call_guards(op)) for op in tape.ops]
        inside = {guard for op, guards in found if not isinstance(op, Guard)
                  for guard in guards}  # in a loop's body or a branch's arm
        self.facts = facts([guard for _, guards in found for guard in guards
                            if not self.read_at_run_time(guard)], every_time=inside)
        self.fact_names: dict[Fact, str] = {}  # facts decided more than once: module constants
        self.fact_lines: list[str] = []
        self.other_path = names.unused("_other_path")  # the helper guards raise through
        self.mismatch = names.unused("_mismatch")  # the helper signature checks raise through
        self.described: set[str] = set()  # what kinds of argument it describes
        self.dims = None  # dimensions.Dimensions, set by the module writer
        self.size_facts = False  # a decision taken from sizes raises through _other_path
        self.needed: set = set()  # sizes the code reads, bound where first checked
        # (index, path) of a list read as one array (values.Rows) -> its stack's name
        self.stacked = {(index, leaf.path): names.fresh(path_name(self.sig.params[index],
                                                                  leaf.path))
                        if leaf.path else self.sig.params[index]
                        for index, leaves in enumerate(self.sig.leaves) for leaf in leaves
                        if leaf.type is Rows}
        self.stack = names.unused("_stacked") if self.stacked else None

    def size_guards(self, decisions: list) -> list[str]:
        """The decisions taken from sizes (ControlFlowChanged), after the
        sizes are read: `if not (N > 4):`."""
        lines = []
        for test, fact in decisions:
            self.module_level.errors.add("ControlFlowChanged")
            self.size_facts = True
            lines += [f"if {test}:", *("    " + line for line in
                                       wrapped(f"{self.other_path}(", (fact,), 8))]
        return lines

    def signature_guards(self) -> list[str]:
        """Checks that an argument is what the code reads it as: each struct's
        type and keys (in order: the primal may have iterated them), each
        array's type, shape and dtype, each static value, so that any other
        argument is refused before a line of the body runs. Each part of an
        argument is one test and one call of the helper that says what came
        instead."""
        self.needed = self.dims.needed(self.array_leaves())
        checks = [self._container_check(node) for node in self.sig.containers]
        for index, leaves in enumerate(self.sig.leaves):
            for leaf in leaves:
                checks += self._rows_checks(index, leaf) if leaf.type is Rows \
                    else [self._leaf_check(index, leaf)]
        return [line for check in checks for line in self.check_lines(check)]

    def array_leaves(self) -> list[tuple]:
        """(index, path, shape) of each array leaf whose sizes the checks read."""
        return [(index, leaf.path, leaf.shape) for index, leaves in enumerate(self.sig.leaves)
                for leaf in leaves if leaf.kind not in (STATIC, GENERATOR) and not leaf.scalar
                and not (index in self.tape.free_counts and not leaf.path)]

    def check_lines(self, check: Check) -> list[str]:
        """`if` the argument is not what the code reads it as, refuse it (a
        check without a condition: a helper's call, in its lines after)."""
        self.module_level.errors.add("SignatureMismatch")
        if not check.condition:
            return list(check.after)
        self.described |= {check.kind}
        attributes = f", {check.attributes!r}" if check.attributes else ""
        # repr: spelled as `fitted` reads it; an f-string where it shows sizes read before
        expected = ("f" if "{" in check.expected and check.kind == "array" else "") \
            + repr(check.expected)
        return [*condition_lines(formatter_spelled(check.condition)),
                f"    {self.mismatch}({check.label!r}, {check.code}, {expected}"
                f"{attributes})", *check.after]

    def _subject(self, index: int, path: tuple) -> tuple[str, str]:
        """The code that reaches a part of argument `index`, and its name in messages."""
        return (ast.unparse(self.spell.path(index, path)),
                path_expression(self.sig.params[index], path))

    def _container_check(self, node: Container) -> Check:
        code, label = self._subject(node.index, node.path)
        tests = [self._type_differs(code, node.type)]
        expected = f"of type {node.type.__qualname__}"
        kind, attributes = "value", ()
        if node.kind == "sequence":
            n = len(node.keys)
            tests.append(f"len({code}) != {n}")
            expected, kind = f"{expected} with {n} item{'' if n == 1 else 's'}", "sequence"
        elif node.kind == "dict":
            keys = ast.unparse(ast.List([
                self.spell.dict_key(key, node.index, node.path + ((ITEM, key),))
                for key in node.keys]))
            tests.append(f"list({code}) != {keys}")
            expected, kind = f"{expected} with the keys {keys} in this order", "dict"
        elif node.keys:
            attributes = tuple(node.keys)
            present = [f"hasattr({code}, {ast.unparse(self.spell.literal(key))})"
                       for key in node.keys]  # no list made on every call
            tests.append(f"not ({' and '.join(present)})" if len(present) > 1
                         else f"not {present[0]}")
            kind = "attributes"  # the helper names them
        return Check(" or ".join(tests), label, expected, code, kind, attributes)

    def _type_differs(self, expr: str, cls: type) -> str:
        """`type(x) is not list`; a class generated code cannot name without
        importing the user's module is compared by its qualified name."""
        if cls is np.ndarray and self.sig.library == array_library.NUMPY:
            return f"type({expr}) is not {self.spell.guard_type()}"
        if cls is DaskSample:  # (respelled under the module's alias)
            return f"type({expr}) is not dask.array.Array"
        path = primitives.function_path(cls)
        if path is not None and path.startswith("math."):
            self.spell.imports.add("import math")
        if path is not None:
            return f"type({expr}) is not {path}"
        return f"type({expr}).__qualname__ != {cls.__qualname__!r}"

    def _leaf_check(self, index: int, leaf) -> Check:
        code, label = self._subject(index, leaf.path)
        if leaf.kind == STATIC and index in self.tape.free_counts and not leaf.path:
            return Check(self._type_differs(code, int), label, "of type int", code)  # a trip count
        if leaf.kind == STATIC:
            return self._static_check(code, label, leaf.value)
        if leaf.kind == GENERATOR:
            return Check(self._type_differs(code, leaf.type), label,
                         f"of type {leaf.type.__qualname__}", code)
        if leaf.scalar:
            if leaf.type in (float, np.float64, complex, np.complex128):
                python_type = "float" if leaf.type in (float, np.float64) else "complex"
                test = f"not isinstance({code}, {python_type})"
            else:
                test = self._type_differs(code, leaf.type)
            return Check(test, label, f"of type {leaf.describe()}", code)
        if index in self.tape.free_counts and not leaf.path:  # any number of rows
            return self.array_check(code, label, leaf.type, leaf.shape, leaf.dtype,
                                    leaf.describe_rows())
        return self.array_check(code, label, leaf.type, leaf.shape, leaf.dtype,
                                at=(index, leaf.path))

    def _rows_checks(self, index: int, leaf) -> list[Check]:
        """A list of arrays read as the rows of one (values.Rows): stacked by
        the helper, which refuses anything but a list of arrays of one shape
        and the dtype, and the stack checked as an array (its length a size
        like the others)."""
        code, label = self._subject(index, leaf.path)
        stacked = self.stacked[(index, leaf.path)]
        expected = self.sig.describe_leaf(index, leaf, self.dims.shape_text
                                          if self.dims.active else None)
        self.described |= {"sequence", "array", "rows"}
        stacking = Check("", label, expected, code, after=(
            f"{stacked} = {self.stack}({label!r}, {code}, "
            f"{self.spell.guard_dtype(leaf.dtype)}, {len(leaf.shape) - 1}, {expected!r})",))
        array = self.array_check(stacked, label, np.ndarray, leaf.shape, leaf.dtype,
                                 at=(index, leaf.path), shape_only=True)
        if array.condition == f"{stacked}.ndim != {len(leaf.shape)}":  # the helper's test
            array = array._replace(condition="")
        self.spell.guard_type()  # (the helper's)
        return [stacking, array._replace(expected=expected, code=f"list({stacked})",
                                         kind="rows")]

    def stack_helper(self) -> list[str]:
        """The function a list read as one array is checked and stacked by."""
        return [f"def {self.stack}(label, value, dtype, ndim, expected):",
                '    """A list of arrays of one shape and dtype, as the rows of one array."""',
                "    if type(value) is not list or not value:",
                f"        {self.mismatch}(label, value, expected)",
                "    for i, item in enumerate(value):",
                f"        if (type(item) is not {self.spell.guard_type()} or item.dtype != dtype "
                "or item.ndim != ndim",
                "                or item.shape != value[0].shape):",
                f'            {self.mismatch}(f"{{label}}[{{i}}]", item, f"a {{dtype}} array of '
                'ndim {ndim}, each item shaped alike")',
                "    return np.stack(value)"]

    def array_check(self, code: str, label: str, cls: type, shape: tuple, dtype,
                    rows: str | None = None, at: tuple | None = None,
                    shape_only: bool = False) -> Check:
        """The array `code` is a `cls` of this shape and dtype (`rows`: of any
        number of rows, so described; `at`: the (index, path) of an argument
        leaf, whose sizes read at run time are free; `shape_only`: its type
        and dtype are known)."""
        kind = cls.__qualname__
        if self.sig.library == array_library.CUPY and cls is np.ndarray:  # either is `ndarray`
            kind = f"{self.sig.library}.{kind}"
        if cls is DaskSample:
            kind = "dask.array.Array"
        test = f"{code}.shape != {shape!r}"
        if rows is not None:
            test = f"{code}.shape[1:] != {shape[1:]!r}" if len(shape) > 1 \
                else f"{code}.ndim != 1"
        expected = rows or f"{describe_dtype(dtype)} {shape}"
        after: tuple = ()
        free = None
        if at is not None and self.dims.active:
            wanted = f"{describe_dtype(dtype)} {self.dims.shape_text(*at, shape, fields=True)}"
            free = self.dims.leaf(code, *at, shape, self.needed)
        if free is not None:
            test, after, expected = free[0], tuple(free[1]), wanted
        if kind != "ndarray":
            expected = f"{expected}, a {kind}"
        if not shape_only:
            test = (f"{self._type_differs(code, cls)} or {test} or "
                    f"{code}.dtype != {self.spell.guard_dtype(dtype)}")
        return Check(test, label, expected, code, "array", after=after)

    def _static_check(self, code: str, label: str, value) -> Check:
        """By value where the code can spell it, by identity otherwise (and for
        a value holding a NaN, which no spelling of it equals). An enum member
        is known by its class's qualified name and its own, as classes are, so
        the module imports nothing of the user's."""
        if isinstance(value, enum.Enum) and not isinstance(value, (int, str)):
            member = f"{type(value).__qualname__}.{value.name}"
            test = (f"type({code}).__qualname__ != {type(value).__qualname__!r} "
                    f"or {code}.name != {value.name!r}")
            return Check(test, label, f"is {member}", code)
        try:
            spelled = None if has_nan(value) else ast.unparse(self.spell.literal(value))
        except CodegenError:
            spelled = None
        if spelled is None:
            return self._identity_check(code, label, value)
        if value is None or isinstance(value, (bool, types.ModuleType)) or callable(value):
            return Check(f"{code} is not {spelled}", label, f"is {spelled}", code)
        if isinstance(value, (int, float, complex, np.number, np.bool_)):
            test = f"{self._type_differs(code, type(value))} or {code} != {spelled}"
        else:
            test = f"{code} != {spelled}"
        return Check(test, label, f"== {spelled}", code)

    def _identity_check(self, code: str, label: str, value) -> Check:
        """A value with no spelling (a lambda, a local function, an object) is
        compared with the live object, bound by the in-process loader; a saved
        copy of the module has no such object, so saving is refused."""
        name = self.names.fresh(re.sub(r"\W+", "_", label).strip("_") + "_object")
        description = describe_value(value)
        self.module_level.identities.append(
            f"{name} = None  # {comment(f'{label}: {description}')}")
        self.module_level.live[name] = InProcessOnly(value, f"{label} is {description}")
        return Check(f"{code} is not {name}", label, f"is {description} (that very object)",
                     code)

    def mismatch_helper(self) -> list[str]:
        """The one function every signature check raises through: it says
        what came instead, as far as the checks it serves need."""
        said = [("array", 'hasattr(value, "shape") and hasattr(value, "dtype")',
                 'f" {value.dtype} {value.shape}"'),
                ("rows", 'isinstance(value, list) and value and hasattr(value[0], "shape")',
                 'f" of {len(value)} {value[0].dtype} {value[0].shape} arrays"'),
                ("sequence", "isinstance(value, (list, tuple))", 'f" of length {len(value)}"'),
                ("dict", "isinstance(value, dict)", 'f" with the keys {list(value)}"'),
                ("attributes", "attributes", 'f", missing {[name for name in attributes '
                 'if not hasattr(value, name)]}"'),
                ("value", None, 'f" {value!r:.60}"')]
        branches = [(test, text) for kind, test, text in said if kind in self.described]
        attributes = ", attributes=()" if "attributes" in self.described else ""
        lines = [f"def {self.mismatch}(label, value, expected{attributes}):",
                 '    """Refuse an argument unlike the example\'s, saying what it is."""',
                 "    got = type(value).__qualname__"]
        if self.sig.library != array_library.NUMPY:  # which library's `ndarray`
            lines.append('    got = f"{type(value).__module__}.{got}"')
        if attributes:
            lines += ["    if attributes:",
                      '        expected += f" with the attributes {attributes}"']
        for number, (test, text) in enumerate(branches):
            if test is None and number == 0:
                lines.append(f"    got += {text}")
            else:
                lines += [f"    {'else' if test is None else 'if' if number == 0 else 'elif'}"
                          f"{'' if test is None else ' ' + test}:",
                          f"        got += {text}"]
        refusal = message(f"{self.name} was generated for ", Field("label"), " ",
                          Field("expected"), ", got ", Field("got"))
        return lines + wrapped("    raise SignatureMismatch(", refusal, 0)

    def read_at_run_time(self, op: Guard) -> bool:
        """A guard of a mask's count that the code reads at run time: no code
        relies on the example's count, so it is not written (ir/dims.Count)."""
        return op.read_at_run_time(self.sig.dims)

    def guard(self, op: Guard) -> list[str]:
        """`if` the data take another path than the example's, raise through
        the helper, naming the decision: one the data took more than once
        by the fact's module-level name."""
        if self.read_at_run_time(op):
            return []
        value = self.names.ref(op.value)
        if op.convert is bool:
            test = value if op.expected is False else _negated(value)
        else:
            convert = int if op.convert is operator.index else op.convert
            test = ast.Compare(self.spell.call(convert, (op.value,), {}), [ast.NotEq()],
                               [self.spell.literal(op.expected)])
        self.module_level.errors.add("ControlFlowChanged")
        fact = self.facts[op]
        if fact.repeated:
            if fact not in self.fact_names:
                name = self.names.fresh(f"{'LOOP' if fact.loop else 'DECISION'}_{fact.line}")
                self.fact_names[fact] = name
                one = f"{name} = {quoted(fact.text)}"
                self.fact_lines += [one] if len(one) <= LINE_LIMIT else \
                    wrapped(f"{name} = (", (fact.text,), 0)
            call = [f"{self.other_path}({self.fact_names[fact]})"]
        else:
            call = wrapped(f"{self.other_path}(", (fact.text,), 8)
        return [f"if {ast.unparse(test)}:", *("    " + line for line in call)]

    def other_path_helper(self) -> list[str]:
        """The one function every data-dependent guard raises through."""
        refusal = message(f"{self.name} was generated for data where ", Field("fact"),
                          "; this call goes the other way")
        return [f"def {self.other_path}(fact):",
                '    """The data took another path than the example\'s: the generated code '
                'does not apply."""',
                *wrapped("    raise ControlFlowChanged(", refusal, 0)]


def _negated(test: ast.expr) -> ast.expr:
    """`not test`, as `a not in b` and `a is not b` where it reads better
    (the other comparisons are not negated: `not a < b` differs for NaN)."""
    flipped = {ast.In: ast.NotIn, ast.Is: ast.IsNot}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in flipped:
        return ast.Compare(test.left, [flipped[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)
