"""What a reviewer checks on reading a generated gradient, checked on every
golden file and on random programs: no forward value named like a gradient,
no multiplication by a constant-filled array, no line over 100 columns, each
source-line comment quoting that line, no dead assignment, no guard message
repeated in full, and the same bytes under any PYTHONHASHSEED."""

import ast
import linecache
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import TESTS
from golden_files import GOLDEN_FILES, golden_sources
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from program_strategy import arguments, load_program, programs

import yota_src as ys

FILLS = ("ones", "full", "zeros", "ones_like", "full_like")


def reviewer_faults(source: str) -> list[str]:
    """Every property the source breaks, as a sentence naming the line."""
    faults = []
    for number, line in enumerate(source.splitlines(), 1):
        if len(line) > 100:
            faults.append(f"line {number} has {len(line)} columns")
    tree = ast.parse(source)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef)
                    and node.name.startswith("grad_"))
    faults += _gradient_named_forward_values(source, function)
    faults += _products_with_fills(_sections(source, function)[1])
    faults += _dead_assignments(function)
    faults += _repeated_messages(tree)
    faults += _comments_off_their_lines(source)
    return faults


def _sections(source: str, function: ast.FunctionDef) -> tuple[list, list]:
    """The function's statements before and after the `# backward` comment."""
    lines = source.splitlines()
    marker = next((i + 1 for i, line in enumerate(lines) if line.strip() == "# backward"),
                  len(lines) + 1)
    forward = [s for s in ast.walk(function) if isinstance(s, ast.stmt) and s.lineno < marker]
    backward = [s for s in ast.walk(function) if isinstance(s, ast.stmt) and s.lineno > marker]
    return forward, backward


def _assigned(statements) -> list[str]:
    return [target.id for statement in statements if isinstance(statement, ast.Assign)
            for target in statement.targets if isinstance(target, ast.Name)]


def _gradient_named_forward_values(source, function) -> list[str]:
    forward, backward = _sections(source, function)
    names = set(_assigned(forward)) | set(_assigned(backward)) \
        | {arg.arg for arg in function.args.args}
    return [f"the forward value {name} is named like the gradient of {name[1:]}"
            for name in _assigned(forward) if name.startswith("d") and name[1:] in names]


def _products_with_fills(backward: list) -> list[str]:
    """In the reverse pass (the user's own code may multiply by np.ones)."""
    filled = set()
    for statement in backward:
        if isinstance(statement, ast.Assign) and _is_fill(statement.value):
            filled.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    for node in (node for statement in backward for node in ast.walk(statement)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name):
            filled.discard(node.value.id)  # written into (`dseq[0] += ...`): no longer a fill
    faults = []
    for node in (node for statement in backward for node in ast.walk(statement)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.MatMult, ast.Div)):
            for side in (node.left, node.right):
                if _is_fill(side) or (isinstance(side, ast.Name) and side.id in filled):
                    faults.append(f"line {node.lineno} multiplies by a constant-filled array: "
                                  f"{ast.unparse(node)}")
    return faults


def _is_fill(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in FILLS and isinstance(node.func.value, ast.Name) \
        and node.func.value.id == "np" or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "broadcast_to" and isinstance(node.args[0], ast.Constant))


def _dead_assignments(function) -> list[str]:
    read = {node.id for node in ast.walk(function)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return [f"{name} is assigned and never read" for name in _assigned(ast.walk(function))
            if name not in read]


def _repeated_messages(tree) -> list[str]:
    texts = [node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and len(node.value) > 60]
    return [f"the message {text[:40]!r}... is written {texts.count(text)} times"
            for text in sorted(set(texts)) if texts.count(text) > 1]


def _comments_off_their_lines(source: str) -> list[str]:
    """Each `# file.py:N  text` comment quotes line N of that file."""
    faults = []
    for match in re.finditer(r"^ *# (\S+\.py):(\d+)  (.*)$", source, re.MULTILINE):
        name, number, text = match.group(1), int(match.group(2)), match.group(3)
        path = next((p for p in (*TESTS.rglob(name), TESTS.parent / "examples" / name)
                     if p.exists()), None)
        if path is None:
            continue
        actual = linecache.getline(str(path), number).strip()
        quoted = text[:-3] if text.endswith("...") else text
        if not actual.startswith(quoted):
            faults.append(f"the comment for {name}:{number} quotes {text!r}, not {actual!r}")
    return faults


@pytest.fixture(scope="module")
def sources():
    return golden_sources()


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_golden_file_reads_as_a_reviewer_wants(name, sources):
    assert reviewer_faults(sources[name]) == []


def test_the_property_checks_can_fail():
    bad = '''
def grad_f(x):
    # test_reviewer_properties.py:1  nothing
    t1 = x + 2
    dt1 = x * t1
    unused = x + 1
    t2 = np.ones((3,)) * x
    if x > 0:
        raise ValueError("a long message that is long enough to count as repeated text here")
    if x > 1:
        raise ValueError("a long message that is long enough to count as repeated text here")
    # backward
    t3 = np.ones((3,))
    dx = t3 * dt1 + np.full((3,), 2.0) @ x
    return t2, dx, ''' + "0" * 100 + "\n"
    faults = "\n".join(reviewer_faults(bad))
    for expected in ("columns", "named like the gradient of t1", "t3 * dt1", "@ x",
                     "unused is assigned and never read", "written 2 times", "quotes 'nothing'"):
        assert expected in faults
    assert "dt1 is assigned" not in faults


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(), seed=st.integers(0, 2**16))
@pytest.mark.slow
def test_random_programs_read_as_a_reviewer_wants(program, seed):
    source, shapes = program
    module = load_program(source)
    source = ys.simplegrad(module.program, *arguments(shapes, seed)).source
    faults = [fault for fault in reviewer_faults(source) if "quotes" not in fault]
    assert faults == [], source


@pytest.mark.slow
def test_output_is_byte_identical_under_any_hash_seed(sources):
    script = ("import sys; sys.path.insert(0, 'tests'); import hashlib, golden_files; "
              "s = golden_files.golden_sources(); "
              "print(hashlib.sha1(repr(sorted(s.items())).encode()).hexdigest())")
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                                text=True, cwd=TESTS.parent, check=True)
        digests.add(result.stdout.strip())
    assert len(digests) == 1


def scaled_by_a_static_root(x):
    return np.sum(x / np.sqrt(x.shape[0]) + np.float32(0.5) * x)


def test_a_numpy_scalar_computed_statically_says_how_it_is_made():
    source = ys.simplegrad(scaled_by_a_static_root, np.ones(4)).source
    assert "np.sqrt(N)" in source and "np.float32(0.5)" in source
    assert "\narray =" not in source
    ys.check_grad(scaled_by_a_static_root, np.arange(1.0, 5.0))


def user_named_x0(x):
    x0 = x[1] * 2
    return np.sum(x0 * x[0] * x[0])


def test_a_made_up_name_never_shadows_a_users_name():
    source = ys.simplegrad(user_named_x0, np.arange(3.0)).source
    assert "x0_2" not in source and "x0 = x[1] * 2" in source
    ys.check_grad(user_named_x0, np.arange(3.0))
