"""In-place changes: a correct gradient where the change stays inside the
function, MutationError naming the line where it would escape."""

import helpers_mutation as m
import numpy as np
import pytest

import yota_src as ys
from yota_src.errors import MutationError


@pytest.fixture
def x(rng):
    return rng.uniform(0.2, 1.0, size=(3, 2))


def test_stores_into_a_local_array(x):
    ys.check_grad(m.fill_local, x)
    source = ys.simplegrad(m.fill_local, x).source
    assert "out[0] = x[0] * 2.0" in source


def test_augmented_assignment_updates_every_alias(x):
    assert np.isclose(ys.grad(m.local_augmented, x)[0], m.local_augmented(x.copy()))
    ys.check_grad(m.local_augmented, x)


def test_augmented_assignment_of_floats_rebinds(rng):
    ys.check_grad(m.scalar_accumulate, rng.standard_normal(4))


def test_stores_through_static_unique_indices(rng):
    ys.check_grad(m.store_with_static_indices, rng.standard_normal(3))
    ys.check_grad(m.store_mixed_index, rng.standard_normal((2, 3)))
    ys.check_grad(m.store_through_mask, rng.standard_normal((3, 2)))


@pytest.mark.parametrize("fn, message", [
    (m.augment_argument, "in-place change of an argument"),
    (m.augment_argument_alias, "in-place change of an argument"),
    (m.store_into_view, "shares memory"),
    (m.store_into_viewed, "shares memory"),
    (m.sort_in_place, r"x.sort\(\) changes the array in place"),
    (m.store_with_data_indices, "indices computed from the data"),
    (m.store_with_repeated_indices, "repeated indices"),
    (m.store_mixed_repeated, "repeated indices"),
])
def test_changes_that_would_escape_raise_mutation_error(fn, message, x):
    with pytest.raises(MutationError, match=message) as error:
        ys.grad(fn, x)
    assert "helpers_mutation.py:" in str(error.value)


def test_out_arguments_raise(x):
    with pytest.raises(MutationError, match=r"np.add writes into an existing array \(out=\)"):
        ys.grad(m.out_argument, x, x)


def test_attribute_of_argument_raises(x):
    class Model:
        pass

    model = Model()
    model.W = np.ones((3, 2))
    with pytest.raises(MutationError, match="argument"):
        ys.grad(m.attribute_of_argument, model, x)
