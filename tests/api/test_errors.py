"""Errors name the user's file and line and say what to do."""

import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import NoDiffRuleError, SourceUnavailableError, UnsupportedSyntaxError


def uses_i0(x):
    return np.sum(np.i0(x))


def global_writer(x):
    global STATE
    STATE = x
    return np.sum(x)


def test_builtins_have_no_source():
    with pytest.raises(SourceUnavailableError, match="not a Python function"):
        ys.grad(len, [1.0])


def test_exec_defined_functions_have_no_source():
    namespace = {}
    exec("def f(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(SourceUnavailableError,
                       match="(?s)run from a string.*Put the function in a file"):
        ys.grad(namespace["f"], 1.0)


def test_missing_rule_names_file_line_and_fix():
    with pytest.raises(NoDiffRuleError) as error:
        ys.grad(uses_i0, np.ones(3))
    message = str(error.value)
    assert "test_errors.py:11: no gradient rule for np.i0" in message
    assert "return np.sum(np.i0(x))" in message
    assert "ys.diffrule(np.i0" in message


def test_writing_a_global_is_refused_at_the_assignment():
    with pytest.raises(ys.errors.MutationError,
                       match=r"test_errors.py:16: in-place change of a value defined outside"):
        ys.grad(global_writer, np.ones(3))


def test_non_scalar_output_is_refused():
    def vector(x):
        return x * 2.0

    with pytest.raises(ValueError, match="must return a scalar"):
        ys.grad(vector, np.ones(3))


def stores_into_argument(x):
    x[0] = 1.0
    return np.sum(x)


def test_store_into_a_traced_array_is_a_mutation_error():
    expected = "test_errors.py:5[0-9]: in-place change of an argument"
    with pytest.raises(ys.errors.MutationError, match=expected):
        ys.grad(stores_into_argument, np.ones(3))


def generator(x):
    yield x


def uses_generator(x):
    return np.sum(next(generator(x)))


def evaluates(x):
    return eval("x * 2")


def nonlocal_writer(x):
    total = 0.0

    def add():
        nonlocal total
        total = total + 1.0

    add()
    return np.sum(x) * total


def with_errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return np.sum(y)


def with_unknown(x):
    import threading

    with threading.Lock():
        y = x * 2.0
    return np.sum(y)


def try_finally(x):
    try:
        y = x * 2.0
    finally:
        z = 1.0
    return np.sum(y) * z


def try_except_taken(x):
    try:
        return np.sum(x[10])
    except IndexError:
        return np.sum(x)


def test_a_generator_function_is_unrolled():
    x = np.array([0.5, 1.0, 2.0])
    assert ys.grad(uses_generator, x)[0] == pytest.approx(uses_generator(x))
    ys.check_grad(uses_generator, x)


def test_eval_is_refused():
    with pytest.raises(UnsupportedSyntaxError, match=r"eval\(\) is not supported"):
        ys.grad(evaluates, np.ones(3))


def test_nonlocal_updates_the_enclosing_function_s_variable():
    x = np.array([0.5, 1.0, 2.0])
    assert ys.grad(nonlocal_writer, x)[0] == nonlocal_writer(x)
    ys.check_grad(nonlocal_writer, x)


def make_counting_loss():
    calls = 0

    def loss(x):
        nonlocal calls
        calls = calls + 1
        return np.sum(x)
    return loss


def test_nonlocal_of_a_function_defined_outside_is_refused_at_the_assignment():
    with pytest.raises(ys.errors.MutationError, match="defined outside the function"):
        ys.grad(make_counting_loss(), np.ones(3))


def test_known_with_blocks_run_through(rng):
    ys.check_grad(with_errstate, rng.uniform(0.5, 1.0, 3))


def test_unknown_with_blocks_are_refused():
    with pytest.raises(UnsupportedSyntaxError, match="`with` over lock"):
        ys.grad(with_unknown, np.ones(3))


def test_try_finally_runs_through(rng):
    ys.check_grad(try_finally, rng.standard_normal(3))


def test_exceptions_inside_try_are_refused():
    with pytest.raises(UnsupportedSyntaxError, match="raised IndexError while unrolling"):
        ys.grad(try_except_taken, np.ones(3))


def test_error_messages_show_the_line_with_a_caret():
    with pytest.raises(NoDiffRuleError) as error:
        ys.grad(uses_i0, np.ones(3))
    lines = str(error.value).splitlines()
    assert lines[1].strip() == "return np.sum(np.i0(x))"
    assert set(lines[2].strip()) == {"^"}


def test_the_innermost_frame_of_the_traceback_is_the_users_line():
    import traceback

    with pytest.raises(NoDiffRuleError) as error:
        ys.grad(uses_i0, np.ones(3))
    frames = traceback.extract_tb(error.value.__traceback__)
    assert frames[-1].filename.endswith("test_errors.py") and frames[-1].lineno == 11
    assert not any("yota_src/tracing/" in frame.filename.replace("\\", "/") for frame in frames)
