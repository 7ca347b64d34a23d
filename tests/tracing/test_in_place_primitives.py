"""NumPy functions that write into an argument (issue 7, class 5).

They must never run on the example value and vanish from the generated code:
np.add.at and np.subtract.at on a local array become a functional index_add
seen by every alias; every other writer is a MutationError at the user's line.
Any function that writes into an array argument is caught, known or not,
because primitives run with their array arguments read-only.
"""

import helpers_in_place as m
import numpy as np
import pytest

import yota_src as ys
from yota_src.core.primitives import arguments_read_only
from yota_src.errors import MutationError


@pytest.fixture
def x(rng):
    return rng.uniform(0.2, 1.0, size=4)


@pytest.mark.parametrize("fn", [m.add_at_local, m.subtract_at_local, m.add_at_seen_through_alias,
                                m.add_at_scalar_values], ids=lambda f: f.__name__)
def test_accumulating_ufunc_at_is_differentiated(fn, x):
    value, _ = ys.grad(fn, x)
    assert np.isclose(value, fn(x.copy()))
    ys.check_grad(fn, x)


def test_add_at_is_written_as_np_add_at_in_generated_code(x):
    source = ys.simplegrad(m.add_at_local, x).source
    assert "np.add.at(y, " in source


@pytest.mark.parametrize("fn, message", [
    (m.multiply_at_local, "np.multiply.at writes into its first argument"),
    (m.maximum_at_local, "np.maximum.at writes into its first argument"),
    (m.negative_at_local, "np.negative.at writes into its first argument"),
    (m.add_at_argument, "in-place change of an argument"),
    (m.add_at_global, "in-place change of a value defined outside the function"),
], ids=lambda item: getattr(item, "__name__", ""))
def test_other_ufunc_at_raise_mutation_error(fn, message, x):
    with pytest.raises(MutationError, match=message) as error:
        ys.grad(fn, x)
    assert "helpers_in_place.py:" in str(error.value)


@pytest.mark.parametrize("fn, name", [
    (m.random_shuffle, "np.random.shuffle"),
    (m.generator_shuffle, "Generator.shuffle"),
    (m.putmask_local, "np.putmask"),
    (m.shuffle_global, "np.random.shuffle"),
], ids=lambda item: getattr(item, "__name__", ""))
def test_functions_writing_into_an_argument_raise_mutation_error(fn, name, x):
    with pytest.raises(MutationError, match=f"{name} writes into its argument") as error:
        ys.grad(fn, x)
    assert "helpers_in_place.py:" in str(error.value)


def test_tracing_leaves_arguments_globals_and_their_flags_unchanged(x):
    before, table = x.copy(), m.TABLE.copy()
    ys.grad(m.add_at_local, x)
    for fn in (m.add_at_argument, m.add_at_global, m.shuffle_global):
        with pytest.raises(MutationError):
            ys.grad(fn, x)
    assert np.array_equal(x, before) and np.array_equal(m.TABLE, table)
    assert x.flags.writeable and m.TABLE.flags.writeable and m.INDEX.flags.writeable



def test_read_only_arguments_are_restored_when_a_view_comes_before_its_base(x):
    with arguments_read_only([x[1:], {"base": x}]) as protected:
        assert protected and not x.flags.writeable
    assert x.flags.writeable


@pytest.mark.parametrize("fn", [m.copyto_local, m.fill_diagonal_local])
def test_numpy_writers_into_a_local_array_are_done_functionally(fn, x):
    assert np.isclose(ys.grad(fn, x)[0], fn(x))
    ys.check_grad(fn, x)
