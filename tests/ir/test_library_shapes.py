"""Library routines whose result sizes are expressions of their arguments'
(ir/library_shapes.py): one module, made at one size, serves another, and
its gradient there agrees with finite differences (issue 25)."""

import helpers_library_shapes as h
import numpy as np
import pytest

import yota_src as ys


def matrices(rng, n, m):
    return (rng.normal(size=(n, m)),)


CASES = {  # function: arguments at sizes (n, m)
    h.eye: matrices,
    h.ravel: lambda rng, n, m: (rng.normal(size=(n, m)), rng.normal(size=m)),
    h.repeated: lambda rng, n, m: (rng.normal(size=(n, m)),),
    h.joined: lambda rng, n, m: (rng.normal(size=(n, m)), rng.normal(size=(n, m))),
    h.einsum: lambda rng, n, m: (rng.normal(size=(n, m)), rng.normal(size=(m, n)),
                                 rng.normal(size=m)),
    h.tensordot: lambda rng, n, m: (rng.normal(size=(n, m)), rng.normal(size=(m, n))),
    h.norms: matrices,
    h.sorting: lambda rng, n, m: (rng.normal(size=n * m), rng.normal(size=n * m)),
    h.differences: lambda rng, n, m: (rng.normal(size=n + m),),
    h.padded_constant: matrices,
    h.triangles: lambda rng, n, m: (rng.normal(size=(n, n)),),
    h.logsumexp: matrices,
    h.solved: lambda rng, n, m: (rng.normal(size=(n, m)), rng.normal(size=n)),
    h.diagonal_filled: matrices,
    h.t_and_gamma: lambda rng, n, m: (rng.normal(size=(n, m)), rng.uniform(1, 2, size=m)),
    h.densities: lambda rng, n, m: (rng.normal(size=(n, m)), rng.normal(size=m)),
}


def check(f, df, args):
    value, *grads = df(*args)
    assert np.isclose(value, f(*args))
    for index, grad in enumerate(grads):
        np.testing.assert_allclose(grad, ys.api.numerical_gradient(f, args, index),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_one_module_serves_other_sizes(f):
    rng = np.random.default_rng(11)
    make = CASES[f]
    df = ys.simplegrad(f, *make(rng, 5, 3))
    specialised = df.source.split('"""')[1]
    assert not any(f" {n}," in specialised or f"({n}" in specialised for n in (3, 5)), \
        specialised
    for n, m in ((5, 3), (8, 2), (4, 6)):
        check(f, df, make(rng, n, m))


@pytest.mark.parametrize("f", [h.drawn, h.drawn_globally], ids=lambda f: f.__name__)
def test_draws_sized_by_arguments_serve_other_sizes(f):
    """The draw's size is the argument's: the module draws as one call of f would."""
    rng = np.random.default_rng(12)
    generators = (np.random.default_rng(0),) if f is h.drawn else ()
    df = ys.simplegrad(f, rng.normal(size=(4, 3)), *generators)
    assert "(N, M)" in df.source.split('"""')[1]
    x = rng.normal(size=(6, 2))
    if f is h.drawn:
        value, dx, _ = df(x, np.random.default_rng(5))
        assert np.isclose(value, f(x, np.random.default_rng(5)))
        ones = np.ones_like(x)
        np.testing.assert_allclose(dx, df(ones, np.random.default_rng(5))[1])
    else:
        np.random.seed(5)
        value, dx = df(x)
        np.random.seed(5)
        assert np.isclose(value, f(x))


def test_positions_a_mask_selects_are_as_many_as_it_selects():
    """np.nonzero and np.where of one argument (of a 1-d mask), np.flatnonzero:
    a count of the data, read at run time (issue 25), so new data with other
    counts, and other sizes, are served."""
    rng = np.random.default_rng(13)
    example = np.array([-1.2, -0.8, 0.3, 1.5, -0.2, 2.0, 0.7, -1.1, 0.1])  # (no count of 1,
    df = ys.simplegrad(h.selected_positions, example, rng.normal(size=4))  # which broadcasts)
    assert "_other_path" not in df.source
    for n, m in ((9, 4), (9, 4), (14, 2), (3, 5)):
        check(h.selected_positions, df, (rng.normal(size=n), rng.normal(size=m)))
