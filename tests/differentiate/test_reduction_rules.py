"""NaN-aware reductions (np.nansum, nanmean, nanvar, nanstd, nanmax, nanmin,
nanprod, nancumsum, nancumprod) and the reductions written as ufunc methods
(np.add.reduce, np.multiply.accumulate, ...) against central finite
differences. A NaN element is left out of the result, so its gradient is 0;
perturbing a NaN leaves it NaN, so the differences agree."""

import numpy as np
import pytest
from helpers_rule_checks import check, uniform
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import yota_src as ys
from yota_src import rules
from yota_src.errors import NoDiffRuleError

SETTINGS = settings(max_examples=25, deadline=None)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def arrays_with_nans(draw, low=-1.0, high=1.0):
    """(a, axis, keepdims): a with some NaNs, an axis argument NumPy takes."""
    shape = draw(shapes)
    a = uniform(shape, low, high, seed=draw(st.integers(0, 1000)))
    nans = np.array(draw(st.lists(st.booleans(), min_size=a.size, max_size=a.size)))
    a[np.reshape(nans, shape) & (np.random.default_rng(1).uniform(size=shape) < 0.4)] = np.nan
    ndim = len(shape)
    axis = draw(st.sampled_from([None, 0, -1] + ([(0, ndim - 1)] if ndim > 1 else [])))
    return a, axis, draw(st.booleans())


def numbers_in_each_slice(a, axis):
    return np.sum(~np.isnan(a), axis=axis)


# --- NaN-aware reductions ------------------------------------------------------------


@SETTINGS
@given(case=arrays_with_nans(), fn=st.sampled_from([np.nansum, np.nanprod]))
def test_nan_sums_and_products_leave_nans_out(case, fn):
    a, axis, keepdims = case
    check(lambda a: fn(a, axis=axis, keepdims=keepdims), a)


@SETTINGS
@given(case=arrays_with_nans(), fn=st.sampled_from([np.nanmean, np.nanmax, np.nanmin]))
def test_nan_means_and_extremes_of_the_numbers(case, fn):
    a, axis, keepdims = case
    assume(np.all(numbers_in_each_slice(a, axis) > 0))  # an all-NaN slice gives NaN
    check(lambda a: fn(a, axis=axis, keepdims=keepdims), a)


@SETTINGS
@given(case=arrays_with_nans(), fn=st.sampled_from([np.nanvar, np.nanstd]),
       ddof=st.integers(0, 1))
def test_nan_variances(case, fn, ddof):
    a, axis, keepdims = case
    assume(np.all(numbers_in_each_slice(a, axis) > ddof + 1))  # std > 0 where it divides
    # and well away from 0: numbers 3e-7 apart (std 1.5e-7) are below what central
    # differences resolve, which then disagree with the exact derivative
    assume(np.all(np.nanstd(a, axis=axis) > 1e-3))
    check(lambda a: fn(a, axis=axis, ddof=ddof, keepdims=keepdims), a)


@SETTINGS
@given(case=arrays_with_nans(low=0.5, high=1.5), fn=st.sampled_from([np.nancumsum,
                                                                     np.nancumprod]))
def test_nan_cumulative_sums_and_products(case, fn):
    a, axis, _ = case
    check(lambda a: fn(a, axis=None if axis is None else -1), a)


def test_nan_products_with_zeros():
    a = np.array([[0.5, np.nan, 0.0, 2.0], [0.0, 0.0, np.nan, 1.5]])
    check(lambda a: np.nanprod(a, axis=1), a)
    check(lambda a: np.nancumprod(a, axis=1), a)


def test_nan_gradients_are_zero_at_the_nans():
    a = np.array([1.0, np.nan, 3.0])
    for fn in (np.nansum, np.nanmean, np.nanvar, np.nanstd, np.nanmax, np.nanprod):
        _, g = ys.grad(lambda a, fn=fn: fn(a), a)
        assert g[0][1] == 0.0 and np.all(np.isfinite(g[0])), fn.__name__


def test_nanmax_ties_share_the_gradient_as_np_max_does():
    """Two equal maxima: central differences see half each, as for np.max."""
    a = np.array([[0.3, np.nan, 0.9, 0.9], [0.2, 0.7, np.nan, -0.1]])
    check(lambda a: np.nanmax(a, axis=1), a)
    check(lambda a: np.nanmin(np.array([0.1, np.nan, 0.1, 0.5]) + a), np.zeros(4))
    _, g = ys.grad(lambda a: np.nanmax(a), np.array([2.0, np.nan, 2.0, 2.0]))
    assert np.allclose(g[0], [1 / 3, 0.0, 1 / 3, 1 / 3])


def test_nan_reductions_of_an_array_without_nans_match_the_plain_ones():
    a = uniform((3, 4))
    for nan_fn, fn in ((np.nansum, np.sum), (np.nanmean, np.mean), (np.nanvar, np.var),
                       (np.nanstd, np.std), (np.nanprod, np.prod), (np.nancumsum, np.cumsum)):
        _, g = ys.grad(lambda a, f=nan_fn: np.sum(f(a, axis=0) ** 2), a)
        _, expected = ys.grad(lambda a, f=fn: np.sum(f(a, axis=0) ** 2), a)
        assert np.allclose(g[0], expected[0]), nan_fn.__name__


def test_nan_argmax_and_argmin_pass_no_gradient():
    for fn in (np.nanargmax, np.nanargmin):
        assert rules.is_nondifferentiable(fn)
    check(lambda a: a[np.nanargmax(a)] * a[np.nanargmin(a)], np.array([0.3, np.nan, 0.9, -0.2]))


# --- reductions written as ufunc methods ---------------------------------------------


@SETTINGS
@given(shape=shapes, keepdims=st.booleans(), data=st.data(),
       ufunc=st.sampled_from([np.add, np.multiply, np.maximum, np.minimum]))
def test_ufunc_reduce(shape, keepdims, data, ufunc):
    ndim = len(shape)
    axis = data.draw(st.sampled_from([None, 0, -1] + ([(0, ndim - 1)] if ndim > 1 else [])))
    check(lambda a: ufunc.reduce(a, axis=axis, keepdims=keepdims),
          uniform(shape, 0.5, 1.5, seed=data.draw(st.integers(0, 100))))


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum])
def test_ufunc_reduce_along_the_first_axis_by_default(ufunc):
    check(lambda a: ufunc.reduce(a), uniform((3, 4), 0.5, 1.5))


def test_ufunc_reduce_with_an_initial_value():
    check(lambda a, c: np.add.reduce(a, axis=1, initial=c), uniform((2, 3)), 0.4)
    check(lambda a, c: np.multiply.reduce(a, axis=None, initial=c), uniform((2, 3)), 0.4)
    check(lambda a: np.multiply.reduce(a, axis=0, initial=2.0), uniform((2, 3)))


def test_ufunc_reduce_of_a_product_with_zeros():
    check(lambda a: np.multiply.reduce(a, axis=1), np.array([[0.0, 0.5, 2.0], [0.0, 0.0, 1.0]]))


def test_maximum_reduce_ties_share_the_gradient():
    check(lambda a: np.maximum.reduce(a, axis=1), np.array([[0.9, 0.9, 0.1], [0.2, 0.7, 0.3]]))


@SETTINGS
@given(shape=shapes, data=st.data(), ufunc=st.sampled_from([np.add, np.multiply]))
def test_ufunc_accumulate(shape, data, ufunc):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(lambda a: ufunc.accumulate(a, axis=axis), uniform(shape, 0.5, 1.5))


def test_ufunc_accumulate_along_the_first_axis_by_default():
    check(lambda a: np.add.accumulate(a), uniform((3, 2)))
    check(lambda a: np.multiply.accumulate(a), np.array([[0.5, 0.0], [2.0, 1.5], [0.0, 3.0]]))


@pytest.mark.parametrize("call", [
    lambda a: np.maximum.reduce(a, initial=0.5),
    lambda a: np.add.reduce(a, where=a > 0),
], ids=["maximum initial", "where"])
def test_ufunc_reduce_options_without_a_rule_are_refused(call):
    with pytest.raises(NoDiffRuleError, match="is not provided"):
        ys.grad(lambda a: np.sum(call(a)), uniform((2, 3)))
