"""Naming, the last pass: the name each value of the final tape is given.

One place decides every name, from the tape's labels and sections: the
user's names for the values they named (`h`, `h_2` for a reassignment),
`d<name>` for the complete gradient of a named value, and only in the
reverse section, so a primal value never reads as a gradient; `out` and
`d<parameter>` for what is returned; where the user gave no name, a short one
from what computes the value when that says more than `t<N>` (`exp_s` for
`np.exp(s)`, `x0` for `x[0]`). Codegen asks for a base name and makes it
unique (`fresh`); values it folds into their reader's line need none.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from yota_src.core import primitives
from yota_src.core.values import ITEM, path_name
from yota_src.ir.tape import Call, Op, Tape

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
