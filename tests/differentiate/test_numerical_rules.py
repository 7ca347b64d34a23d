"""Numerical methods on samples (np.diff, np.gradient, np.trapezoid,
np.polyval, np.convolve, np.correlate, np.interp) and the padding, splitting
and windowing rules: each against central finite differences, over the
keyword variants NumPy accepts."""

import numpy as np
import pytest
from helpers_rule_checks import check, uniform
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

import yota_src as ys
from yota_src.errors import NoDiffRuleError

SETTINGS = settings(max_examples=25, deadline=None)


def coordinates(n, seed=1):
    """Increasing sample positions, unevenly spaced."""
    return np.cumsum(uniform(n, 0.5, 1.5, seed))


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


# --- np.diff -----------------------------------------------------------------------


@SETTINGS
@given(shape=shapes, data=st.data())
def test_diff(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = data.draw(st.integers(0, 3), label="n")
    parts = {}
    for side in ("prepend", "append"):
        kind = data.draw(st.sampled_from([None, "scalar", "array"]), label=side)
        if kind == "scalar":
            parts[side] = 0.25
        elif kind == "array":
            part_shape = list(shape)
            part_shape[axis] = data.draw(st.integers(1, 2), label=f"{side} length")
            parts[side] = uniform(tuple(part_shape), seed=2)
    names = sorted(parts)

    def differences(a, *values):
        return np.diff(a, n, axis, **dict(zip(names, values)))

    check(differences, uniform(shape), *(parts[name] for name in names))


def test_diff_of_a_python_list():
    check(lambda x: np.diff([x, 2 * x, x * x], n=2), 0.7)


# --- np.gradient -------------------------------------------------------------------


def spacing(kind, n, seed):
    """np.gradient's spacing for one axis: a scalar or coordinates."""
    return 0.7 if kind == "scalar" else coordinates(n, seed)


@SETTINGS
@given(shape=st.lists(st.integers(3, 5), min_size=1, max_size=3).map(tuple),
       edge_order=st.sampled_from([1, 2]), data=st.data())
@pytest.mark.slow
def test_gradient_with_traced_spacings(shape, edge_order, data):
    """Each axis's spacing is a differentiated argument: a scalar or coordinates."""
    axes = data.draw(st.sampled_from([None, -1, 0, tuple(range(len(shape)))[::-1]]),
                     label="axis")
    listed = range(len(shape)) if axes is None or isinstance(axes, tuple) else [axes]
    kinds = [data.draw(st.sampled_from(["scalar", "coordinates"])) for _ in listed]
    order = list(listed)[::-1] if isinstance(axes, tuple) else list(listed)
    spacings = [spacing(kind, shape[a], seed) for seed, (kind, a) in enumerate(zip(kinds, order))]

    def derivative(f, *spacings):
        return np.stack(np.atleast_1d(*np.gradient(f, *spacings, axis=axes,
                                                   edge_order=edge_order)))

    check(derivative, uniform(shape), *spacings)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacings", [(), (0.5,), (2.0, 0.25)], ids=str)
def test_gradient_with_constant_scalar_spacings(spacings, edge_order):
    check(lambda f: np.stack(np.gradient(f, *spacings, edge_order=edge_order)),
          uniform((4, 3)))


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_with_constant_coordinates(edge_order):
    check(lambda f: np.gradient(f, [0.0, 1.0, 2.5, 3.0, 4.5], edge_order=edge_order),
          uniform(5))


def test_gradient_with_one_scalar_spacing_for_every_axis():
    check(lambda f, h: np.stack(np.gradient(f, h)), uniform((3, 4)), 0.3)


def test_gradient_when_only_one_axis_result_is_used():
    check(lambda f, x: np.gradient(f, 0.5, x)[1], uniform((3, 4)), coordinates(4))


def test_gradient_of_the_fewest_samples():
    check(lambda f: np.gradient(f), uniform(2))
    check(lambda f, x: np.gradient(f, x, edge_order=2), uniform(3), coordinates(3))


# --- np.trapezoid ------------------------------------------------------------------


@SETTINGS
@given(shape=st.lists(st.integers(2, 4), min_size=1, max_size=3).map(tuple),
       kind=st.sampled_from(["none", "dx", "x along", "x full"]), data=st.data())
def test_trapezoid(shape, kind, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    y = uniform(shape)
    if kind == "none":
        check(lambda y: np.trapezoid(y, axis=axis), y)
    elif kind == "dx":
        check(lambda y, dx: np.trapezoid(y, dx=dx, axis=axis), y, 0.3)
    elif kind == "x along":
        check(lambda y, x: np.trapezoid(y, x, axis=axis), y, coordinates(shape[axis]))
    else:
        x = np.cumsum(uniform(shape, 0.5, 1.5, seed=3), axis=axis)
        check(lambda y, x: np.trapezoid(y, x, axis=axis), y, x)


def test_trapezoid_with_constant_coordinates():
    check(lambda y: np.trapezoid(y, [0.0, 0.5, 2.0]), uniform((2, 3)))


def test_trapezoid_coordinates_broadcast_against_the_samples():
    check(lambda y, x: np.trapezoid(y, x), uniform((3, 4)), coordinates(4)[None, :])


def test_trapezoid_spacing_is_unread_when_coordinates_are_given():
    check(lambda y, x, dx: np.trapezoid(y, x, dx), uniform(4), coordinates(4), 0.3)


def test_trapezoid_of_a_python_list():
    check(lambda y: np.trapezoid([y, 2 * y, y * y]), 0.7)


@pytest.mark.skipif(not hasattr(np, "trapz"), reason="np.trapz was removed in NumPy 2.4")
def test_trapz_is_trapezoid():
    check(lambda y, x: np.trapz(y, x), uniform(4), coordinates(4))  # noqa: NPY201


# --- np.polyval --------------------------------------------------------------------


@pytest.mark.parametrize("x_shape", [(), (4,), (2, 3)], ids=str)
@pytest.mark.parametrize("degree", [0, 1, 3])
def test_polyval(degree, x_shape):
    check(lambda p, x: np.polyval(p, x), uniform(degree + 1, seed=1), uniform(x_shape))


def test_polyval_of_a_list_of_coefficients():
    check(lambda c, x: np.polyval([c, 2.0, c * c], x), 0.4, uniform(3))


def test_polyval_of_matrix_coefficients_is_refused():
    with pytest.raises(NoDiffRuleError, match="1-D coefficients"):
        ys.grad(lambda p: np.sum(np.polyval(p, 0.5)), uniform((2, 3)))


@pytest.mark.parametrize("increasing", [False, True])
@pytest.mark.parametrize("columns", [None, 0, 1, 2, 5])
def test_vander(columns, increasing):
    check(lambda x: np.vander(x, columns, increasing), uniform(4))


def test_vander_at_zero_has_no_zero_to_a_negative_power():
    check(lambda x: np.vander(x, 4), np.array([0.0, 1.0, -0.5]))


def test_vander_of_a_list():
    check(lambda c: np.vander([c, 2.0, c * c], 3, increasing=True), 0.4)


# --- quantiles, percentiles, medians -----------------------------------------------

AXES = st.sampled_from([None, 0, -1, (0, 2), (2, 0)])


@SETTINGS
@given(axis=AXES, keepdims=st.booleans(),
       method=st.sampled_from(["linear", "lower", "higher", "midpoint"]),
       q=st.one_of(st.floats(0.0, 1.0), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=3)))
@pytest.mark.slow
def test_quantile_of_samples(axis, keepdims, method, q):
    check(lambda a: np.quantile(a, q, axis=axis, method=method, keepdims=keepdims),
          uniform((3, 4, 5)))


@SETTINGS
@given(axis=AXES, keepdims=st.booleans(), q=st.floats(0.01, 0.99))
@pytest.mark.slow
def test_quantile_moves_with_q(axis, keepdims, q):
    """q between ranks: the slope between them; at a rank, the mean of both sides."""
    check(lambda a, q: np.quantile(a, q, axis=axis, keepdims=keepdims), uniform((3, 4, 5)), q)


def test_quantile_of_an_array_of_q():
    check(lambda a, q: np.quantile(a, q, axis=1), uniform((3, 4)), np.array([0.1, 0.5, 0.95]))


def test_quantile_at_a_rank_takes_the_mean_of_both_slopes():
    check(lambda a, q: np.quantile(a, q), uniform(5), 0.5)


def test_percentile():
    check(lambda a, q: np.percentile(a, q, axis=0), uniform((3, 4)), np.array([[10.0, 55.0]]))


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, True), (-1, False), ((0, 1), False)],
                         ids=str)
def test_median(axis, keepdims):
    check(lambda a: np.median(a, axis=axis, keepdims=keepdims), uniform((3, 4, 5)))


def test_median_of_a_list():
    check(lambda x: np.median([x, 2.0, x * x, 0.3]), 0.7)


def with_nans():
    a = uniform((3, 5))
    a[0, 2] = np.nan
    a[2, :4] = np.nan
    return a


def test_nan_quantiles_rank_the_numbers_only():
    check(lambda a: np.nanmedian(a, axis=-1), with_nans())
    check(lambda a, q: np.nanquantile(a, q, axis=-1), with_nans(), np.array([0.3, 0.8]))
    check(lambda a: np.nanpercentile(a, 40, axis=1, keepdims=True), with_nans())


@pytest.mark.parametrize("options", [{"method": "nearest"}, {"method": "hazen"}], ids=str)
def test_other_quantile_methods_are_refused(options):
    with pytest.raises(NoDiffRuleError, match="covers method='linear', 'lower', 'higher'"):
        ys.grad(lambda a: np.quantile(a, 0.3, **options), uniform(5))


# --- np.convolve and np.correlate --------------------------------------------------


@SETTINGS
@given(n=st.integers(1, 6), m=st.integers(1, 6),
       mode=st.sampled_from(["full", "same", "valid", 0, 1, 2]),
       fn=st.sampled_from([np.convolve, np.correlate]))
def test_convolutions(fn, n, m, mode):
    check(lambda a, v: fn(a, v, mode), uniform(n), uniform(m, seed=1))


def test_convolve_of_lists():
    check(lambda c, v: np.convolve([c, 2.0, c], v, "same"), 0.4, uniform(5))


# --- np.interp ---------------------------------------------------------------------


@SETTINGS
@given(x_shape=st.sampled_from([(), (5,), (2, 3)]), ends=st.booleans(), data=st.data())
@pytest.mark.slow
def test_interp(x_shape, ends, data):
    xp, fp = coordinates(6), uniform(6, seed=2)
    x = uniform(x_shape, xp[0] - 1, xp[-1] + 1, seed=data.draw(st.integers(0, 100)))
    if ends:
        check(lambda x, xp, fp, left, right: np.interp(x, xp, fp, left, right),
              x, xp, fp, 0.3, -0.2)
    else:
        check(lambda x, xp, fp: np.interp(x, xp, fp), x, xp, fp)


def test_interp_at_the_knots_takes_the_mean_of_both_sides():
    """Where the derivative jumps, central differences see the mean of the two
    one-sided derivatives, and so does the rule. (A knot moving past a point
    bends one side, so the differences are off by about their step.)"""
    check(lambda x, xp, fp: np.interp(x, xp, fp),
          np.array([0.0, 1.0, 2.0, 2.5]), np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0]),
          atol=1e-5)


def test_interp_of_lists():
    check(lambda c, x: np.interp(x, [0.0, c, 2.0], [c, 2.0, 0.5]), 0.4, uniform(5, 0, 2))


REPEATED_KNOTS = np.array([0.0, 1.0, 1.0, 2.0, 3.0, 3.0])  # jumps at 1 and at the end, 3


@SETTINGS
@given(seed=st.integers(0, 100))
@pytest.mark.slow
def test_interp_with_repeated_knots_away_from_them(seed):
    x = uniform(6, -0.5, 3.5, seed)
    check(lambda x, xp, fp: np.interp(x, xp, fp), x, REPEATED_KNOTS, uniform(6, seed=2))


def test_interp_values_at_a_jump_get_the_weight_numpy_gives_them():
    """At a repeated knot NumPy takes the value to the right (the last at the
    end): linear in fp there too, and never divided by the zero-width segment."""
    check(lambda fp: np.interp(np.array([1.0, 3.0, 0.0]), REPEATED_KNOTS, fp), uniform(6))


def test_interp_at_a_repeated_knot_with_one_value_takes_the_mean_of_both_sides():
    check(lambda x: np.interp(x, [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 1.0, 6.0]), 1.0)


@pytest.mark.parametrize("case", [
    (lambda x: np.interp(x, [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 5.0, 6.0]), (1.0,)),
    (lambda xp: np.interp(1.0, xp, [0.0, 1.0, 5.0, 6.0]), (np.array([0.0, 1.0, 1.0, 2.0]),)),
    (lambda x: np.interp(x, [0.0, 1.0], [0.0, 1.0], right=3.0), (1.0,)),
    (lambda x: np.interp(x, [0.0, 1.0], [0.0, 1.0], left=-1.0), (0.0,)),
], ids=["x on a repeated knot", "xp", "right= at the end", "left= at the start"])
def test_interp_where_it_jumps_is_refused(case):
    fn, args = case
    with pytest.raises(NoDiffRuleError, match="no derivative in x or xp at a point where the "
                                              "interpolant jumps"):
        ys.grad(lambda *args: np.sum(fn(*args)), *args)


def test_interp_checks_for_jumps_when_the_gradient_runs():
    def curve(x):
        return np.sum(np.interp(x, REPEATED_KNOTS, np.arange(6.0)))

    df = ys.simplegrad(curve, np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="goes the other way"):
        df(np.array([0.5, 1.0]))


def test_periodic_interp_is_refused():
    with pytest.raises(NoDiffRuleError, match="period=None"):
        ys.grad(lambda fp: np.sum(np.interp(0.3, [0.0, 1.0], fp, period=2.0)), uniform(2))


# --- np.pad ------------------------------------------------------------------------


@SETTINGS
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple),
       mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]),
       data=st.data())
def test_pad(shape, mode, data):
    """Widths up to twice an axis, so reflections and wraps repeat."""
    widths = tuple((data.draw(st.integers(0, 2 * n)), data.draw(st.integers(0, 2 * n)))
                   for n in shape)
    if mode == "reflect" and any(n == 1 and sum(w) for n, w in zip(shape, widths)):
        widths = tuple((0, 0) if n == 1 else w for n, w in zip(shape, widths))
    check(lambda a: np.pad(a, widths, mode=mode), uniform(shape))


def pad_width_spelling(spelling, ndim, widths):
    """np.pad's pad_width written one of the ways NumPy reads: `widths` holds
    at least 2 * ndim numbers to draw from."""
    b, a = widths[0], widths[1]
    return {
        "int": b,
        "(n,)": (b,),
        "(b, a)": (b, a),
        "((b, a),)": ((b, a),),
        "((b,), (a,))": ((b,), (a,)),  # 2-D only: axis 0 gets (b, b), axis 1 (a, a)
        "one per axis": tuple((widths[i],) for i in range(ndim)),
        "pair per axis": tuple((widths[2 * i], widths[2 * i + 1]) for i in range(ndim)),
        "dict": {-1: (b, a), 0: widths[2]} if ndim > 1 else {0: b},
    }[spelling]


def _pads_by_dict() -> bool:
    try:
        np.pad(np.zeros(2), {0: 1})
    except TypeError:  # NumPy before 2.4: widths are integers only
        return False
    return True


PAD_WIDTH_SPELLINGS = ["int", "(n,)", "(b, a)", "((b, a),)", "((b,), (a,))", "one per axis",
                       "pair per axis"] + (["dict"] if _pads_by_dict() else [])


@SETTINGS
@given(shape=st.lists(st.integers(2, 4), min_size=1, max_size=3).map(tuple),
       spelling=st.sampled_from(PAD_WIDTH_SPELLINGS),
       mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]),
       widths=st.lists(st.integers(0, 3), min_size=6, max_size=6))
def test_pad_width_spellings(shape, spelling, mode, widths):
    """Every way NumPy reads pad_width, in every mode: (1,) and ((1,), (2,))
    are one width per axis for both sides, not a (before, after) pair."""
    pad_width = pad_width_spelling(spelling, len(shape), widths)
    if spelling == "((b,), (a,))" and len(shape) != 2:
        with pytest.raises(ValueError):  # NumPy cannot broadcast (2, 1) to (ndim, 2)
            np.pad(uniform(shape), pad_width)
        return
    check(lambda a: np.pad(a, pad_width, mode=mode), uniform(shape))


def test_pad_width_of_one_width_per_axis_pads_both_sides():
    """NumPy reads ((1,), (2,)) as ((1, 1), (2, 2)); the rule slices so too."""
    a = uniform((3, 4))
    assert np.shape(np.pad(a, ((1,), (2,)))) == (5, 8)
    for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
        check(lambda a: np.pad(a, ((1,), (2,)), mode=mode), a)


@pytest.mark.parametrize("values", [0.3, np.array([0.3, -0.2]), np.array([[0.3, -0.2]]),
                                    np.array([[0.3, -0.2], [0.5, 0.1]])],
                         ids=["scalar", "pair", "pair for all axes", "pair per axis"])
def test_pad_constant_values_get_the_sum_of_what_they_fill(values):
    check(lambda a, c: np.pad(a, ((1, 2), (3, 1)), constant_values=c), uniform((2, 3)), values)


def test_pad_constant_values_as_a_tuple_of_numbers():
    check(lambda a, c, d: np.pad(a, 2, constant_values=(c, d)), uniform(3), 0.3, -0.4)


@SETTINGS
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
       values_shape=st.sampled_from(["()", "(1,)", "(2,)", "(1, 2)", "(1, 1)", "(2, 1)",
                                     "(ndim, 1)", "(ndim, 2)"]),
       widths=st.lists(st.integers(0, 2), min_size=6, max_size=6))
def test_pad_constant_values_spellings(shape, values_shape, widths):
    """constant_values is read as pad_width is: (2, 1) for a 2-D array is one
    value per axis for both sides."""
    ndim = len(shape)
    values = uniform(eval(values_shape, {"ndim": ndim}), seed=3)
    pad_width = tuple((widths[2 * i], widths[2 * i + 1]) for i in range(ndim))
    try:
        np.pad(uniform(shape), pad_width, constant_values=values)
    except ValueError:  # shapes NumPy cannot broadcast to (ndim, 2)
        return
    check(lambda a, c: np.pad(a, pad_width, constant_values=c), uniform(shape), values)


def test_pad_constant_values_of_one_value_per_axis():
    check(lambda a, c, d: np.pad(a, ((1, 2), (3, 1)), constant_values=((c,), (d,))),
          uniform((2, 3)), 0.3, -0.4)


@pytest.mark.parametrize("options", [{"mode": "mean"}, {"mode": "linear_ramp"},
                                     {"mode": "reflect", "reflect_type": "odd"}], ids=str)
def test_other_pad_modes_are_refused(options):
    with pytest.raises(NoDiffRuleError, match="modes 'constant', 'edge', 'reflect'"):
        ys.grad(lambda a: np.sum(np.pad(a, 1, **options)), uniform(3))


# --- windows, selections, splits ---------------------------------------------------


@pytest.mark.parametrize("shape, window, axis", [
    ((6,), 3, None), ((4, 5), (2, 3), None), ((4, 5), 2, 0), ((4, 5), (2, 2), (1, 1)),
    ((3, 4, 2), (2, 2), (-1, 0)),
], ids=str)
def test_sliding_window_view(shape, window, axis):
    check(lambda a: sliding_window_view(a, window, axis), uniform(shape))


def test_sliding_window_view_by_its_module_path():
    check(lambda a: np.lib.stride_tricks.sliding_window_view(a, 2), uniform(4))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_compress(axis):
    condition = [True, False, True]
    check(lambda a: np.compress(condition, a, axis=axis), uniform((3, 3)))


def test_compress_by_a_computed_condition():
    check(lambda a: np.compress(a[0] > 0, a, axis=1), uniform((3, 5)))


@pytest.mark.parametrize("fn, shape, sections", [
    (np.hsplit, (3, 4), [1]), (np.hsplit, (5,), 5), (np.vsplit, (4, 3), 2),
    (np.dsplit, (2, 2, 3), [1, 2]),
], ids=lambda value: getattr(value, "__name__", str(value)))
def test_splits(fn, shape, sections):
    check(lambda a: np.concatenate([np.ravel(piece) * (i + 1) for i, piece in
                                    enumerate(fn(a, sections))]), uniform(shape))


def test_an_unused_split_piece_gets_zeros():
    check(lambda a: np.vsplit(a, 2)[1], uniform((4, 3)))


@pytest.mark.parametrize("fn", [np.atleast_1d, np.atleast_2d, np.atleast_3d],
                         ids=lambda f: f.__name__)
def test_atleast_nd_of_several_arrays(fn):
    check(lambda a, b, c: np.concatenate([np.ravel(x) * (i + 1) for i, x in
                                          enumerate(fn(a, b, c))]),
          0.5, uniform(3), uniform((2, 2)))


def test_atleast_nd_of_several_arrays_one_unused():
    check(lambda a, b: np.atleast_2d(a, b)[1], uniform(2), uniform(3))


def test_asfortranarray():
    check(lambda a: np.asfortranarray(a) * 2, uniform((2, 3)))


# --- parts of real numbers ---------------------------------------------------------


def test_real_part_and_conjugate_of_real_numbers_are_the_numbers():
    check(lambda a: np.real(a) * 2 + a.real * np.conj(a) + a.conj(), uniform((3, 2)))
    check(lambda x: np.real(x) * x, 0.3)


def test_imaginary_part_of_real_numbers_is_zero():
    check(lambda a: np.imag(a) + a.imag + a, uniform(3))
