"""Property tests: random broadcast-compatible shapes, checked with finite differences."""

import operator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import yota_src as ys

OPERATIONS = [operator.add, operator.sub, operator.mul, operator.truediv, np.maximum,
              np.minimum, operator.pow]
REDUCTIONS = [np.sum, np.mean, np.max, np.min]


def combine(op, reduce, a, b, w):
    return np.sum(reduce(op(a, b) * w, axis=-1)) if np.ndim(w) else np.sum(op(a, b) * w)


@settings(max_examples=60, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       op=st.sampled_from(OPERATIONS), reduce=st.sampled_from(REDUCTIONS),
       seed=st.integers(0, 2**32 - 1))
def test_broadcasting_binary_ops_match_finite_differences(shapes, op, reduce, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.5, shapes.input_shapes[0])
    b = rng.uniform(0.5, 1.5, shapes.input_shapes[1])
    w = rng.uniform(-1.0, 1.0, shapes.result_shape)
    ys.check_grad(combine, op, reduce, a, b, w)


def affine(W, x):
    return np.sum(np.tanh(W @ x))


def test_wrt_limits_the_gradients(rng):
    W, x = rng.standard_normal((2, 3)), rng.standard_normal(3)
    _, g = ys.grad(affine, W, x, wrt=[0])
    assert g[1] is None and g[0].shape == (2, 3)
    _, g_all = ys.grad(affine, W, x)
    assert np.allclose(g[0], g_all[0])
