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

import numpy as np

from yota_src.codegen.facts import Fact, facts
from yota_src.codegen.layout import (
    LINE_LIMIT,
    Field,
    comment,
    condition_lines,
    message,
    quoted,
    raising,
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
    describe_dtype,
    describe_value,
    path_expression,
)
from yota_src.ir.loops import is_loop
from yota_src.ir.signature import Container
from yota_src.ir.tape import Guard, Tape
from yota_src.tracing import array_library


class Guards:
    """The module's guards, and the helper data guards raise through."""

    def __init__(self, tape: Tape, function: str, params: list[str], names: Names,
                 spell: Speller, module_level: ModuleLevel):
        self.tape, self.sig, self.name, self.params = tape, tape.signature, function, params
        self.names, self.spell, self.module_level = names, spell, module_level
        self.facts = facts([guard for op in tape.ops for guard in
                            (call_guards(op) if is_loop(op) else [op])
                            if isinstance(guard, Guard)])
        self.fact_names: dict[Fact, str] = {}  # facts decided more than once: module constants
        self.fact_lines: list[str] = []
        self.other_path = names.unused("_other_path")  # the helper guards raise through

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
        for condition, refusal, *before in checks:
            self.module_level.errors.add("SignatureMismatch")
            lines += [*condition_lines(condition), *("    " + line for line in sum(before, [])),
                      *raising("SignatureMismatch", refusal, 8)]
        return lines

    def _subject(self, index: int, path: tuple) -> tuple[str, str]:
        """The code that reaches a part of argument `index`, and its name in messages."""
        return (ast.unparse(self.spell.path(index, path)),
                path_expression(self.sig.params[index], path))

    def _container_checks(self, node: Container) -> list[tuple[str, str]]:
        code, label = self._subject(node.index, node.path)
        head = f"{self.name} was generated for {label}"
        type_name = node.type.__qualname__
        checks = [(self._type_differs(code, node.type),
                   message(f"{head} of type {type_name}, got ",
                           Field(f"type({code}).__qualname__")))]
        if node.kind == "sequence":
            n = len(node.keys)
            checks.append((f"len({code}) != {n}",
                           message(f"{head} with {n} items, got ", Field(f"len({code})"))))
        elif node.kind == "dict":
            keys = ast.unparse(ast.List([
                self.spell.dict_key(key, node.index, node.path + ((ITEM, key),))
                for key in node.keys]))
            checks.append((f"list({code}) != {keys}",
                           message(f"{head} with the keys {keys} in this order, got ",
                                   Field(f"list({code})"))))
        elif node.keys:
            names = ast.unparse(self.spell.literal(node.keys))
            name = "name" if "name" not in self.params else self.names.fresh("name")
            missing = "missing" if "missing" not in self.params else self.names.fresh("missing")
            present = [f"hasattr({code}, {ast.unparse(self.spell.literal(key))})"
                       for key in node.keys]
            checks.append((f"not ({' and '.join(present)})" if len(present) > 1  # no list made
                           else f"not {present[0]}",                      # on every call
                           message(f"{head} with the attributes {names}, missing: ",
                                   Field(missing)),
                           [f"{missing} = [{name} for {name} in {names} "
                            f"if not hasattr({code}, {name})]"]))
        return checks

    def _type_differs(self, expr: str, cls: type) -> str:
        """`type(x) is not list`; a class generated code cannot name without
        importing the user's module is compared by its qualified name."""
        path = primitives.function_path(cls)
        if path is not None and path.startswith("math."):
            self.spell.imports.add("import math")
        if path is not None:
            return f"type({expr}) is not {path}"
        return f"type({expr}).__qualname__ != {cls.__qualname__!r}"

    def _leaf_checks(self, index: int, leaf) -> list[tuple[str, str]]:
        code, label = self._subject(index, leaf.path)
        head = f"{self.name} was generated for {label}"
        if leaf.kind == STATIC and index in self.tape.free_counts and not leaf.path:
            return [(self._type_differs(code, int),  # a trip count: any int
                     message(f"{head} of type int, got ", Field(f"type({code}).__qualname__")))]
        if leaf.kind == STATIC:
            return [self._static_check(code, label, leaf.value, head)]
        got_type = Field(f"type({code}).__qualname__")
        if leaf.kind == GENERATOR:
            return [(self._type_differs(code, leaf.type),
                     message(f"{head} of type {leaf.type.__qualname__}, got ", got_type))]
        if leaf.scalar:
            kind = leaf.describe()
            if leaf.type in (float, np.float64, complex, np.complex128):
                python_type = "float" if leaf.type in (float, np.float64) else "complex"
                test = f"not isinstance({code}, {python_type})"
            else:
                test = self._type_differs(code, leaf.type)
            return [(test, message(f"{head} of type {kind}, got ", got_type))]
        if index in self.tape.free_counts and not leaf.path:  # any number of rows
            return self.array_checks(code, head, leaf.type, leaf.shape, leaf.dtype,
                                     leaf.describe_rows())
        return self.array_checks(code, head, leaf.type, leaf.shape, leaf.dtype)

    def array_checks(self, code: str, head: str, cls: type, shape: tuple,
                     dtype, rows: str | None = None) -> list[tuple[str, str]]:
        """The array `code` is a `cls` of this shape and dtype (`rows`: of any
        number of rows, so described)."""
        got_type = (Field(f"type({code}).__qualname__"),)
        kind = cls.__qualname__
        if self.sig.library != array_library.NUMPY and cls is np.ndarray:  # either is `ndarray`
            kind = f"{self.sig.library}.{kind}"
            got_type = (Field(f"type({code}).__module__"), ".", *got_type)
        test = f"{code}.shape != {shape!r}"
        if rows is not None:
            test = f"{code}.shape[1:] != {shape[1:]!r}" if len(shape) > 1 \
                else f"{code}.ndim != 1"
        return [(self._type_differs(code, cls),
                 message(f"{head} of type {kind}, got ", *got_type)),
                (f"{test} or {code}.dtype != {self.spell.guard_dtype(dtype)}",
                 message(f"{head} {rows or describe_dtype(dtype) + ' ' + str(shape)}, got ",
                         Field(f"{code}.dtype"), " ", Field(f"{code}.shape")))]

    def _static_check(self, code: str, label: str, value, head: str) -> tuple[str, str]:
        """By value where the code can spell it, by identity otherwise (and for
        a value holding a NaN, which no spelling of it equals). An enum member
        is known by its class's qualified name and its own, as classes are, so
        the module imports nothing of the user's."""
        if isinstance(value, enum.Enum) and not isinstance(value, (int, str)):
            member = f"{type(value).__qualname__}.{value.name}"
            test = (f"type({code}).__qualname__ != {type(value).__qualname__!r} "
                    f"or {code}.name != {value.name!r}")
            return test, message(f"{head} is {member}, got ", Field(code, "r"))
        try:
            spelled = None if has_nan(value) else ast.unparse(self.spell.literal(value))
        except CodegenError:
            spelled = None
        if spelled is None:
            return self._identity_check(code, label, value, head)
        got = Field(code, "r")
        if value is None or isinstance(value, (bool, types.ModuleType)) or callable(value):
            return f"{code} is not {spelled}", message(f"{head} is {spelled}, got ", got)
        if isinstance(value, (int, float, complex, np.number, np.bool_)):
            test = f"{self._type_differs(code, type(value))} or {code} != {spelled}"
        else:
            test = f"{code} != {spelled}"
        return test, message(f"{head} == {spelled}, got ", got)

    def _identity_check(self, code: str, label: str, value, head: str) -> tuple[str, str]:
        """A value with no spelling (a lambda, a local function, an object) is
        compared with the live object, bound by the in-process loader; a saved
        copy of the module has no such object, so saving is refused."""
        name = self.names.fresh(re.sub(r"\W+", "_", label).strip("_") + "_object")
        description = describe_value(value)
        self.module_level.identities.append(
            f"{name} = None  # {comment(f'{label}: {description}')}")
        self.module_level.live[name] = InProcessOnly(value, f"{label} is {description}")
        return (f"{code} is not {name}",
                message(f"{head} is {description} (that very object), got ", Field(code, "r")))

    def guard(self, op: Guard) -> list[str]:
        """`if` the data take another path than the example's, raise through
        the helper, naming the decision: one the data took more than once
        by the fact's module-level name."""
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
                          "; this call goes the other way, so the generated code does not apply")
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
