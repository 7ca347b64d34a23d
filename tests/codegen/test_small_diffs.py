"""A one-line edit of a model changes only the generated lines of that source
line, forward and backward (issue 27, item 8): a temporary is named after the
line that made it (`t26`, `t26_2`), never numbered across the module, so a
review diff shows the edit and nothing else. The one exception is the
backward of a line the edited one reads: the gradient it receives from the
edited line may change form (a negation the simplifier cancels with its own,
a sum now named `dz`)."""

import difflib
import importlib.util
import re

import numpy as np
import pytest

import yota_src as ys

MODEL = """\
import numpy as np


def loss(W1, b1, W2, x, y):
    h = np.tanh(W1 @ x + b1[:, None])
    z = np.exp(-(W2 @ h))
    p = 1.0 / (1.0 + z)
    e = np.sum(p, axis=0, keepdims=True)
    r = np.log(e + 1.0) * np.sqrt(np.abs(h[0]) + 1.0)
    return np.mean((p - y) ** 2) + 0.1 * np.sum(np.abs(W1) ** 1.5) + np.mean(r)
"""

READS = {5: (), 6: (5,), 7: (6,), 8: (7,), 9: (8, 5), 10: (7, 9)}  # lines whose values it reads
EDITS = {  # line number -> (old, new) on that line
    5: ("np.tanh(W1 @ x + b1[:, None])", "np.sin(W1 @ x + b1[:, None])"),
    7: ("1.0 / (1.0 + z)", "2.0 / (1.0 + z * z)"),
    9: ("np.log(e + 1.0)", "np.log(e * e + 2.0)"),
    10: ("0.1 * np.sum(np.abs(W1) ** 1.5)", "0.2 * np.sum(np.abs(W1) ** 2.5)"),
}


def module_for(tmp_path, text: str, name: str) -> str:
    path = tmp_path / "model.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((2, 4)),
            rng.standard_normal((3, 5)), rng.standard_normal((2, 5)))
    return ys.simplegrad(model.loss, *args).source


def lines_of_source_line(module: str) -> list[tuple | None]:
    """For each line of the module, the model's line its block is under
    (`# model.py:7 ...` comments head the blocks) and whether the block is
    backward; None elsewhere."""
    owner, current, backward = [], None, False
    for line in module.splitlines():
        heading = re.match(r"\s*# model\.py:(\d+)  ", line)
        if heading:
            current = int(heading.group(1))
        elif line.strip() == "# backward":
            current, backward = None, True
        elif not line.startswith(" ") or re.match(r"\s*return ", line):
            current = None  # the module's top level (the docstring, the helpers), the return
        owner.append((current, backward) if current is not None else None)
    return owner


@pytest.mark.parametrize("number", sorted(EDITS))
def test_a_one_line_edit_changes_only_that_lines_code(tmp_path, number):
    old, new = EDITS[number]
    edited = MODEL.splitlines(keepends=True)
    assert old in edited[number - 1]
    edited[number - 1] = edited[number - 1].replace(old, new)
    before = module_for(tmp_path, MODEL, f"model_before_{number}")
    after = module_for(tmp_path, "".join(edited), f"model_after_{number}")
    a, b = before.splitlines(), after.splitlines()
    owners_a, owners_b = lines_of_source_line(before), lines_of_source_line(after)
    changed = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag != "equal":
            changed += [(owners_a[i], a[i]) for i in range(i1, i2)]
            changed += [(owners_b[j], b[j]) for j in range(j1, j2)]
    allowed = {(number, False), (number, True)} | {(line, True) for line in READS[number]}
    elsewhere = [line for owner, line in changed if owner not in allowed
                 and not line.startswith('"""Gradient of ')]
    assert changed and elsewhere == [], "\n".join(elsewhere)
