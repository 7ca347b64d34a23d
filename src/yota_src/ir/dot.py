"""A tape as a Graphviz DOT graph: `Tape.to_dot()` and `yota-src trace --dot`.

People would rather look at a small program's data flow than read its
listing. Arguments, operations and outputs are nodes, edges are data flow;
an operation is labelled with its primitive, its type and the source line it
came from. A gradient tape holds the primal's ops first and the reverse
pass's after them (`Tape.n_forward`): the two sections are drawn as two
clusters, in two shapes and colours, so a reader sees which work the
gradient adds. The text depends only on the tape (nodes are numbered by
position, never by id), so the same tape always gives the same bytes.
"""

from __future__ import annotations

import numpy as np

from yota_src.core.primitives import display_name
from yota_src.ir.tape import Call, Const, Guard, Input, Op, Tape, iter_refs, op_text, operands

# how each kind of node looks: (shape, fill colour)
ARGUMENT = ("ellipse", "#d9ead3")
CONSTANT = ("note", "#eeeeee")
FORWARD = ("box", "#cfe2f3")
BACKWARD = ("box", "#f9cb9c")
GUARD = ("diamond", "#fff2cc")
OUTPUT = ("doubleoctagon", "#d9d2e9")


def to_dot(tape: Tape) -> str:
    """The tape as a DOT document (a `digraph`), ending with a newline."""
    ids = {op: f"n{index + 1}" for index, op in enumerate(tape.ops)}
    backward = set(tape.ops[tape.n_forward:])
    name = tape.signature.function_name if tape.signature is not None else "tape"
    lines = [f"digraph {quote(name)} {{",
             "  rankdir=TB;",
             '  node [fontname="monospace", fontsize=10, style=filled];',
             '  edge [color="#555555"];']
    arguments = [op for op in tape.ops if isinstance(op, Input)]
    if arguments:
        lines.append("  subgraph arguments {")
        lines.append("    rank=source;")
        lines += [f"    {_node(ids[op], _input_label(tape, op), ARGUMENT)}" for op in arguments]
        lines.append("  }")
    sections = [("forward", "forward (primal)", tape.ops[:tape.n_forward], False),
                ("backward", "backward (adjoint)", tape.ops[tape.n_forward:], True)]
    for cluster, title, ops, reverse in sections:
        ops = [op for op in ops if not isinstance(op, Input)]
        if not ops and reverse:
            continue
        lines.append(f"  subgraph cluster_{cluster} {{")
        lines.append(f"    label={quote(title)};")
        lines.append('    style=rounded; color="#999999";')
        for op in ops:
            lines.append(f"    {_node(ids[op], _label(tape, op, ids), _look(op, reverse))}")
        lines.append("  }")
    outputs = _outputs(tape)
    if outputs:
        lines.append("  subgraph outputs {")
        lines.append("    rank=sink;")
        lines += [f"    {_node(f'out{k}', title, OUTPUT)}"
                  for k, (title, _) in enumerate(outputs)]
        lines.append("  }")
    for op in tape.ops:
        for source in _unique(operands(op)):
            style = " [style=dashed]" if op in backward and source not in backward else ""
            lines.append(f"  {ids[source]} -> {ids[op]}{style};")
    for k, (_, op) in enumerate(outputs):
        lines.append(f"  {ids[op]} -> out{k};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def quote(text: str) -> str:
    """`text` as a DOT double-quoted string, shown as it is: backslashes and
    quotes escaped (a backslash would otherwise start a DOT escape such as
    `\\l`), line breaks as DOT's `\\n`, other control characters as spaces."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\r\n", "\n").replace("\n", "\\n")
    text = "".join(" " if ord(char) < 32 or ord(char) == 127 else char for char in text)
    return f'"{text}"'


def _node(node_id: str, label: str, look: tuple[str, str]) -> str:
    shape, colour = look
    return f'{node_id} [label={quote(label)}, shape={shape}, fillcolor="{colour}"];'


def _look(op: Op, reverse: bool) -> tuple[str, str]:
    if isinstance(op, Guard):
        return GUARD
    if isinstance(op, Const):
        return CONSTANT
    return BACKWARD if reverse else FORWARD


def _input_label(tape: Tape, op: Input) -> str:
    return f"{tape.signature.leaf_expression(op.index, op.path)}\n{op.describe_type()}"


def _label(tape: Tape, op: Op, ids: dict) -> str:
    """`h = tanh  float64 (3,)` over `model.py:12  h = np.tanh(...)`."""
    if isinstance(op, Const):
        head = f"const {np.array2string(np.asarray(op.value), threshold=6)}"
    elif isinstance(op, Guard):
        names = {op.value: ids[op.value]}
        head = op_text(op, names)
    else:
        head = _primitive(op, ids)
    named = _name(tape, op)
    if named:
        head = f"{named} = {head}"
    if not isinstance(op, Guard):
        head += f"  {op.describe_type()}"
    if op.loc is None:
        return head
    line = op.loc.line.strip()
    return f"{head}\n{op.loc.short}  {line}" if line else f"{head}\n{op.loc.short}"


def _primitive(op: Call, ids: dict) -> str:
    """The primitive's name; a rolled loop (a program of ops) by its header."""
    listing = getattr(op.fn, "listing", None)
    if callable(listing):
        return "loop: " + listing(ids)[0].rstrip(":")
    return display_name(op.fn)


def _name(tape: Tape, op: Op) -> str | None:
    """The user's name for the value, or `d<name>` for a gradient of a named one."""
    label = tape.label(op)
    if isinstance(label, Op):
        of = tape.label(label)
        if isinstance(of, str):
            return f"d{of}"
        if isinstance(label, Input):
            return f"d{tape.signature.leaf_expression(label.index, label.path)}"
        return None
    return label


def _outputs(tape: Tape) -> list[tuple[str, Op]]:
    """(title, op) for each op the tape returns. A gradient tape returns
    (value, gradient per argument...): they are titled so."""
    output = tape.output
    gradient = tape.n_forward < len(tape.ops) and isinstance(output, tuple)
    if not gradient:
        return [(_path("return", path), op) for path, op in _leaves(output, ())]
    params = tape.signature.params
    found = []
    for position, part in enumerate(output):
        if position == 0:
            root = "return value"
        elif position - 1 < len(params):
            root = f"d{params[position - 1]}"
        else:
            root = f"return [{position}]"
        found += [(_path(root, path), op) for path, op in _leaves(part, ())]
    return found


def _leaves(structure, path: tuple):
    """(path, op) for each op in a nested output, in order."""
    if isinstance(structure, Op):
        yield path, structure
    elif isinstance(structure, (tuple, list)):
        for index, item in enumerate(structure):
            yield from _leaves(item, (*path, index))
    elif isinstance(structure, dict):
        for key, item in structure.items():
            yield from _leaves(item, (*path, key))
    else:
        for op in iter_refs(structure):  # a slice or other holder of ops
            yield path, op


def _path(root: str, path: tuple) -> str:
    return root + "".join(f"[{key!r}]" for key in path)


def _unique(ops) -> list[Op]:
    """The ops in first-seen order, each once (`x * x` draws one edge)."""
    return list(dict.fromkeys(ops))
