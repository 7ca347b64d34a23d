"""Names in the generated module: the variable each value is read by, and
which values get none.

Names follow the user's (`h`, `h_2`), gradients are `d<name>` (the naming
pass, passes/naming.py, decides the bases), and every identifier the module
takes (variables, imports, module-level constants) is taken once. A
temporary used once on the same source line gets no name: it is folded back
into the expression that uses it, so a forward line reads like the line the
user wrote.
"""

from __future__ import annotations

import ast
import builtins
import collections
import keyword
import re
import unicodedata
from collections.abc import Iterable

from yota_src.codegen import loop_code
from yota_src.core import primitives
from yota_src.ir.loops import is_loop
from yota_src.ir.tape import Call, Op, Tape, operands, readers
from yota_src.passes.naming import Naming

INLINE_LIMIT = 64  # longest expression a temporary is folded into, in characters
# the kinds of derivative module, and the prefix of their function's name
PREFIXES = {"gradient": "grad", "vjp": "vjp", "hvp": "hvp", "jvp": "jvp"}
# names the code reads without taking them: modules, and the errors it raises
RESERVED = frozenset({"np", "math", "SignatureMismatch", "ControlFlowChanged"})


def function_name(tape: Tape, kind: str) -> str:
    """`grad_loss` for loss; a lambda (named `<lambda>`) gives `grad_lambda`.
    A forward module's function keeps the primal's name unless the module
    needs that name for something else (`sum_` for a primal called `sum`)."""
    name = tape.signature.function_name
    if not is_identifier(name):
        name = identifier(re.sub(r"\W", "", name)) or "function"
    if kind in PREFIXES:
        return f"{PREFIXES[kind]}_{name}"
    if not name.isidentifier():  # it starts with a digit
        return f"f_{name}"
    reserved = keyword.iskeyword(name) or name in RESERVED or hasattr(builtins, name)
    return f"{name}_" if reserved else name


def is_identifier(text: str) -> bool:
    """Whether `text` is an identifier that Python reads as itself (not
    folded into another by NFKC normalisation)."""
    return text.isidentifier() and unicodedata.normalize("NFKC", text) == text


def identifier(text: str) -> str:
    """`text` with every character an identifier cannot continue with (and
    each run of non-word characters) replaced by `_`."""
    text = re.sub(r"\W+", "_", unicodedata.normalize("NFKC", text))
    return "".join(char if ("_" + char).isidentifier() else "_" for char in text)


class Names(dict):
    """The name each value of the tape is read by (this mapping: value ->
    variable), the expressions folded in place of those that have none, and
    every identifier the module has taken."""

    def __init__(self, tape: Tape, kind: str, taken: Iterable[str]):
        super().__init__()
        self.taken = set(taken)
        self.suffixes: dict[str, int] = {}  # base name -> the last suffix `fresh` gave it
        self.temps = 0
        self.inlined: dict[Op, ast.expr] = {}
        self.preset: dict[Op, str] = {}  # a body value's name, set by its loop
        self.pinned: set[Op] = set()  # body values written where they stand, never folded
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
        self.naming = Naming(tape, kind, tape.signature.params, self.users, body_labels,
                             self.backward, [op for call in loops for op in call.fn.ops])

    def base(self, op: Op) -> str | None:
        """The name the naming pass gives `op`, if any."""
        return self.naming.base(op, self)

    def described(self, op: Op) -> str | None:
        """A name saying what `op` computes from a named operand, if any."""
        return self.naming.described(op, self)

    def fresh(self, base: str) -> str:
        """An unused identifier from `base` (`dd_(1, 'a')` -> `dd_1_a`): the
        base itself, else the first free of `base_2`, `base_3`, ... Names are
        never given back, so the search goes on from the last suffix given:
        `h_10000` costs no more than `h_2`."""
        base = identifier(base).strip("_") or "v"
        base = base if base.isidentifier() and not keyword.iskeyword(base) else f"v_{base}"
        return self.unused(base)

    def unused(self, base: str) -> str:
        """`base` (an identifier, kept as it is: `_other_path`) or the first
        free of `base_2`, `base_3`, ..., taken."""
        n = self.suffixes.get(base, 1)
        name = base if n == 1 else f"{base}_{n}"
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.suffixes[base] = n
        self.taken.add(name)
        return name

    def temp(self) -> str:
        """`t1`, `t2`, ...: the name of a temporary nothing else names."""
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
        return ((self.base(op) is None or op in self.loop_reads) and len(users) == 1
                and not is_loop(users[0]) and op not in self.preset
                and op not in self.pinned
                and not (isinstance(op, Call) and primitives.has_effect(op.fn))
                and users[0] is not None and (self.group(users[0]) == self.group(op)
                                              or op in self.loop_reads)
                and not (isinstance(users[0], Call) and users[0].fn in primitives.INDEX_STORES
                         and users[0].args[0] is op)
                and len(ast.unparse(expr)) <= INLINE_LIMIT)

    def ref(self, op: Op) -> ast.expr:
        """What code reads `op` by: its variable, or the expression folded in its place."""
        if op in self.inlined:
            return self.inlined[op]
        return ast.Name(self[op])


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
