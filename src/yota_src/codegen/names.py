"""Names in the generated module: what each value is called, the variable
each value is read by, and which values get none.

One place decides every base name (`Naming`), from the final tape's labels
and sections: the user's names for the values they named (`h`, `h_2` for a
reassignment), `d<name>` for the complete gradient of a named value, and
only in the reverse section, so a primal value never reads as a gradient;
`out` and `d<parameter>` for what is returned; where the user gave no name,
a short one from what computes the value when that says more than `t<N>`
(`exp_s` for `np.exp(s)`, `x0` for `x[0]`), else `t<line>` for the source
line that made it, numbered within the line. `Names` makes each base unique
(`fresh`): every identifier the module takes (variables, imports,
module-level constants) is taken once. A temporary used once on the same
source line gets no name: it is folded back into the expression that uses
it, so a forward line reads like the line the user wrote.
"""

from __future__ import annotations

import ast
import builtins
import collections
import keyword
import operator
import re
import unicodedata
from collections.abc import Iterable

import numpy as np

from yota_src.codegen import loop_code
from yota_src.core import primitives
from yota_src.core.values import ITEM, path_name
from yota_src.ir.branches import is_branch
from yota_src.ir.loops import is_loop
from yota_src.ir.tape import Call, Op, Tape, operands, readers

INLINE_LIMIT = 64  # longest expression a temporary is folded into, in characters
# the kinds of derivative module, and the prefix of their function's name
PREFIXES = {"gradient": "grad", "vjp": "vjp", "hvp": "hvp", "jvp": "jvp"}
# names the code reads without taking them: modules, and the errors it raises
RESERVED = frozenset({"np", "math", "SignatureMismatch", "ControlFlowChanged"})


# what a primal value computed from one named value is called: `exp_s`
_DESCRIBED = {np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.tanh: "tanh", np.sin: "sin",
              np.cos: "cos", np.sum: "sum", np.mean: "mean", np.max: "max", np.amax: "max",
              np.min: "min", np.amin: "min", np.abs: "abs", np.absolute: "abs",
              np.square: "sq", np.log1p: "log1p", np.expm1: "expm1", np.std: "std",
              np.var: "var", np.linalg.norm: "norm", len: "n"}
_SHORT = 8  # longest operand name a described name is made from
_TEMPORARY = re.compile(r"t\d+(_\d+)?$")


class Naming:
    def __init__(self, tape: Tape, kind: str, params: list[str], users: dict,
                 body_labels: dict | None = None, backward: set | None = None,
                 body_ops: list | None = None):
        self.tape = tape
        body_ops = body_ops or []  # the ops of rolled loops' bodies
        # the labels of rolled loops' body values, and the reverse section with the
        # bodies of its loops
        self.body_labels = body_labels or {}
        self.backward = backward if backward is not None else set(tape.ops[tape.n_forward:])
        self.in_place = _in_place_buffers(tape.ops + body_ops, users)
        self.output_names = _output_names(tape, kind, params)
        # the user's own names: a made-up name equal to one would read as its reassignment
        self.user_names = set(params) | {label for label in tape.labels.values()
                                         if isinstance(label, str)} \
            | {op.hint for op in tape.ops if op.hint is not None}

    def base(self, op: Op, names: dict[Op, str]) -> str | None:
        """The user's, the output's or the gradient's name for `op`, if it has
        one (`names`: those given so far)."""
        while True:  # along a chain of in-place writes (one per element, thousands long)
            if op in self.output_names:
                return self.output_names[op]
            label = self.body_labels.get(op) or self.tape.label(op)
            if isinstance(label, str):
                return label
            if label is not None and label in names and op in self.backward:
                return f"d{names[label]}"
            if op not in self.in_place:
                return None
            op = self.in_place[op]

    def described(self, op: Op, names: dict[Op, str]) -> str | None:
        """A short name from what computes a primal value (`exp_s`, `x0`), or
        None where the user has a value of that name."""
        name = self._described(op, names)
        return None if name in self.user_names else name

    def _described(self, op: Op, names: dict[Op, str]) -> str | None:
        if not isinstance(op, Call) or op in self.backward or not op.args \
                or not isinstance(op.args[0], Op):
            return None
        operand = names.get(op.args[0])
        if operand is None or len(operand) > _SHORT or _TEMPORARY.match(operand):
            return None
        if op.fn is operator.getitem and len(op.args) == 2 and _small_index(op.args[1]):
            index = op.args[1] if isinstance(op.args[1], tuple) else (op.args[1],)
            joined = "_".join(str(i) for i in index)
            return f"{operand}{joined}" if not operand[-1].isdigit() and len(index) == 1 \
                else f"{operand}_{joined}"
        if op.fn is operator.pow and len(op.args) == 2 and op.args[1] == 2 \
                and not isinstance(op.args[1], (Op, bool)):
            return f"sq_{operand}"
        prefix = _DESCRIBED.get(op.fn) if len(op.args) == 1 else None
        return f"{prefix}_{operand}" if prefix else None


def _small_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(type(i) is int and 0 <= i < 100 for i in items) and len(items) <= 2


def _output_names(tape: Tape, kind: str, params: list[str]) -> dict[Op, str]:
    """`out` for the value (unless the user named it), `d<param>` for gradients."""
    names = {}
    output = tape.output
    backward = set(tape.ops[tape.n_forward:])
    named = lambda op: isinstance(tape.label(op), str)  # noqa: E731
    user_names = {tape.label(op) for op in tape.ops if named(op)}
    result = next(n for n in ("out", "result", "value", "out_value") if n not in user_names)
    value = output if kind == "forward" else output[0]
    if kind == "gradient" and isinstance(value, tuple):  # (loss, aux): has_aux
        value, aux = value
        if isinstance(aux, Op) and not named(aux) and aux is not value:
            names[aux] = "aux" if "aux" not in user_names else "aux_value"
    if isinstance(value, Op) and not named(value):
        names[value] = result
    if kind == "forward":
        return names
    if kind in ("hvp", "jvp"):  # transforms.py: the one result, named for what it is
        if isinstance(output[1], Call) and not named(output[1]) and output[1] in backward:
            names[output[1]] = kind
        return names
    for index, grad in enumerate(output[1:]):
        param = params[index]
        pairs = grad.items() if isinstance(grad, dict) else [((), grad)]
        for path, op in pairs:  # a primal value returned as a gradient keeps its name
            if isinstance(op, Call) and not named(op) and op not in names and op in backward:
                names[op] = "d" + path_name(param, tuple((ITEM, key) for key in path))
    return names


def _in_place_buffers(ops: list, users: dict) -> dict[Op, Op]:
    """Fresh buffers written in place by their only user, an index store: the
    buffer and each write are one variable."""
    buffers, written = {}, set()
    for op in ops:
        if isinstance(op, Call) and op.fn in primitives.INDEX_STORES:
            buffer = op.args[0]
            fresh = isinstance(buffer, Call) and (primitives.returns_new_array(buffer.fn)
                                                  or buffer in written)
            if fresh and len(users.get(buffer, ())) == 1:
                buffers[buffer] = op
                written.add(op)
    return buffers


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
        self.inlined: dict[Op, ast.expr] = {}
        self.preset: dict[Op, str] = {}  # a body value's name, set by its loop
        self.pinned: set[Op] = set()  # body values written where they stand, never folded
        self.users = readers(tape.ops, tape.output)
        self.overwritten = {op.kwargs["out"] for op in tape.ops  # passes/in_place.py
                            if isinstance(op, Call) and isinstance(op.kwargs.get("out"), Op)}
        self.overwritten |= _in_shared_work_arrays(tape.ops)
        self.backward = set(tape.ops[tape.n_forward:])
        calls = loop_code.nested_calls(tape)
        loops = [call for call in calls if is_loop(call)]
        body_labels = {}
        for call in calls:
            if is_loop(call):
                self.users.update(loop_code.body_readers(call.fn))
            else:  # a capture is read outside and in the arms
                for op, readers_of in loop_code.arm_readers(call).items():
                    self.users.setdefault(op, []).extend(readers_of)
            if is_loop(call):
                body_labels.update(call.fn.labels)
            else:
                for arm in call.fn.arms.values():
                    body_labels.update(arm.labels if arm is not None else {})
            if call in self.backward:
                self.backward.update(loop_code.inner_ops(call)
                                     + (list(call.fn.params) if is_loop(call) else []))
        self.loop_reads = {op for call in loops for op in call.fn.ops  # `xs[t]`, `t + 1`
                           if op.loc is None and isinstance(op, Call)}
        self.naming = Naming(tape, kind, tape.signature.params, self.users, body_labels,
                             self.backward, [op for call in loops for op in call.fn.ops])

    def base(self, op: Op) -> str | None:
        """The name `Naming` gives `op`, if any."""
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

    def temp(self, op: Op) -> str:
        """The base name of a temporary nothing else names: `t26` for one made
        on source line 26 (`fresh` numbers the line's others `t26_2`, ...), so
        an edit of one line renames no temporary of another and a diff of
        the module shows that line's code alone; `t0` where no line made it."""
        return f"t{op.loc.lineno}" if op.loc is not None else "t0"

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
        if isinstance(op, Call) and op.fn is primitives.dimension and all(
                isinstance(node, _SIZE_NODES) for node in ast.walk(expr)):
            return True  # `K`, `N - 1`: names of sizes, bound once, read where needed
        if isinstance(op, Call) and any(each in self.overwritten for each in operands(op)):
            return False  # it must read its operand before an update in place
        return ((self.base(op) is None or op in self.loop_reads) and len(users) == 1
                and not is_loop(users[0]) and not _captured_by(users[0], op)
                and op not in self.preset
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


def _captured_by(user, op: Op) -> bool:
    """Whether a branch's arms read `op` (by a name: never an expression pasted in)."""
    return is_branch(user) and op in user.fn.captured(user)


_SIZE_NODES = (ast.Name, ast.Constant, ast.BinOp, ast.operator, ast.expr_context)


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
