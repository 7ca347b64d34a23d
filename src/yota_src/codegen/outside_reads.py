"""Large arrays read from outside the arguments: never written into the
module, read from their modules by name at each call, and checked."""

from __future__ import annotations

import ast
import hashlib
import sys

import numpy as np

from yota_src.codegen.guards import Guards
from yota_src.codegen.layout import comment, message, raising
from yota_src.codegen.loader import InProcessOnly
from yota_src.codegen.module_level import ModuleLevel
from yota_src.codegen.spelling import CodegenError, Speller, has_nan, parse_expression, reachable
from yota_src.core.values import ATTR, describe_dtype, is_attribute_name
from yota_src.ir.signature import Signature
from yota_src.ir.tape import Const
from yota_src.tracing import array_library

# Most elements an array from outside the arguments may have to be written
# into the module as a literal (about 5 kB of text); a larger one is read
# from its module by name at each call (`OutsideReads`).
LITERAL_LIMIT = 256


class OutsideReads:
    """The lines that read the large arrays at the start of a call and check
    them, and what those arrays are, for the docstring."""

    def __init__(self, signature: Signature, function: str, spell: Speller, guards: Guards,
                 module_level: ModuleLevel):
        self.sig, self.name = signature, function
        self.spell, self.guards, self.module_level = spell, guards, module_level
        self.lines: list[str] = []  # large arrays read from their modules, and checked
        self.described: list[str] = []  # what those are, for the docstring

    def read(self, op: Const, name: str) -> None:
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
            self.module_level.unreachable.append(f"{name} = None  # {comment(where)}")
            self.module_level.live[name] = InProcessOnly(
                op.value, where, op.loc,
                f"it reads {where}, which is too large to write into the module (more than "
                f"{LITERAL_LIMIT} elements) and is not a global of a module that the saved "
                "module could import",
                f"Pass {op.hint} to the function as an argument, or make it a global of an "
                "importable module rather than a closure variable, a default or a global of "
                "the script being run; or use the gradient in this process.")
            return
        label = ast.unparse(reach)
        self.described.append(f"{label} ({what})")
        self.module_level.errors.add("SignatureMismatch")
        self.lines.append(f"{name} = {label}")
        self.lines += self.guards.check_lines(
            self.guards.array_check(name, label, type(op.value), op.shape, op.dtype))
        if not np.issubdtype(op.dtype, np.inexact):  # folded by its contents: they are checked
            digest = hashlib.sha1(np.ascontiguousarray(op.value).tobytes()).hexdigest()
            sha1 = f"{self.spell.imported('hashlib')}.sha1"
            self.lines += [f"if {sha1}({name}.tobytes()).hexdigest() != {digest!r}:",
                           *raising("SignatureMismatch", message(
                               f"{self.name} was generated for {label} with other contents "
                               f"(sha1 {digest[:12]})"), 8)]

    def _reach(self, op: Const) -> ast.expr | None:
        """`model.W`: the expression that reads `op`'s array from an importable
        module, if following `op.origin` from that module gives the very array."""
        if op.origin is None:
            return None
        module_name, path = op.origin
        module = sys.modules.get(module_name)
        if module_name == "__main__" or module is None or not reachable(module, module_name, "") \
                or not isinstance(getattr(module, "__file__", None), str):
            return None
        found, steps = module, []
        try:
            for kind, key in path:
                found = getattr(found, key) if kind == ATTR else found[key]
                steps.append((kind, key, None if kind == ATTR or has_nan(key)
                              else self.spell.literal(key)))
        except Exception:  # noqa: BLE001 - any failure to follow it means no reach
            return None
        if found is not op.value or any(kind != ATTR and spelled is None
                                        for kind, _, spelled in steps):
            return None
        expr = parse_expression(self.spell.imported(module_name))
        for kind, key, spelled in steps:
            if kind != ATTR:
                expr = ast.Subscript(expr, spelled)
            elif is_attribute_name(key):
                expr = ast.Attribute(expr, key)
            else:
                expr = ast.Call(ast.Name("getattr"), [expr, ast.Constant(key)], [])
        return expr
