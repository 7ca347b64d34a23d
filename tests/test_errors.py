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
    with pytest.raises(SourceUnavailableError, match="define the function in a file"):
        ys.grad(namespace["f"], 1.0)


def test_missing_rule_names_file_line_and_fix():
    with pytest.raises(NoDiffRuleError) as error:
        ys.grad(uses_i0, np.ones(3))
    message = str(error.value)
    assert "test_errors.py:11: no gradient rule for np.i0" in message
    assert "return np.sum(np.i0(x))" in message
    assert "ys.diffrule(np.i0" in message


def test_unsupported_syntax_names_the_construct():
    with pytest.raises(UnsupportedSyntaxError, match="global"):
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
