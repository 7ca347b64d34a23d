"""NumPy breadth: each rule against central finite differences, on several
shapes (0-d, broadcasting, axis tuples, keepdims) -- issue 4's families."""

import math
import warnings

import numpy as np
import pytest
from helpers_rule_checks import check, uniform

import yota_src as ys


def apply(fn, kwargs, w, *arrays):
    return np.sum(fn(*arrays, **kwargs) * w)


# --- elementwise ----------------------------------------------------------------

UNARY = [
    (np.tan, -1.0, 1.0), (np.arcsin, -0.9, 0.9), (np.arccos, -0.9, 0.9), (np.arctan, -2, 2),
    (np.sinh, -1, 1), (np.cosh, -1, 1), (np.arcsinh, -2, 2), (np.arccosh, 1.5, 3),
    (np.arctanh, -0.9, 0.9), (np.exp2, -1, 1), (np.expm1, -1, 1), (np.log2, 0.5, 2),
    (np.log10, 0.5, 2), (np.log1p, -0.5, 2), (np.cbrt, 0.5, 2), (np.reciprocal, 0.5, 2),
    (np.fabs, -1, 1), (np.sinc, -1.5, 1.5), (np.deg2rad, -90, 90), (np.rad2deg, -1, 1),
    (np.radians, -90, 90), (np.degrees, -1, 1), (np.nan_to_num, -1, 1),
]


@pytest.mark.parametrize("shape", [(3, 4), (), (5,)], ids=str)
@pytest.mark.parametrize("fn, low, high", UNARY, ids=[f.__name__ for f, _, _ in UNARY])
def test_unary(fn, low, high, shape):
    check(fn, uniform(shape, low, high))


BINARY = [
    (np.arctan2, (-1, 1), (0.5, 1.5)), (np.hypot, (-1, 1), (0.5, 1.5)),
    (np.logaddexp, (-1, 1), (-1, 1)), (np.logaddexp2, (-1, 1), (-1, 1)),
    (np.fmax, (-1, 1), (-1, 1)), (np.fmin, (-1, 1), (-1, 1)),
    (np.float_power, (0.5, 2), (-1, 2)), (np.true_divide, (-1, 1), (0.5, 2)),
    (np.mod, (0.1, 0.9), (1.0, 1.5)), (np.remainder, (1.1, 1.9), (1.0, 1.05)),
    (np.fmod, (-0.9, -0.1), (1.0, 1.5)),
]


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3,))], ids=str)
@pytest.mark.parametrize("fn, a_range, b_range", BINARY, ids=[f.__name__ for f, _, _ in BINARY])
def test_binary(fn, a_range, b_range, shapes):
    check(fn, uniform(shapes[0], *a_range), uniform(shapes[1], *b_range, seed=1))


WITH_NANS = np.array([[0.9, np.nan, -0.2], [np.nan, 0.1, np.nan]])
W23 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


def fmin_nan_second(x):
    return np.sum(np.fmin(x, WITH_NANS) * W23)


def fmax_nan_first(x):
    return np.sum(np.fmax(WITH_NANS, x) * W23)


@pytest.mark.parametrize("fn", [fmin_nan_second, fmax_nan_first], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(2, 3), (3,)], ids=str)
def test_fmin_and_fmax_pass_the_gradient_to_the_number_beside_a_nan(fn, shape):
    ys.check_grad(fn, uniform(shape, -0.5, 0.5))


def fmax_of_traced_nans(x, y):
    return np.sum(np.fmax(x, y) * np.array([1.0, 2.0, 3.0]))


def test_fmax_of_two_traced_arguments_with_nans():
    _, g = ys.grad(fmax_of_traced_nans, np.array([0.5, np.nan, 0.2]), np.array([np.nan, 0.7, 0.1]))
    assert np.array_equal(g[0], [1.0, 0.0, 3.0]) and np.array_equal(g[1], [0.0, 2.0, 0.0])


def maximum_with_nans(x):
    return np.sum(np.maximum(x, WITH_NANS) * W23)


def minimum_with_nans(x):
    return np.sum(np.minimum(WITH_NANS, x) * W23)


@pytest.mark.parametrize("fn", [maximum_with_nans, minimum_with_nans], ids=lambda f: f.__name__)
def test_maximum_and_minimum_beside_a_nan_pass_no_gradient(fn):
    """The result is NaN whatever the number is: its derivative is 0."""
    x = np.array([[0.5, 0.5, 0.5], [-0.5, -0.5, -0.5]])
    with np.errstate(invalid="ignore"):
        wins = (x > WITH_NANS) if fn is maximum_with_nans else (x < WITH_NANS)
    _, g = ys.grad(fn, x)
    assert np.array_equal(g[0], np.where(np.isnan(WITH_NANS), 0.0, wins * W23))


def root_of_relu(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0)))


def root_of_clip(x):
    return np.sum(np.sqrt(np.clip(x, 0.0, 1.0)))


def root_of_fmax(x):
    return np.sum(np.sqrt(np.fmax(0.0, x)))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("x", [np.array([-1.0, 0.25, 4.0]), np.array([[-0.5, 0.5], [-2.0, 0.81]])],
                         ids=["vector", "matrix"])
@pytest.mark.parametrize("fn", [root_of_relu, root_of_clip, root_of_fmax], ids=lambda f: f.__name__)
def test_a_mask_passes_exactly_zero_where_an_infinite_gradient_arrives(fn, x):
    """sqrt(max(x, 0)) is constant where x < 0: 0 there, not 0 * inf."""
    ys.check_grad(fn, x)


def root_of_column_max(x):
    return np.sum(np.sqrt(np.max(x, axis=0)))


def root_of_finite(x):
    return np.sum(np.sqrt(np.nan_to_num(x)))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("fn, x, expected", [
    (root_of_column_max, np.array([[0.0, 1.0], [-1.0, 4.0]]), [[np.inf, 0.0], [0.0, 0.25]]),
    (root_of_finite, np.array([np.nan, 4.0]), [0.0, 0.25]),
], ids=["max", "nan_to_num"])
def test_a_reduction_or_replacement_passes_exactly_zero_beside_an_infinite_gradient(fn, x,
                                                                                     expected):
    assert np.array_equal(ys.grad(fn, x)[1][0], expected)


def test_clip_with_static_and_traced_bounds():
    x = uniform((4, 5), -2, 2)
    check(np.clip, x, -0.5, 0.5)
    check(np.clip, x, uniform((5,), -1.0, -0.2, 1), uniform((4, 1), 0.2, 1.0, 2))


def clip_spellings(x, low, high):
    """Every spelling NumPy accepts: NumPy 2's keywords, one bound, the method."""
    return (np.sum(np.clip(x, min=low, max=high) ** 2) + np.sum(np.clip(x, low, None) ** 2)
            + np.sum(x.clip(low) ** 2) + np.sum(x.clip(min=low) ** 2)
            + np.sum(x.clip(max=high) ** 3) + np.sum(x.clip(low, high) ** 2))


def test_clip_in_every_spelling_numpy_accepts():
    x = uniform((4, 5), -2, 2)
    ys.check_grad(clip_spellings, x, -0.5, 0.7)
    ys.check_grad(clip_spellings, x, uniform((5,), -1.0, -0.2, 1), uniform((4, 1), 0.2, 1.0, 2))


# --- powers and divisions where Python's arithmetic and NumPy's part ---------------

def constant_power_plus(t):
    return t ** 0 + t


def polynomial(x):
    return np.sum(sum(c * x ** k for k, c in enumerate([1.0, 2.0, 3.0])))


@pytest.mark.parametrize("fn, x", [(constant_power_plus, 0.0),
                                   (polynomial, np.array([0.0, 1.0])),
                                   (polynomial, np.zeros((2, 2)))],
                         ids=["float", "vector", "matrix"])
def test_a_static_zero_exponent_passes_nothing_to_the_base(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 * inf is formed, not even where it is discarded
        ys.check_grad(fn, x)
        assert "** -1" not in ys.simplegrad(fn, x).source


def power_of(x, y):
    return np.sum(x ** y)


@pytest.mark.parametrize("x, y", [
    (np.array([0.0, 0.0, 1.0, 2.0]), np.array([2.0, 1.0, 0.0, 0.0])),
    (np.array([[0.0], [1.5]]), np.array([1.0, 2.0, 3.0])),
], ids=["elementwise", "broadcast"])
def test_traced_bases_and_exponents_at_zero_are_exact(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ys.check_grad(power_of, x, y)


def test_the_base_of_a_zero_exponent_gets_zero_at_zero():
    _, g = ys.grad(power_of, np.zeros(2), np.zeros(2))
    assert np.array_equal(g[0], np.zeros(2))


def float_square_root(t):
    return t ** 0.5


def math_square_root(t):
    return math.sqrt(t)


def numpy_square_roots(x):
    return np.sum(np.sqrt(x))


@pytest.mark.parametrize("fn, x", [(float_square_root, 0.0), (math_square_root, 0.0),
                                   (numpy_square_roots, np.array([0.0, 4.0]))],
                         ids=["float-power", "math.sqrt", "np.sqrt"])
def test_an_infinite_derivative_is_inf_with_numpys_warning(fn, x):
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        _, g = ys.grad(fn, x)
    assert np.ravel(g[0])[0] == np.inf


def math_hypot(a, b):
    return math.hypot(a, b)


def numpy_hypot(a, b):
    return np.sum(np.hypot(a, b))


@pytest.mark.parametrize("fn, a, b", [(math_hypot, 0.0, 0.0),
                                      (numpy_hypot, np.zeros(2), np.zeros(2))],
                         ids=["math.hypot", "np.hypot"])
def test_an_undefined_derivative_is_nan_with_numpys_warning(fn, a, b):
    with pytest.warns(RuntimeWarning, match="invalid value"):
        _, g = ys.grad(fn, a, b)
    assert np.all(np.isnan(g[0]))


# --- reductions -------------------------------------------------------------------

AXES = [None, 0, -1, (0, 2)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("fn", [np.prod, np.var, np.std, np.ptp], ids=lambda f: f.__name__)
def test_reductions(fn, axis, keepdims):
    check(fn, uniform((2, 3, 4), 0.5, 1.5), axis=axis, keepdims=keepdims)


def test_prod_with_zeros_is_exact():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]])
    check(np.prod, x, axis=1)
    check(np.prod, x)
    _, g = ys.grad(apply, np.prod, {}, 1.0, x)
    assert g[3][0, 0] == 0.0 and g[3][0, 1] == 0.0


@pytest.mark.parametrize("ddof", [0, 1])
def test_var_std_with_ddof(ddof):
    check(np.var, uniform((4, 3)), axis=0, ddof=ddof)
    check(np.std, uniform((4, 3)), ddof=ddof)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("fn", [np.cumsum, np.cumprod], ids=lambda f: f.__name__)
def test_cumulative(fn, axis):
    check(fn, uniform((3, 4), 0.5, 1.5), axis=axis)


@pytest.mark.parametrize("axis", [None, 1, 0])
def test_cumprod_with_zeros_is_exact(axis):
    x = np.array([[1.5, 0.0, 2.0, 0.0, 3.0], [0.0, 1.2, 0.7, 1.1, 0.9], [0.5, 0.6, 0.7, 0.8, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 / 0
        check(np.cumprod, x, axis=axis)


@pytest.mark.parametrize("ord, axis", [(None, None), (1, None), (2, None), (np.inf, None),
                                       (-np.inf, None), (3, None), (None, 1), (1, 0),
                                       (np.inf, 1), ("fro", None), (None, (0, 1))], ids=str)
def test_norms(ord, axis):
    x = uniform((3, 4), -2, 2) if axis is not None or ord == "fro" else uniform((5,), -2, 2)
    check(np.linalg.norm, x, ord=ord, axis=axis)


def test_matrix_norm_of_unsupported_order_says_so():
    with pytest.raises(ys.errors.NoDiffRuleError, match="ord=1"):
        ys.grad(apply, np.linalg.norm, {"ord": 1}, 1.0, uniform((3, 3)))


def test_average():
    x = uniform((3, 4))
    check(np.average, x)
    check(np.average, x, axis=1)
    check(np.average, x, weights=uniform((3, 4), 0.5, 1.0, 3))
    check(np.average, x, 1, uniform((4,), 0.5, 1.0, 4))
    check(np.average, x, axis=0, weights=uniform((3,), 0.5, 1.0, 5))


def logsumexp(x):
    m = np.max(x, axis=-1, keepdims=True)
    return np.sum(m[..., 0] + np.log(np.sum(np.exp(x - m), axis=-1)))


def test_user_written_logsumexp():
    ys.check_grad(logsumexp, uniform((3, 5), -3, 3))


# --- shape and indexing -------------------------------------------------------------

SHAPE_CASES = [
    (np.moveaxis, [(2, 3, 4)], {"source": 0, "destination": -1}),
    (np.moveaxis, [(2, 3, 4)], {"source": (0, 1), "destination": (2, 0)}),
    (np.atleast_1d, [()], {}), (np.atleast_2d, [(3,)], {}), (np.atleast_3d, [(3, 2)], {}),
    (np.broadcast_to, [(3, 1)], {"shape": (2, 3, 4)}),
    (np.flip, [(3, 4)], {}), (np.flip, [(3, 4)], {"axis": 1}), (np.fliplr, [(3, 4)], {}),
    (np.flipud, [(3, 4)], {}), (np.rot90, [(3, 4)], {}), (np.rot90, [(3, 4, 2)], {"k": 2}),
    (np.roll, [(5,)], {"shift": 2}), (np.roll, [(3, 4)], {"shift": (1, -1), "axis": (0, 1)}),
    (np.roll, [(3, 4)], {"shift": 5}),
    (np.pad, [(3, 4)], {"pad_width": 1}), (np.pad, [(3, 4)], {"pad_width": ((1, 0), (2, 3))}),
    (np.triu, [(4, 4)], {}), (np.tril, [(4, 5)], {"k": -1}),
    (np.diag, [(4,)], {}), (np.diag, [(4,)], {"k": 1}), (np.diag, [(3, 4)], {}),
    (np.diag, [(4, 3)], {"k": -1}), (np.diagonal, [(3, 4)], {"offset": 1}),
    (np.diagonal, [(2, 3, 4)], {"axis1": 1, "axis2": 2}), (np.trace, [(4, 4)], {}),
    (np.trace, [(3, 4)], {"offset": 1}),
    (np.tile, [(3,)], {"reps": 2}), (np.tile, [(2, 3)], {"reps": (2, 1, 2)}),
    (np.repeat, [(3,)], {"repeats": 2}), (np.repeat, [(2, 3)], {"repeats": 2, "axis": 1}),
    (np.repeat, [(2, 3)], {"repeats": [1, 0, 3], "axis": 1}),
    (np.sort, [(3, 5)], {}), (np.sort, [(3, 5)], {"axis": 0}), (np.sort, [(3, 5)], {"axis": None}),
    (np.swapaxes, [(2, 3, 4)], {"axis1": 0, "axis2": 2}),
    (np.squeeze, [(3, 1, 2)], {"axis": 1}), (np.expand_dims, [(3, 2)], {"axis": (0, 2)}),
]


@pytest.mark.parametrize("fn, shapes, kwargs", SHAPE_CASES,
                         ids=[f"{f.__name__}-{s}-{k}" for f, s, k in SHAPE_CASES])
def test_shape_functions(fn, shapes, kwargs):
    check(fn, *(uniform(shape, seed=i) for i, shape in enumerate(shapes)), **kwargs)


W6 = np.arange(1.0, 7.0)


def ravel_transposed(x, order):
    return np.sum(np.ravel(x.T, order) * W6)


def flatten_transposed(x, order):
    return np.sum(x.T.flatten(order) * W6)


def reshape_transposed(x, order):
    return np.sum(np.reshape(x.T, (2, 3), order=order) * np.reshape(W6, (2, 3)))


def reshape_method(x, order):
    return np.sum(x.reshape(3, 2, order=order) * np.reshape(W6, (3, 2)))


ORDERS = [(fn, order) for fn in (ravel_transposed, flatten_transposed)
          for order in ("C", "F", "A", "K", "f", None)] + [
          (fn, order) for fn in (reshape_transposed, reshape_method)
          for order in ("C", "F", "A", "a")]  # np.reshape has no order "K"


@pytest.mark.parametrize("fn, order", ORDERS, ids=[f"{f.__name__}-{o}" for f, o in ORDERS])
def test_ravel_flatten_and_reshape_read_in_their_order(fn, order):
    ys.check_grad(fn, uniform((2, 3)), order)  # x.T is Fortran-contiguous


def ravel_any_order(x):
    return np.sum(np.ravel(x, "A") * W6)


def test_ravel_in_memory_order_is_guarded_on_the_layout():
    df = ys.simplegrad(ravel_any_order, uniform((2, 3)))
    assert np.allclose(df(uniform((2, 3)))[1], np.reshape(W6, (2, 3)))
    with pytest.raises(ys.errors.ControlFlowChanged, match=r"`np\.isfortran\(x\)` was False"):
        df(np.asfortranarray(uniform((2, 3))))
    _, g = ys.grad(ravel_any_order, np.asfortranarray(uniform((2, 3))), dynamic=True)
    assert np.allclose(g[0], np.reshape(W6, (3, 2)).T)


@pytest.mark.parametrize("shape", [(1, 6), (6,), (6, 1)], ids=str)
def test_ravel_in_memory_order_of_one_long_axis_needs_no_guard(shape):
    df = ys.simplegrad(ravel_any_order, uniform(shape))
    assert "isfortran" not in df.source
    assert np.allclose(df(uniform(shape))[1], np.reshape(W6, shape))


def ravel_a_strided_view(x):
    return np.sum(np.ravel(x[:, ::2], "K") * W6[:4])


def test_ravel_in_stride_order_of_a_strided_view_is_refused():
    with pytest.raises(ys.errors.NoDiffRuleError, match="order='K'"):
        ys.grad(ravel_a_strided_view, uniform((2, 4)))


def joins(a, b, c):
    return (np.sum(np.concatenate([a, b], axis=0) ** 2) + np.sum(np.stack([a, b], axis=-1) * 3.0)
            + np.sum(np.hstack([a, b]) ** 3) + np.sum(np.vstack([a[0], b[1]]) * 2.0)
            + np.sum(np.dstack([a, b]) ** 2) + np.sum(np.column_stack([c, a[:, 0]]) ** 2)
            + np.sum(np.hstack([c, c]) * 1.5) + np.sum(np.stack([a[0, 0], b[1, 1], c[0]]) ** 2))


def test_concatenate_stack_and_friends():
    ys.check_grad(joins, uniform((2, 3)), uniform((2, 3), seed=1), uniform((2,), seed=2))


def splits(x):
    first, second, third = np.split(x, 3, axis=1)
    pieces = np.array_split(x, [1], axis=0)
    return np.sum(first * 2.0) + np.sum(third ** 2) + np.sum(pieces[1] ** 3)


def test_split_with_unused_pieces():
    ys.check_grad(splits, uniform((3, 6)))


def takes(x, rows, order):
    return (np.sum(np.take(x, rows, axis=0) ** 2) + np.sum(np.take(x, [0, 5, 5]) * 2.0)
            + np.sum(np.take_along_axis(x, order, axis=1) ** 3))


def test_take_and_take_along_axis_with_repeats():
    x = uniform((3, 4))
    ys.check_grad(takes, x, np.array([2, 0, 2]), np.array([[0, 0, 3], [1, 2, 1], [3, 3, 3]]))


def taken_along(x, order, axis):
    return np.sum(np.take_along_axis(x, order, axis=axis) ** 3)


@pytest.mark.parametrize("shape, order, axis", [
    ((3, 4), [[0, 0, 1]], 1),  # the indices stretch the array's rows
    ((1, 4), [[0, 3, 3], [1, 1, 2]], 1),  # the array's one row is stretched
    ((3, 1), [[0, 2, 2], [1, 1, 0]], 0),
    ((3, 4), [0, 5, 5, 11], None),  # the flat array
])
def test_take_along_axis_broadcasting_and_flat(shape, order, axis):
    """Found by a hostile review: the gradient's index ran over the indices'
    axes, not the array's, and axis=None failed inside the rule."""
    ys.check_grad(lambda x: taken_along(x, np.array(order), axis), uniform(shape))


def builds_arrays(a, b):
    m = np.array([[a[0], b], [a[1] * 2.0, a[0] * b]])
    v = np.asarray([b, b * 2.0, a[1]])
    return np.sum(m ** 2) + np.sum(v * np.arange(3.0))


def test_array_construction_from_traced_values():
    ys.check_grad(builds_arrays, uniform((2,)), 0.7)


def casts(x):
    return np.sum(x.astype(np.float32).astype(np.float64) ** 2)


def test_float32_gradients_stay_float32():
    x32 = uniform((3, 4)).astype(np.float32)
    for fn in (np.tanh, np.exp, np.sort, np.cumsum):
        _, g = ys.grad(apply, fn, {}, np.float32(1.0), x32)
        assert g[3].dtype == np.float32, fn.__name__
    _, g = ys.grad(casts, uniform((3,)))
    assert g[0].dtype == np.float64


# --- linear algebra ----------------------------------------------------------------

EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]),
           ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("i,i->", [(4,), (4,)]),
           ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,jk", [(2, 3), (3, 4)]),
           ("bij,jk->bk", [(2, 3, 4), (4, 5)]), ("i,j->ij", [(3,), (2,)]),
           ("...i,...i->...", [(2, 3, 4), (3, 4)]), ("ijk->kj", [(2, 3, 4)]),
           ("...j,j->...", [(3, 3), (3,)]), ("...j,j", [(4, 2, 3), (3,)]),
           ("...ij,...j->...i", [(2, 3, 4), (4,)]), ("i...,i...->...", [(3, 2, 1), (3, 1, 4)]),
           ("...i,...i", [(2, 1, 3), (5, 3)]), ("...,...->...", [(2, 3), (3,)]),
           ("a...b,b->...", [(2, 3, 4, 5), (5,)]), ("i,...", [(3,), (2, 2)]),
           ("ij,kj->ik", [(1, 3), (4, 3)]), ("ba", [(2, 3)]), ("bA", [(2, 3)])]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum(subscripts, shapes):
    arrays = [uniform(shape, seed=i) for i, shape in enumerate(shapes)]
    w = uniform(np.shape(np.einsum(subscripts, *arrays)), seed=9)

    def contract(w, *arrays):
        return np.sum(np.einsum(subscripts, *arrays) * w)

    ys.check_grad(contract, w, *arrays)


def interleaved(a, b, c):
    return (np.sum(np.einsum(a, [0, 1], b, [1]) ** 2)
            + np.sum(np.einsum(a, [0, Ellipsis], c, [Ellipsis, 2], [Ellipsis, 0, 2]) ** 2))


def test_einsum_in_interleaved_form():
    ys.check_grad(interleaved, uniform((2, 3)), uniform((3,), seed=1), uniform((3, 4), seed=2))


def einsum_of_an_outer_product(x):
    return np.sum(np.einsum("...j,j->...", np.outer(x, x), x))


def test_einsum_with_an_ellipsis_of_traced_values():
    ys.check_grad(einsum_of_an_outer_product, np.array([0.5, 1.5, 2.0]))


PRODUCTS = [(np.vdot, [(2, 3), (3, 2)], {}), (np.inner, [(4,), (4,)], {}),
            (np.inner, [(2, 4), (3, 4)], {}), (np.tensordot, [(2, 3, 4), (3, 4, 5)], {}),
            (np.tensordot, [(2, 3), (3, 2)], {"axes": ([1, 0], [0, 1])}),
            (np.tensordot, [(2, 3), (3, 4)], {"axes": 1}),
            (np.kron, [(2, 3), (3, 2)], {}), (np.kron, [(3,), (2,)], {}),
            (np.kron, [(2, 2), (3,)], {})]


@pytest.mark.parametrize("fn, shapes, kwargs", PRODUCTS,
                         ids=[f"{f.__name__}-{s}" for f, s, _ in PRODUCTS])
def test_products(fn, shapes, kwargs):
    check(fn, *(uniform(shape, seed=i) for i, shape in enumerate(shapes)), **kwargs)


def well_conditioned(shape, seed=0):
    a = uniform(shape, seed=seed)
    return a + 3.0 * np.eye(shape[-1])


@pytest.mark.parametrize("fn", [np.linalg.inv, np.linalg.det], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)], ids=str)
def test_inverse_and_determinant(fn, shape):
    check(fn, well_conditioned(shape))


def log_abs_det(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return np.sum(logabsdet * 2.0)


def test_slogdet():
    ys.check_grad(log_abs_det, well_conditioned((3, 3)))
    ys.check_grad(log_abs_det, well_conditioned((2, 3, 3)))


@pytest.mark.parametrize("b_shape", [(3,), (3, 2)], ids=str)
def test_solve(b_shape):
    check(np.linalg.solve, well_conditioned((3, 3)), uniform(b_shape, seed=3))


def cholesky_of(b, w):
    return np.sum(np.linalg.cholesky(b @ b.T + 3.0 * np.eye(3)) * w)


def eigh_of(b, w, v_weight):
    values, vectors = np.linalg.eigh(b + b.T + np.diag([0.0, 3.0, 7.0]))
    return np.sum(values * w) + np.sum(np.abs(vectors) * v_weight)


def qr_of(a, wq, wr):
    q, r = np.linalg.qr(a)
    return np.sum(q * wq) + np.sum(r * wr)


def test_cholesky():
    ys.check_grad(cholesky_of, uniform((3, 3)), uniform((3, 3), seed=1))


def test_eigh():
    ys.check_grad(eigh_of, uniform((3, 3)), uniform((3,), seed=1), uniform((3, 3), seed=2))


def symmetric_in_one_triangle(shape, uplo, seed=0):
    """A positive definite matrix in the triangle `uplo` ("L" or "U"), other
    values in the other one: NumPy reads only the first."""
    b = uniform(shape, seed=seed)
    s = b @ np.swapaxes(b, -1, -2) + 3.0 * np.eye(shape[-1])
    other = np.triu(uniform(shape, seed=seed + 1), 1)
    return s + (other if uplo.upper() == "L" else np.swapaxes(other, -1, -2))


def cholesky_factor(a, w, upper):
    return np.sum(np.linalg.cholesky(a, upper=upper) * w)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)], ids=str)
def test_cholesky_reads_one_triangle(shape, upper):
    a = symmetric_in_one_triangle(shape, "U" if upper else "L")
    ys.check_grad(cholesky_factor, a, uniform(shape, seed=5), upper)


def eigh_both(a, w, wv, uplo):
    values, vectors = np.linalg.eigh(a, uplo)
    return np.sum(values * w) + np.sum(np.abs(vectors) * wv)


def eigh_values(a, w, uplo):
    return np.sum(np.linalg.eigh(a, UPLO=uplo)[0] * w)


def eigvalsh_values(a, w, uplo):
    return np.sum(np.linalg.eigvalsh(a, UPLO=uplo) * w)


@pytest.mark.parametrize("uplo", ["L", "U", "u"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)], ids=str)
def test_eigh_and_eigvalsh_read_one_triangle(shape, uplo):
    a = symmetric_in_one_triangle(shape, uplo) + np.diag([0.0, 3.0, 7.0])
    w = uniform(shape[:-1], seed=6)
    ys.check_grad(eigh_both, a, w, uniform(shape, seed=7), uplo)
    ys.check_grad(eigh_values, a, w, uplo)
    ys.check_grad(eigvalsh_values, a, w, uplo)


@pytest.mark.parametrize("fn", [eigh_values, eigvalsh_values], ids=lambda f: f.__name__)
def test_eigenvalues_alone_need_no_gap_between_them(fn):
    """A sum of eigenvalues weighted alike within each repeated one is smooth."""
    a = np.diag([1.0, 1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by a zero gap
        ys.check_grad(fn, a, np.array([0.5, 0.5, 2.0]), "L")
        assert np.allclose(ys.grad(fn, np.eye(3), np.ones(3), "L")[1][0], np.eye(3))


def determinant(a):
    return np.sum(np.linalg.det(a))


RANK_DEFICIENT = {
    "rank n-1": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.5], [0.5, 1.0, 0.1]]),
    "rank n-2": np.outer([0.5, 1.5, 2.0], [1.0, -1.0, 0.5]),
    "zero": np.zeros((2, 2)),
    "stack": np.stack([np.outer([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]), well_conditioned((3, 3))]),
}


@pytest.mark.parametrize("a", RANK_DEFICIENT.values(), ids=RANK_DEFICIENT.keys())
def test_determinant_of_singular_matrices_is_the_adjugate(a):
    ys.check_grad(determinant, a)


def cofactors(a):
    """The gradient of det by its definition: signed minors."""
    n = len(a)
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("rank", ["rank n-1", "rank n-2"])
def test_determinant_gradient_of_singular_matrices_is_exact(rank):
    a = RANK_DEFICIENT[rank]
    _, g = ys.grad(determinant, a)
    assert np.allclose(g[0], cofactors(a), rtol=1e-12, atol=1e-12)
    assert rank == "rank n-1" or np.allclose(g[0], 0.0, atol=1e-12)


def sign_times_log(a):
    return np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1]


def named_parts(a):
    return np.sum(np.linalg.slogdet(a).logabsdet * 2.0 + np.linalg.slogdet(a).sign)


def of_a_diagonal(x):
    return np.linalg.slogdet(np.diag(x))[0] * np.linalg.slogdet(np.diag(x))[1]


@pytest.mark.parametrize("fn, a", [(sign_times_log, well_conditioned((3, 3))),
                                   (named_parts, -well_conditioned((2, 3, 3))),
                                   (of_a_diagonal, np.array([0.5, -1.5, 2.0]))],
                         ids=["sign-times-log", "named", "diagonal"])
def test_the_sign_of_slogdet_passes_no_gradient(fn, a):
    ys.check_grad(fn, a)


def test_slogdet_of_a_singular_matrix_is_refused_at_the_users_line():
    with pytest.raises(ys.errors.NoDiffRuleError, match="slogdet") as error:
        ys.grad(log_abs_det, RANK_DEFICIENT["rank n-1"])
    assert "test_numpy_breadth.py" in str(error.value)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3)], ids=str)
def test_qr(shape):
    ys.check_grad(qr_of, well_conditioned(shape) if shape[0] == shape[1] else uniform(shape),
                  uniform(shape, seed=1), uniform((shape[1], shape[1]), seed=2))


def qr_q_only(a, w):
    return np.sum(np.linalg.qr(a)[0] * w)


def qr_r_only(a, w):
    return np.sum(np.linalg.qr(a).R * w)


def eigh_vectors_only(a, w):
    return np.sum(np.abs(np.linalg.eigh(a).eigenvectors) * w)


@pytest.mark.parametrize("fn, a_shape, w_shape", [
    (qr_q_only, (4, 3), (4, 3)), (qr_q_only, (3, 3), (3, 3)), (qr_r_only, (4, 3), (3, 3)),
    (eigh_vectors_only, (3, 3), (3, 3)), (eigh_vectors_only, (2, 3, 3), (2, 3, 3)),
], ids=["q-tall", "q-square", "r", "eigenvectors", "eigenvectors-stack"])
def test_tuple_valued_rules_with_one_output_used(fn, a_shape, w_shape):
    a = uniform(a_shape) + (np.diag([0.0, 3.0, 7.0]) if fn is eigh_vectors_only else 0.0)
    ys.check_grad(fn, a, uniform(w_shape, seed=1))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)], ids=str)
def test_pinv(shape):
    check(np.linalg.pinv, uniform(shape))


# --- the registry -------------------------------------------------------------

def test_non_differentiable_functions_pass_no_gradient():
    def uses(x):
        return np.sum(x * np.sign(x) + np.floor(x) + np.round(x) + np.heaviside(x, 0.5)
                      + np.argmax(x) + np.zeros_like(x) + np.isfinite(x) + np.random.normal(size=3))

    x = uniform((3,), 0.1, 0.9)
    _, g = ys.grad(uses, x)
    assert np.allclose(g[0], np.sign(x))


def test_data_shaped_results_are_guarded():
    def distinct(x):
        return np.sum(np.unique(np.round(x)) ** 2)

    df = ys.simplegrad(distinct, np.array([0.1, 1.1, 1.2]))
    df(np.array([0.2, 1.3, 1.4]))
    with pytest.raises(ys.errors.ControlFlowChanged):
        df(np.array([0.2, 1.3, 2.4]))


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.where(x > 1.0, np.sqrt(x - 1.0), x)),
    lambda x: np.sum(np.where(x > 0, np.log(np.where(x > 0, x, 1.0)) * np.sqrt(x), 0.0)),
    lambda x: np.sum(np.where(np.abs(x) < 1.0, np.arcsin(x), 2.0 * x) ** 2),
    lambda x: np.sum(np.where(x != 0, 1.0 / x, 0.0) * 3.0),
], ids=["safe sqrt", "log of a safe value", "arcsin inside its domain", "safe reciprocal"])
def test_a_branch_np_where_did_not_take_passes_exactly_zero(f):
    """The untaken branch may be inf or NaN there; its gradient is 0, not NaN."""
    x = np.array([0.5, 2.0, -1.5, 0.25])
    with np.errstate(all="ignore"):
        value, (dx,) = ys.grad(f, x)
        assert value == pytest.approx(f(x))
        assert np.all(np.isfinite(dx))
        ys.check_grad(f, x)


@pytest.mark.parametrize("scalar_type", [np.float64, np.longdouble])
def test_numpy_scalar_types_cast_with_a_gradient(scalar_type):
    def f(x):
        return scalar_type(x[0]) * 2.0 + np.sum(scalar_type(x[1]) * x)

    x = np.array([0.5, 1.5])
    assert ys.grad(f, x)[0] == pytest.approx(f(x))
    ys.check_grad(f, x)


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.add(x, x, dtype=np.float64) * np.multiply(x, 3.0, casting="same_kind")),
    lambda x: np.sum(np.exp(x, dtype=np.float64) + np.subtract(x, 1.0, order="C")),
], ids=["dtype and casting", "dtype and order"])
def test_ufunc_keywords_that_only_say_how_to_store_keep_the_derivative(f):
    x = np.array([0.5, -1.5, 2.0])
    assert ys.grad(f, x)[0] == pytest.approx(f(x))
    ys.check_grad(f, x)


@pytest.mark.parametrize("f", [
    lambda x: np.sum(np.add(x, 1.0, where=x > 0, out=np.zeros(3) * x)),
    lambda x: np.sum(np.exp(x, where=np.array([True, False, True]), out=x * 2.0) ** 2),
    lambda x: np.sum(np.multiply(x, x[::-1], where=x < 1.0, out=np.ones((2, 3)))),
], ids=["data mask", "static mask", "broadcast into a bigger out"])
def test_a_ufunc_with_where_writes_only_where_the_mask_is_true(f):
    for x in (np.array([0.5, -1.5, 2.0]), np.array([-0.3, 0.7, 1.2])):
        assert ys.grad(f, x, dynamic=True)[0] == pytest.approx(f(x))
        ys.check_grad(f, x)


def test_a_ufunc_with_where_and_no_out_is_refused_before_it_runs():
    def f(x):
        return np.sum(np.add(x, 1.0, where=x > 0))

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's own warning would come first
        with pytest.raises(ys.errors.UnsupportedSyntaxError, match="without out="):
            ys.grad(f, np.array([0.5, -1.5, 2.0]))


def numpy_two_spellings(x):
    return (np.sum(x ** 2, initial=1.5) + np.nansum(x, initial=0.5) + np.var(x, correction=1)
            + np.std(x, axis=0, correction=1).sum() + np.nanvar(x, correction=1)
            + np.nanstd(x, correction=1))


def test_numpy_2_parameters_of_the_reductions():
    ys.check_grad(numpy_two_spellings, uniform((4, 3), -1, 1))
