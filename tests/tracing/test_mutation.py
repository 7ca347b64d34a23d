"""In-place changes: a correct gradient where the change stays inside the
function, MutationError naming the line where it would escape."""

import helpers_mutation as m
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    (m.sort_in_place, r"y.sort\(\) changes the array in place"),
    (m.store_values_with_repeating_data_indices, "indices from the data that repeat"),
    (m.store_with_repeated_indices, "repeated indices"),
    (m.store_mixed_repeated, "repeated indices"),
])
def test_changes_that_would_escape_raise_mutation_error(fn, message, x):
    with pytest.raises(MutationError, match=message) as error:
        ys.grad(fn, x)
    assert "helpers_mutation.py:" in str(error.value)


def test_values_through_data_indices_distinct_at_the_example_are_guarded(x):
    ys.check_grad(m.store_values_with_data_indices, x)
    rows = np.array([2, 0, 3])
    gradient = ys.grad(m.scatter_rows, x, rows)
    assert np.isclose(gradient[0], m.scatter_rows(x, rows))
    ys.check_grad(m.scatter_rows, x, rows)
    # other distinct rows: the cached gradient applies; a repeat: it refuses
    ys.check_grad(m.scatter_rows, x, np.array([1, 3, 0]))
    compiled = ys.simplegrad(m.scatter_rows, x, rows)
    other = np.array([1, 3, 0])
    assert np.allclose(compiled(x, other)[1], 2 * x * np.arange(8.0).reshape(4, 2)[other])
    with pytest.raises(ys.errors.ControlFlowChanged, match="writes an element twice"):
        compiled(x, np.array([1, 1, 0]))
    with pytest.raises(MutationError, match="repeat an element"):
        ys.grad(m.scatter_rows, x, np.array([1, 1, 0]), dynamic=True)


@given(st.permutations(range(4)))
@settings(max_examples=15, deadline=None)
def test_a_cached_scatter_is_right_for_any_distinct_rows(order):
    x = np.linspace(0.5, 1.5, 6).reshape(3, 2)
    rows = np.array(order[:3])
    value, (dx, _) = ys.grad(m.scatter_rows, x, rows)
    assert np.isclose(value, m.scatter_rows(x, rows))
    expected = 2 * x * np.arange(8.0).reshape(4, 2)[rows]
    assert np.allclose(dx, expected)


def test_out_into_an_argument_raises(x):
    with pytest.raises(MutationError, match=r"in-place change of an argument"):
        ys.grad(m.out_into_argument, x, x)


@pytest.mark.parametrize("fn", [m.out_argument, m.store_with_data_indices, m.one_hot_in_a_loop,
                                m.masked_in_place, m.rows_and_data_columns])
def test_in_place_writes_that_are_well_defined_whatever_the_data(fn, x):
    assert np.isclose(ys.grad(fn, x, x[:, ::-1])[0], fn(x.copy(), x[:, ::-1]))
    ys.check_grad(fn, x, x[:, ::-1])


def test_attribute_of_argument_raises(x):
    class Model:
        pass

    model = Model()
    model.W = np.ones((3, 2))
    with pytest.raises(MutationError, match="argument"):
        ys.grad(m.attribute_of_argument, model, x)


@pytest.mark.parametrize("fn", [m.augment_list_item, m.augment_dict_item,
                                m.augment_attribute_of_local_object, m.augment_indexed_once])
def test_an_array_changed_in_place_through_a_container_changes_for_every_alias(fn, x):
    value, _ = ys.grad(fn, x)
    assert np.isclose(value, fn(x.copy()))
    ys.check_grad(fn, x)


def _state(arg):
    return arg.__dict__ if isinstance(arg, m.Model) else arg


def test_changing_an_argument_by_a_method_raises_and_changes_nothing(x):
    state = {"history": []}
    with pytest.raises(MutationError, match="in-place change of an argument"):
        ys.grad(m.record_history, state, x)
    assert state == {"history": []}


@pytest.mark.parametrize("fn, make_args", [
    (m.Model.loss, lambda x: (m.Model(np.ones_like(x)), x)),
    (m.store_in_argument_dict, lambda x: ({}, x)),
    (m.count_in_argument_list, lambda x: ([0], x)),
], ids=["attribute of an argument", "item of an argument dict",
        "augmented item of an argument list"])
def test_setting_a_part_of_an_argument_is_replayed_once_per_call(fn, make_args, x):
    args, expected = make_args(x), make_args(x)
    for _ in range(2):
        value, _ = ys.grad(fn, *args)
        assert np.isclose(value, fn(*expected))
        assert repr(_state(args[0])) == repr(_state(expected[0]))


def copies_then_changes(x):
    import copy
    params = {"w": x * 1.0, "b": [x[0]]}
    saved = copy.deepcopy(params)
    params["w"] += 1.0
    shallow = copy.copy(params["w"])
    params["w"] *= 3.0
    return np.sum(saved["w"] * 2.0) + saved["b"][0] + np.sum(shallow) + np.sum(params["w"])


def test_copies_are_independent_of_what_they_copy(x):
    assert np.isclose(ys.grad(copies_then_changes, x[0])[0], copies_then_changes(x[0]))
    ys.check_grad(copies_then_changes, x[0])


def split_then_written(x):
    state = x * 1.0
    position, velocity = np.split(state, 2)
    state[0] = 5.0  # position is a view: it changes too, natively
    return np.sum(position * velocity)


def meshgrid_view_then_written(x):
    a = x * 1.0
    grid, _ = np.meshgrid(a, a, copy=False)
    a[0] = 10.0
    return np.sum(grid)


def transposed_by_keyword_then_written(x):
    a = x * 1.0
    view = np.transpose(a=a)
    a[0] = 10.0
    return np.sum(view)


@pytest.mark.parametrize("fn", [m.store_into_view, m.store_into_viewed, split_then_written,
                                transposed_by_keyword_then_written])
def test_views_made_any_way_follow_the_array_they_look_into(fn, x):
    arg = x.ravel()[:4] if fn is split_then_written else \
        x[:, 0] if fn is transposed_by_keyword_then_written else x
    assert np.isclose(ys.grad(fn, arg)[0], fn(arg.copy()))
    ys.check_grad(fn, arg)


def test_a_write_through_a_broadcast_view_is_refused(x):
    def f(x):
        a = x[:, 0] * 1.0
        grid, _ = np.meshgrid(a, a, copy=False)  # rows that repeat a's memory
        grid[0, 0] = 10.0
        return np.sum(grid)

    with pytest.raises((MutationError, ValueError)):
        ys.grad(f, x)


def adds_through_operator(x):
    import operator
    total = x * 0.0
    alias = total
    operator.iadd(total, x * 2.0)
    return np.sum(alias)


def test_in_place_operators_called_as_functions_change_every_alias(x):
    assert ys.grad(adds_through_operator, x)[0] == pytest.approx(adds_through_operator(x))
    ys.check_grad(adds_through_operator, x)


def test_an_in_place_float_result_into_an_integer_array_raises_as_numpy_does():
    def f(dt):
        t = np.arange(5)
        t *= dt
        return np.sum(t * dt)

    with pytest.raises(TypeError, match="same_kind"):
        f(np.array(0.1))
    with pytest.raises(TypeError, match="same_kind"):
        ys.grad(f, np.array(0.1))


def test_object_setattr_on_what_an_argument_holds_is_refused():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Norm:
        running: np.ndarray

    def f(norm, x):
        object.__setattr__(norm, "running", 0.9 * norm.running + 0.1 * x)
        return np.sum(x ** 2)

    norm = Norm(np.zeros(2))
    with pytest.raises(MutationError, match="in-place change of an argument"):
        ys.grad(f, norm, np.ones(2))
    assert np.all(norm.running == 0)


@pytest.mark.parametrize("fn", [m.rnn_state_buffer, m.slice_accumulated])
def test_buffers_written_step_by_step_under_views(fn, rng):
    if fn is m.rnn_state_buffer:
        args = (rng.standard_normal((3, 2)), rng.standard_normal((3, 3)) * 0.5,
                rng.standard_normal((5, 2)))
    else:
        args = (rng.standard_normal(4), rng.standard_normal(3))
    assert np.isclose(ys.grad(fn, *args)[0], fn(*args))
    ys.check_grad(fn, *args)


@pytest.mark.parametrize("fn", [m.reshaped_then_written, m.transposed_then_written,
                                m.views_held_across_writes, m.view_of_a_view_written])
def test_views_and_the_arrays_they_look_into_change_together(fn, x, rng):
    w = rng.uniform(0.5, 1.5, 2)
    assert np.isclose(ys.grad(fn, x, w)[0], fn(x.copy(), w))
    ys.check_grad(fn, x, w)


def test_a_write_through_a_view_of_an_argument_is_refused(x):
    with pytest.raises(MutationError, match="in-place change of an argument"):
        ys.grad(m.written_through_a_view_of_an_argument, x, np.ones(2))
