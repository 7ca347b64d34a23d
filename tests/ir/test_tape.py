"""trace(): the tape prints, replays and compiles."""

import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import ControlFlowChanged


def mlp(W, b, x):
    h = np.tanh(W @ x + b[:, None])
    if np.sum(x) > -100:
        h = h * 2.0
    return np.sum(h ** 2)


@pytest.fixture
def args(rng):
    return rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((4, 5))


def test_trace_returns_value_and_prints_one_op_per_line(args):
    value, tape = ys.trace(mlp, *args)
    assert np.isclose(value, mlp(*args))
    text = str(tape)
    lines = text.splitlines()
    assert lines[0].startswith("%1 = input W  :: float64 (3, 4)")
    assert any("np.tanh(%" in line and "float64 (3, 5)" in line for line in lines)
    assert any(line.startswith("%") and "guard bool(" in line for line in lines)
    assert lines[-1].startswith("return %")
    assert all("test_tape.py:" in line for line in lines if "np.tanh" in line)


def test_play_reruns_on_new_arguments(args, rng):
    _, tape = ys.trace(mlp, *args)
    other = tuple(a + rng.standard_normal(a.shape) * 0.1 for a in args)
    assert np.isclose(tape.play(*other), mlp(*other))


def test_compile_is_equivalent_to_play(args, rng):
    _, tape = ys.trace(mlp, *args)
    compiled = tape.compile()
    other = tuple(a * 0.5 for a in args)
    assert np.isclose(compiled(*other), tape.play(*other))


def test_play_checks_guards(args):
    _, tape = ys.trace(mlp, *args)
    W, b, x = args
    with pytest.raises(ControlFlowChanged):
        tape.play(W, b, x - 1e3)


def test_gradient_result_carries_forward_tape_and_source(args):
    _, g = ys.grad(mlp, *args)
    assert len(g) == 3
    assert "input W" in str(g.tape)
    assert "def grad_mlp(W, b, x):" in g.source


OFFSET = 2.0


def squares_with_offset(x):
    total = 0.0
    for i in range(len(x)):
        total = total + x[i] ** 2
    return total + OFFSET


@pytest.mark.parametrize("other", [np.array([1.0, 2.0, 3.0]), np.array([1, 2]), [1.0, 2.0]],
                         ids=["another shape", "another dtype", "a list"])
def test_play_and_compile_refuse_arguments_the_tape_was_not_recorded_for(other):
    _, tape = ys.trace(squares_with_offset, np.array([1.0, 2.0]))
    for run in (tape.play, tape.compile()):
        with pytest.raises(ys.errors.SignatureMismatch, match="recorded for x float64"):
            run(other)


def test_play_and_compile_refuse_after_outside_state_changed():
    global OFFSET
    x = np.array([1.0, 2.0])
    _, tape = ys.trace(squares_with_offset, x)
    compiled = tape.compile()
    assert tape.play(x) == compiled(x) == squares_with_offset(x)
    OFFSET = 5.0
    try:
        for run in (tape.play, compiled):
            with pytest.raises(ys.errors.SignatureMismatch, match="global OFFSET"):
                run(x)
    finally:
        OFFSET = 2.0


# --- Tape.verify and the passes' contract ------------------------------------

def _malformed(tape, **changes):
    from yota_src.ir.tape import TapeError

    with pytest.raises(TapeError) as error:
        tape.replace(**changes).verify()
    return str(error.value)


def test_verify_accepts_what_the_pipeline_makes(args):
    _, tape = ys.trace(mlp, *args)
    assert tape.verify() is tape


def test_verify_names_each_kind_of_fault(args):
    _, tape = ys.trace(mlp, *args)
    ops = tape.ops
    assert "same op" in _malformed(tape, ops=ops + [ops[-1]])
    assert "defined later" in _malformed(tape, ops=ops[1:] + ops[:1])
    assert "output holds an op not on the tape" in _malformed(tape, ops=ops[:-1])
    assert "input in the reverse section" in _malformed(tape, n_forward=0)
    assert "labelled a gradient" in _malformed(tape, labels={ops[-1]: ops[0]})
    assert "label ('h') is on an op not" in _malformed(tape, labels={object(): "h"})


def test_verify_compares_shapes_with_recorded_values(args):
    from yota_src.ir.tape import TapeError

    _, tape = ys.trace(mlp, *args)
    first = tape.ops[0]
    with pytest.raises(TapeError, match=r"%1 says float64 \(3, 4\) but its value"):
        tape.verify({first: np.zeros((4, 3))})


def test_every_pass_leaves_its_input_tape_as_it_was(args):
    from yota_src import passes
    from yota_src.api.unrolling import unroll
    from yota_src.differentiate.sweep import differentiate
    from yota_src.ir.tape import Tape

    unroller, value, signature = unroll(mlp, args)
    output = unroller.recorder.refs(value)
    forward = Tape(list(unroller.recorder.ops), output, signature).verify(
        unroller.recorder.values)
    before = passes.fingerprint(forward)
    tape = differentiate(passes.optimize_forward(forward), unroller.recorder.values,
                         frozenset({0, 1}))
    assert passes.fingerprint(forward) == before
    for each in passes.BACKWARD_PASSES:
        seen = passes.fingerprint(tape)
        result = each(tape).verify()
        assert passes.fingerprint(tape) == seen, each.__name__
        tape = result
