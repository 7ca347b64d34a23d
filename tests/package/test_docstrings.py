"""Every public function and class says what it returns, what it caches and
which errors it raises, with an example; the examples run."""

import doctest
import inspect
import sys

import pytest

import yota_src
from yota_src import errors
from yota_src.api import finite_differences, gradients, results, transforms
from yota_src.core import registry
from yota_src.ir import tape

PUBLIC = [name for name in yota_src.__all__ if name != "errors"]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_docstring_says_returns_caches_raises_and_shows_an_example(name):
    text = inspect.getdoc(getattr(yota_src, name)).lower()
    assert "return" in text, name
    assert "cache" in text, name
    assert "raise" in text, name
    assert ">>> " in text, name


@pytest.mark.parametrize("name", [name for name in PUBLIC
                                  if not inspect.isclass(getattr(yota_src, name))])
def test_public_functions_have_type_hints(name):
    """The options are typed; the user's own arguments (`x`, `*args`) may be anything."""
    signature = inspect.signature(getattr(yota_src, name))
    assert signature.return_annotation is not inspect.Signature.empty, name
    untyped = [p.name for p in signature.parameters.values() if p.default is not p.empty
               and p.annotation is p.empty]
    assert not untyped, (name, untyped)


@pytest.fixture
def registry_restored():
    """The examples register rules (diffrule, nodiff) for functions of their
    own; the registry is put back, so later tests see only the real rules."""
    registry.registered()  # the built-in rules loaded first, so that they are what is put back
    tables = (registry._templates, registry._nondifferentiable, registry._nodiff_args,
              registry._refused, registry._expressions)
    saved = [table.copy() for table in tables]
    yield
    for table, before in zip(tables, saved):
        table.clear()
        table.update(before)


# every module that defines a public name: a function added to a new module
# has its example run too
DEFINING = sorted({sys.modules[getattr(yota_src, name).__module__] for name in PUBLIC} | {errors},
                  key=lambda module: module.__name__)


def test_the_modules_with_examples_are_those_that_define_the_api():
    assert {gradients, transforms, finite_differences, results, tape, registry} <= set(DEFINING)


@pytest.mark.parametrize("module", DEFINING, ids=lambda m: m.__name__)
def test_docstring_examples_run(module, registry_restored):
    # as a user's script runs them: functions defined in an example are the
    # user's (module __main__), not yota-src's own
    result = doctest.testmod(module, globs={"__name__": "__main__"},
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
