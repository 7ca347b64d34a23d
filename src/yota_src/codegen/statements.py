"""Statements: the function's body, op by op.

Each source line's statements stand under a comment naming it; ops the
primal computed inside `with np.errstate(...)`, `with
warnings.catch_warnings()` or a `try` body are written inside the same
blocks; a loop op is written as a loop (loop_code.py); a value computed
into a dead operand's buffer is written in place; the return statement
gives what the kind of module returns.
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from yota_src.codegen import branch_code, loop_code
from yota_src.codegen.guards import Guards
from yota_src.codegen.layout import comment, raising
from yota_src.codegen.loader import InProcessOnly
from yota_src.codegen.module_level import ModuleLevel
from yota_src.codegen.names import Names
from yota_src.codegen.outside_reads import LITERAL_LIMIT, OutsideReads
from yota_src.codegen.spelling import CodegenError, Speller
from yota_src.codegen.work_arrays import WorkArrays
from yota_src.core import primitives
from yota_src.core.values import Rows, path_name, user_path
from yota_src.ir import contexts
from yota_src.ir.branches import is_branch
from yota_src.ir.loops import is_loop, is_loop_output
from yota_src.ir.tape import Call, Const, Guard, Input, Op, Tape

_AUGMENTED = {np.add: "+", np.subtract: "-", np.multiply: "*", np.divide: "/"}


class StatementWriter:
    """Writes the body's statements, naming the values as it goes."""

    def __init__(self, tape: Tape, kind: str, function: str, params: list[str], names: Names,
                 spell: Speller, guards: Guards, outside: OutsideReads, work: WorkArrays,
                 module_level: ModuleLevel):
        self.tape, self.kind, self.sig = tape, kind, tape.signature
        self.name, self.params = function, params
        self.names, self.spell, self.guards, self.outside = names, spell, guards, outside
        self.work, self.module_level = work, module_level
        self.assignments: set[Op] = set()
        self.augmented: set[Op] = set()  # a loop's updates of its own arrays, in place
        self.counters: list[str] = []  # the names loop counters take, by depth, once named
        self.open_loops: list = []  # the loops whose body is being written
        self.open_branches: list = []  # the branches whose arms are being written
        self.outputs: dict[Call, list[str]] = {}  # a loop's outputs: the variables it sets
        self.writes_in_place = set(names.naming.in_place.values())
        self.unpacked: set[Op] = set()  # elements named by `a, b, c = x.tolist()`

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
            here = self.names.group(op)
            if op.loc is not None and here != group:
                lines.append(indent + self.source_comment(op))
            group = None if is_loop(op) else here  # after a loop: say the line
            lines += [indent + line for line in statements]
        lines += self.close_blocks(blocks, 0)
        lines += self.return_statements()
        return lines

    def open_block(self, entry) -> list[str]:
        """The lines that open a block the primal ran ops inside: `with
        np.errstate(...)`, `with warnings.catch_warnings()` and its filters,
        or `try`."""
        kind, *rest = entry
        if kind == contexts.ERRSTATE:
            arguments = ", ".join(f"{name}={value!r}" for name, value in rest[0])
            return [f"with np.errstate({arguments}):"]
        if kind == contexts.WARNINGS:
            module = self.spell.imported("warnings")
            calls = [ast.unparse(ast.Call(ast.parse(f"{module}.{function.__name__}",
                                                    mode="eval").body,
                                          [self.spell.literal(a) for a in args],
                                          self.spell.keywords(dict(kwargs))))
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
                types = ast.unparse(ast.Tuple([self.spell.literal(kind) for kind in caught]))
                self.module_level.errors.add("ControlFlowChanged")
                message = (f"{self.name} was generated for data on which the `try` at {where} "
                           "raised nothing; this call raises, so the unrolled code does not "
                           "apply")
                indent = "    " * len(blocks)
                lines += [indent + f"except {types} as error:"]
                lines += [indent + line for line in raising(
                    "ControlFlowChanged", (message,), 8 + len(indent), " from error")]
        return lines

    def statements(self, op: Op) -> list[str]:
        """The lines that compute `op` (none for a value folded into its
        reader or bound at module level), naming it as they go."""
        if isinstance(op, Input):
            if (op.index, op.path) in self.guards.stacked:  # a list, stacked by its guard
                self.names[op] = self.guards.stacked[(op.index, op.path)]
                return []
            if not op.path:
                self.names[op] = self.params[op.index]
                return []
            self.names[op] = self.names.fresh(path_name(self.sig.params[op.index], op.path))
            return [f"{self.names[op]} = {ast.unparse(self.spell.path(op.index, op.path))}"]
        if isinstance(op, Guard):
            return self.guards.guard(op)
        if isinstance(op, Const) and isinstance(op.value, primitives.GENERATORS):
            name = self.names[op] = self.names.fresh(op.hint or "generator")
            self.module_level.identities.append(
                f"{name} = None  # the random generator {op.hint}, drawn from")
            self.module_level.live[name] = InProcessOnly(
                op.value, f"the random generator {op.hint} of this process (pass the generator "
                          "in as an argument to save a module that draws from it)")
            return []
        if isinstance(op, Const) and op.hint is not None:  # a global or closure array
            self.names[op] = name = self.names.fresh(op.hint)
            if np.size(op.value) > LITERAL_LIMIT:
                self.outside.read(op, name)
                return []
            spelled = ast.unparse(self.spell.literal(op.value))
            self.module_level.constants.append(f"{name} = {spelled}")
            self.module_level.live[name] = op.value
            return []
        if isinstance(op, Call) and op.fn in primitives.INDEX_STORES:
            return self.index_store(op)
        if isinstance(op, Call) and op.fn is primitives.store_in_argument:
            index, path, value = op.args  # `bn_param['running_mean'] = running_mean`
            return [f"{ast.unparse(self.spell.path(index, path))} = "
                    f"{ast.unparse(self.spell.literal(value))}"]
        if is_loop(op):
            return loop_code.loop_statements(self, op)
        if is_branch(op):
            return branch_code.branch_statements(self, op)
        if is_loop_output(op) or branch_code.is_branch_output(op):  # a variable it sets
            self.names[op] = self.outputs[op.args[0]][op.args[1]]
            return []
        if isinstance(op, Call) and op.fn is primitives.stop_gradient:  # the value itself
            self.names.inlined[op] = self.spell.literal(op.args[0])
            return []
        if isinstance(op, Call) and op.fn is primitives.work_array:
            self.names.inlined[op] = self.work.slot(op)
            return []
        if isinstance(op, Call) and isinstance(op.kwargs.get("out"), Op):
            return self.in_place_statement(op)
        if op in self.unpacked:  # named where its list was unpacked
            return []
        if isinstance(op, Call) and op.fn is primitives.tolist and self.unpackable(op):
            return self.unpack(op)
        expr = self.spell.expression(op)
        if isinstance(op, Call) and op not in self.names.users:  # kept for its effect: a print
            return [ast.unparse(ast.Expr(expr))]
        if self.names.should_inline(op, expr):
            self.names.inlined[op] = expr
            return []
        if op in self.augmented:  # a loop's accumulator: `dW += g`
            self.names[op] = self.names.preset.pop(op)
            return [f"{self.names[op]} += {ast.unparse(self.spell.literal(op.args[1]))}"]
        if op in self.names.preset:
            self.names[op] = self.names.preset.pop(op)
        else:
            base = self.names.base(op) or loop_code.initial_name(self, op) \
                or self.names.described(op) or self.names.temp(op)
            self.names[op] = self.names.fresh(base)
        self.assignments.add(op)
        return [f"{self.names[op]} = {ast.unparse(expr)}"]

    def unpackable(self, op: Call) -> bool:
        """`x.tolist()` of a vector read only by its elements, one op each."""
        readers = self.names.users.get(op, ())
        positions = [reader.args[1] for reader in readers if isinstance(reader, Call)
                     and reader.fn is operator.getitem and type(reader.args[1]) is int]
        length = op.shape[0] if op.shape and len(op.shape) == 1 else None
        return type(length) is int and len(positions) == len(readers) \
            and len({p % length for p in positions}) == len(positions)

    def unpack(self, op: Call) -> list[str]:
        """`a, b, _, c = x.tolist()`: each element read is named at once."""
        targets = ["_"] * op.shape[0]
        for reader in sorted(self.names.users[op], key=lambda each: each.args[1] % len(targets)):
            base = self.names.base(reader) or self.names.described(reader) \
                or self.names.temp(reader)
            self.names[reader] = targets[reader.args[1] % len(targets)] = self.names.fresh(base)
            self.unpacked.add(reader)
            self.assignments.add(reader)
        return [f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = "
                f"{ast.unparse(self.spell.expression(op))}"]

    def in_place_statement(self, op: Call) -> list[str]:
        """A result written into a dead operand's buffer (passes/in_place.py):
        `t3 /= t2`, or `np.exp(t5, out=t5)`; a value with a name of its own
        is assigned it, `dx = np.multiply(t3, t1, out=t3)`."""
        if op.kwargs["out"] in self.names.inlined:  # a work array: `np.add(1, t1, out=work[0])`
            self.names[op] = self.names.fresh(self.names.base(op) or self.names.described(op)
                                              or self.names.temp(op))
            self.assignments.add(op)
            return [f"{self.names[op]} = {ast.unparse(self.spell.expression(op))}"]
        buffer = self.names[op.kwargs["out"]]
        rest = [ast.unparse(self.spell.literal(arg)) for arg in op.args[1:]]
        name = self.names.base(op)
        if name is None:
            self.names[op] = buffer
            if op.fn in _AUGMENTED and op.args[0] is op.kwargs["out"]:
                return [f"{buffer} {_AUGMENTED[op.fn]}= {rest[0]}"]
            return [ast.unparse(self.spell.expression(op))]
        self.names[op] = self.names.fresh(name)
        self.assignments.add(op)
        return [f"{self.names[op]} = {ast.unparse(self.spell.expression(op))}"]

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
            here = self.names.group(op)
            on_header = header is not None and op.loc is not None and (
                op.loc.filename, op.loc.lineno) == (header.filename, header.lineno)
            if op.loc is not None and here != group and not on_header:
                lines.append(self.source_comment(op))
            group = here if op.loc is not None else group  # `t + 3` made for the loop: no line
            lines += statements
        return lines

    def source_comment(self, op: Op) -> str:
        """`# file.py:12  the line`, above the statements of a source line."""
        return f"# {comment(f'{op.loc.short}  {op.loc.line.strip()}')}"

    def index_store(self, op: Call) -> list[str]:
        """`buf[i] = v`, `buf[i] += v` or `np.add.at(buf, i, v)`, on a copy unless
        the buffer is fresh and this is its only use."""
        buffer, index, values = op.args
        lines = []
        if op in self.writes_in_place or op in self.augmented:
            name = self.names[buffer]
            self.names.preset.pop(op, None)
        else:
            name = self.names.fresh(self.names.base(op) or self.names.temp(op))
            lines.append(f"{name} = {ast.unparse(self.names.ref(buffer))}.copy()")
        self.names[op] = name
        target, values_expr = ast.Name(name), self.spell.literal(values)
        if op.fn is primitives.index_update:
            store = ast.unparse(ast.Subscript(target, self.spell.index(index)))
            return lines + [f"{store} = {ast.unparse(values_expr)}"]
        if primitives.is_basic_index(index):
            statement = ast.AugAssign(ast.Subscript(target, self.spell.index(index)), ast.Add(),
                                      values_expr)
        else:
            statement = ast.Expr(ast.Call(self.spell.function(np.add.at),
                                          [target, self.spell.literal(index), values_expr], []))
        return lines + [ast.unparse(statement)]

    def _gradient_dict(self, grad: dict, stacked: set) -> ast.expr:
        """`{("W",): dW, ("b",): db}`; a list stacked as one array (values.Rows)
        gives a gradient per row: `{(i,): row for i, row in enumerate(dxs)}`."""
        keys, values = [], []
        for path, value in grad.items():
            spelled = self.spell.literal(value)
            if path not in stacked:
                keys.append(self.spell.literal(path))
                values.append(spelled)
                continue
            key = ast.Tuple([*(self.spell.literal(key) for key in path), ast.Name("i")])
            rows = ast.DictComp(key, ast.Name("row"), [ast.comprehension(
                ast.Tuple([ast.Name("i"), ast.Name("row")]),
                ast.Call(ast.Name("enumerate"), [spelled], []), [], 0)])
            if len(grad) == 1:
                return rows
            keys.append(None)
            values.append(rows)
        return ast.Dict(keys, values)

    def return_statements(self) -> list[str]:
        """What the kind of module returns: the value (forward), the product
        (hvp), both (jvp), or the value and each argument's gradient, the
        call's work arrays given back first."""
        output = self.tape.output
        if self.kind == "forward":
            return [f"return {ast.unparse(self.spell.literal(output))}"]
        if self.kind == "hvp":
            return [f"return {ast.unparse(self.spell.literal(output[1]))}"]
        if self.kind == "jvp":
            return [f"return {ast.unparse(self.spell.literal(output[0]))}, "
                    f"{ast.unparse(self.spell.literal(output[1]))}"]
        lines = self.work.giving_back()
        parts = [ast.unparse(self.spell.literal(output[0]))]
        for index, grad in enumerate(output[1:]):
            if isinstance(grad, dict):
                stacked = {user_path(leaf.path) for leaf in self.sig.leaves[index]
                           if leaf.type is Rows}
                value = self._gradient_dict(grad, stacked)
                alone = [grad[()]] if list(grad) == [()] and () in stacked else []
                name = self.names.get(alone[0]) if alone else None  # `dxs = {... in dxs}`
                if name is None or not name.isidentifier():
                    name = self.names.fresh(f"d{self.sig.params[index]}")
                lines.append(f"{name} = {ast.unparse(value)}")
                parts.append(name)
            else:
                parts.append(ast.unparse(self.spell.literal(grad)))
        return lines + [f"return {', '.join(parts)}"]
