"""`Tape.to_dot()`: the tape as a Graphviz graph, checked by parsing it (and
by Graphviz itself where its `dot` program is installed)."""

import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers_dot import parse_dot

import yota_src as ys
from yota_src.ir import dot


def gradient_tape(fn, args):
    """The tape a gradient module is generated from (`trace --grad` draws it)."""
    return ys.simplegrad(fn, *args).gradient_tape


def write_model(tmp_path, text: str):
    path = tmp_path / "dotmodel.py"
    path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib
        sys.modules.pop("dotmodel", None)
        return importlib.import_module("dotmodel")
    finally:
        sys.path.remove(str(tmp_path))


MODEL = '''
    import numpy as np

    def loss(W, b, x):
        h = np.tanh(W @ x + b)  # say "hi" \\ there
        return np.sum(h * h)

    def example():
        return np.full((3, 4), 0.1), np.zeros(3), np.ones(4)
'''


@pytest.fixture
def model(tmp_path):
    return write_model(tmp_path, MODEL)


def test_forward_tape_has_arguments_ops_and_output_as_nodes_and_data_flow_as_edges(model):
    _, tape = ys.trace(model.loss, *model.example())
    graph = parse_dot(tape.to_dot())
    labels = [node["label"] for node in graph["nodes"].values()]
    assert labels[:3] == ["W\nfloat64 (3, 4)", "b\nfloat64 (3,)", "x\nfloat64 (4,)"]
    assert labels[-1] == "return"
    assert len(graph["nodes"]) == len(tape.ops) + 1
    assert ("n1", "n4") in graph["edges"]  # W feeds W @ x
    assert graph["subgraphs"] == ["arguments", "cluster_forward", "outputs"]


def test_each_op_is_labelled_with_its_primitive_and_source_line(model):
    _, tape = ys.trace(model.loss, *model.example())
    nodes = parse_dot(tape.to_dot())["nodes"]
    tanh = next(node for node in nodes.values() if node["label"].startswith("h = np.tanh"))
    assert tanh["label"] == ('h = np.tanh  float64 (3,)\n'
                             'dotmodel.py:5  h = np.tanh(W @ x + b)  # say "hi" \\ there')


def test_gradient_tape_draws_forward_and_backward_apart(model):
    tape = gradient_tape(model.loss, model.example())
    graph = parse_dot(tape.to_dot())
    assert graph["subgraphs"] == ["arguments", "cluster_forward", "cluster_backward", "outputs"]
    ids = {op: f"n{i + 1}" for i, op in enumerate(tape.ops)}
    backward = {ids[op] for op in tape.ops[tape.n_forward:]}
    forward = {ids[op] for op in tape.ops[:tape.n_forward]} - {"n1", "n2", "n3"}
    assert backward and forward
    assert {graph["nodes"][n]["fillcolor"] for n in backward} == {dot.BACKWARD[1]}
    assert {graph["nodes"][n]["fillcolor"] for n in forward} == {dot.FORWARD[1]}
    outputs = [node["label"] for name, node in graph["nodes"].items() if name.startswith("out")]
    assert outputs == ["return value", "dW", "db", "dx"]


def test_quote_escapes_what_dot_would_read_otherwise():
    assert dot.quote('say "hi"') == r'"say \"hi\""'
    assert dot.quote("a\\l") == r'"a\\l"'  # shown as typed, not a DOT line break
    assert dot.quote("one\ntwo") == r'"one\ntwo"'
    assert dot.quote("tab\there") == '"tab here"'


def test_the_text_is_the_same_for_the_same_tape_and_for_a_new_trace(model):
    _, tape = ys.trace(model.loss, *model.example())
    _, again = ys.trace(model.loss, *model.example())
    assert tape.to_dot() == tape.to_dot() == again.to_dot()


def test_a_rolled_loop_is_one_node_with_its_header(tmp_path):
    loopy = write_model(tmp_path, '''
        def double(x, n):
            for _ in range(n):
                x = x * 2.0
            return x
    ''')
    tape = gradient_tape(loopy.double, (1.5, 4))
    labels = [node["label"] for node in parse_dot(tape.to_dot())["nodes"].values()]
    assert any(label.startswith("loop: for t in range(") for label in labels)
    assert any(label.startswith("loop: for t in reversed(range(") for label in labels)


def test_structured_output_leaves_are_named_by_path(tmp_path):
    structs = write_model(tmp_path, '''
        import numpy as np
        def f(params, x):
            return np.sum(params["W"] @ x)
    ''')
    tape = gradient_tape(structs.f, ({"W": np.ones((2, 3))}, np.ones(3)))
    nodes = parse_dot(tape.to_dot())["nodes"]
    outputs = [node["label"] for name, node in nodes.items() if name.startswith("out")]
    assert outputs[0] == "return value" and "dx" in outputs
    assert any(label.startswith("dparams") and "W" in label for label in outputs)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_graphviz_renders_it(model):
    tape = gradient_tape(model.loss, model.example())
    result = subprocess.run(["dot", "-Tsvg"], input=tape.to_dot(), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "<svg" in result.stdout, result.stderr
