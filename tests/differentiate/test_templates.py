"""Every adjoint template against central finite differences, with broadcasting."""

import operator

import numpy as np
import pytest

import yota_src as ys
from yota_src.core import primitives


def weighted_unary(fn, x, w):
    return np.sum(fn(x) * w)


def weighted_binary(fn, a, b, w):
    return np.sum(fn(a, b) * w)


def weighted_reduction(fn, x, w, axis, keepdims):
    return np.sum(fn(x, axis=axis, keepdims=keepdims) * w)


def array(rng, shape, low=-1.0, high=1.0):
    if shape == "float":
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)


UNARY = [np.exp, np.sin, np.cos, np.tanh, np.square, np.negative, np.positive, np.abs, abs]
POSITIVE_UNARY = [np.log, np.sqrt]
SHAPES = [(3, 4), (5,), (), "float"]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn", UNARY + POSITIVE_UNARY, ids=lambda f: f.__name__)
def test_unary_matches_finite_differences(fn, shape, rng):
    positive = fn in POSITIVE_UNARY
    x = array(rng, shape, 0.5 if positive else -1.0, 2.0)
    if shape == "float":
        w = 0.7
    else:
        w = array(rng, np.shape(x))
    ys.check_grad(weighted_unary, fn, x, w)


BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((3, 4), ()),
                   ((), (3, 4)), ((2, 3, 4), (3, 1)), ((1, 4), (3, 1)), ((3, 4), "float"),
                   ("float", (3, 4)), ("float", "float")]
BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, np.add, np.subtract,
          np.multiply, np.divide, np.maximum, np.minimum]


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("fn", BINARY, ids=lambda f: f.__name__)
def test_binary_matches_finite_differences(fn, shapes, rng):
    a, b = array(rng, shapes[0]), array(rng, shapes[1], 0.5, 1.5)
    w = array(rng, np.shape(fn(np.asarray(a), np.asarray(b))))
    ys.check_grad(weighted_binary, fn, a, b, w)


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("fn", [operator.pow, np.power], ids=lambda f: f.__name__)
def test_power_matches_finite_differences(fn, shapes, rng):
    a, b = array(rng, shapes[0], 0.5, 2.0), array(rng, shapes[1], -1.5, 2.5)
    w = array(rng, np.shape(fn(np.asarray(a), np.asarray(b))))
    ys.check_grad(weighted_binary, fn, a, b, w)


def square_plus_cube(x):
    return np.sum(x ** 2 + x ** 3.0 + 2 ** x)


def test_power_with_static_exponents(rng):
    ys.check_grad(square_plus_cube, rng.uniform(0.5, 2.0, (3, 2)))


@pytest.mark.parametrize("fn", [np.maximum, np.minimum], ids=lambda f: f.__name__)
def test_extreme_elementwise_ties_split_the_gradient(fn):
    _, g = ys.grad(weighted_binary, fn, np.array([1.0, 2.0]), np.array([1.0, 3.0]),
                   np.ones(2))
    ours = 0.5 if fn is np.maximum else 1.0
    assert g[1][0] == 0.5 and g[2][0] == 0.5
    assert g[1][1] == (0.0 if fn is np.maximum else ours)


AXES = [None, 0, 1, -1, (0, 2)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("fn", [np.sum, np.mean, np.max, np.min, np.amax, np.amin],
                         ids=lambda f: f.__name__)
def test_reductions_match_finite_differences(fn, axis, keepdims, rng):
    x = array(rng, (2, 3, 4))
    w = array(rng, np.shape(fn(x, axis=axis, keepdims=keepdims)))
    ys.check_grad(weighted_reduction, fn, x, w, axis, keepdims)


def max_of(x):
    return np.max(x)


def test_max_ties_share_the_gradient_evenly():
    _, g = ys.grad(max_of, np.array([1.0, 3.0, 3.0, 2.0]))
    assert np.array_equal(g[0], [0.0, 0.5, 0.5, 0.0])


def row_max(x):
    return np.sum(np.max(x, axis=1))


def test_row_max_ties_share_per_row():
    _, g = ys.grad(row_max, np.array([[1.0, 1.0], [0.0, 2.0]]))
    assert np.array_equal(g[0], [[0.5, 0.5], [0.0, 1.0]])


MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                 ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)),
                 ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("fn", [operator.matmul, np.matmul], ids=lambda f: f.__name__)
def test_matmul_matches_finite_differences(fn, shapes, rng):
    a, b = array(rng, shapes[0]), array(rng, shapes[1])
    w = array(rng, np.shape(a @ b))
    ys.check_grad(weighted_binary, fn, a, b, w)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES[:4] + [((), (3,)), ((3, 2), ())], ids=str)
def test_dot_matches_finite_differences(shapes, rng):
    a, b = array(rng, shapes[0]), array(rng, shapes[1])
    w = array(rng, np.shape(np.dot(a, b)))
    ys.check_grad(weighted_binary, np.dot, a, b, w)


def test_outer_matches_finite_differences(rng):
    ys.check_grad(weighted_binary, np.outer, array(rng, (3,)), array(rng, (4,)),
                  array(rng, (3, 4)))


def reshaped(x, w):
    return np.sum(np.reshape(x, (4, 6)) * w) + np.sum(x.reshape(2, 12) * w.reshape(2, 12))


def transposed(x, w):
    return np.sum(np.transpose(x, (1, 2, 0)) * w) + np.sum(x.transpose(2, 0, 1) ** 2)


def matrix_transposed(m, w):
    return np.sum(m.T * w) + np.sum(np.transpose(m) * w)


def swapped(x, w):
    return np.sum(np.swapaxes(x, 0, 2) * np.transpose(w, (2, 1, 0)))


def squeezed(x):
    return np.sum(np.squeeze(np.expand_dims(x, 1), axis=1) ** 2) + np.sum(np.ravel(x) ** 3)


def cast(x):
    return np.sum(x.astype(np.float64) ** 2)


def test_reshape_matches_finite_differences(rng):
    ys.check_grad(reshaped, array(rng, (2, 3, 4)), array(rng, (4, 6)))


def test_transpose_matches_finite_differences(rng):
    ys.check_grad(transposed, array(rng, (2, 3, 4)), array(rng, (3, 4, 2)))


def test_matrix_transpose_matches_finite_differences(rng):
    ys.check_grad(matrix_transposed, array(rng, (2, 3)), array(rng, (3, 2)))


def test_swapaxes_matches_finite_differences(rng):
    ys.check_grad(swapped, array(rng, (2, 3, 4)), array(rng, (2, 3, 4)))


def test_squeeze_expand_ravel_match_finite_differences(rng):
    ys.check_grad(squeezed, array(rng, (3, 4)))


def test_float32_inputs_get_float32_gradients(rng):
    x = array(rng, (3, 4)).astype(np.float32)
    _, g = ys.grad(cast, x)
    assert g[0].dtype == np.float32
    assert np.allclose(g[0], 2 * x, rtol=1e-6)


def indexed(x, w):
    return (np.sum(x[1] * w[0]) + np.sum(x[:, 1:3] ** 2) + np.sum(x[::2, None] * 3.0)
            + np.sum(x[..., 0]) + x[2, 3] * x[0, 0])


def gathered(x, rows, cols):
    return np.sum(x[rows] ** 2) + np.sum(x[rows, cols] * 3.0) + np.sum(x[:, cols])


def masked(x, w):
    return np.sum(x[x > 0] ** 2) + np.sum(np.where(w > 0, x, 0.0))


def test_basic_indexing_matches_finite_differences(rng):
    ys.check_grad(indexed, array(rng, (4, 5)), array(rng, (4, 5)))


def test_repeated_integer_indices_accumulate(rng):
    rows = np.array([0, 2, 2, 2, 1])
    cols = np.array([1, 1, 4, 1, 0])
    x = array(rng, (3, 5))
    ys.check_grad(gathered, x, rows, cols)
    _, g = ys.grad(gathered, x, rows, cols)
    assert g[1] is None and g[2] is None


def test_boolean_masks_match_finite_differences(rng):
    ys.check_grad(masked, array(rng, (4, 5)), array(rng, (4, 5)))


def test_where_matches_finite_differences(rng):
    def choose(c, a, b, w):
        return np.sum(np.where(c > 0, a, b) * w)

    ys.check_grad(choose, array(rng, (3, 4)), array(rng, (3, 4)), array(rng, (4,)),
                  array(rng, (3, 4)))


def to_float(x):
    return float(np.sum(x)) * 2.0


def test_float_conversion_passes_the_gradient(rng):
    ys.check_grad(to_float, array(rng, (3,)))


def test_index_add_matches_finite_differences(rng):
    def scatter(buffer, values):
        return np.sum(primitives.index_add(buffer, (np.array([0, 0, 2]),), values) ** 2)

    ys.check_grad(scatter, array(rng, (4, 2)), array(rng, (3, 2)))
