"""Code that reads a small array element by element gets its gradient as one
array literal (passes/gather.py), and stays right (central differences)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yota_src as ys
from yota_src.api import numerical_gradient


def backward_of(fn, *args, **options) -> str:
    source = ys.simplegrad(fn, *args, **options).source
    return source[source.index("# backward"):].split("\n\n\n")[0]


def three_reads(x):
    a, b, c = x[0], x[1], x[2]
    return a * b + b * c * c - 0.5 * a


def gaps(x):
    return x[0] * x[3] + x[-1]


def matrix_reads(A):
    return A[0, 1] * A[1, 0] + A[1, 1] * A[-2, -1]


CASES = {"every element": (three_reads, (3,), "np.array([da, db, dc])"),
         "unread elements are zeros": (gaps, (6,), "0.0, 0.0"),
         "two dimensions": (matrix_reads, (2, 2), "np.array([["),
         }


@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_reads_give_one_array_literal(name, rng):
    fn, shape, spelled = CASES[name]
    x = rng.normal(size=shape)
    ys.check_grad(fn, x)
    backward = backward_of(fn, x)
    assert spelled in backward and "np.zeros" not in backward and "+=" not in backward, backward


def test_float32_and_large_arrays_keep_their_buffer(rng):
    small32 = rng.normal(size=3).astype(np.float32)
    _, dx = ys.simplegrad(three_reads, small32)(small32)
    assert dx.dtype == np.float32
    assert "np.array([" not in backward_of(three_reads, small32)
    large = rng.normal(size=200)
    ys.check_grad(gaps, large)
    assert "np.zeros" in backward_of(gaps, large)


def slice_and_element(x):
    return x[0] * np.sum(x[1:] ** 2)


def test_a_slice_read_keeps_the_buffer(rng):
    x = rng.normal(size=4)
    ys.check_grad(slice_and_element, x)
    assert "np.array([" not in backward_of(slice_and_element, x)


def weighted_reads(x, positions):
    total = 0.0
    for k, p in enumerate(positions):
        total = total + (k + 1.0) * x[p] * x[-1 - p]
    return total


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(-n, n - 1), min_size=1, max_size=6).map(tuple))),
    st.sampled_from(["roll", "unroll"]))
@pytest.mark.slow
def test_any_pattern_of_reads_gets_the_right_gradient(size_and_positions, loops):
    size, positions = size_and_positions
    x = np.linspace(-1.5, 2.0, size)
    expected = numerical_gradient(weighted_reads, (x, positions), 0)
    value, dx, _ = ys.simplegrad(weighted_reads, x, positions, loops=loops)(x, positions)
    assert np.isclose(value, weighted_reads(x, positions))
    assert dx.dtype == np.float64 and np.allclose(dx, expected, atol=1e-6)


# --- elements computed on as Python floats (passes/scalars.py) -------------------

def polynomial(x):
    a, b, c = x[0], x[1], x[2]
    return a * b - 0.5 * c * c + a / 4.0 + -b


def test_elements_are_read_as_python_floats_and_the_value_keeps_its_type(rng):
    x = rng.normal(size=3)
    ys.check_grad(polynomial, x)
    df = ys.simplegrad(polynomial, x)
    assert "a, b, c = x.tolist()" in df.source and "np.array([da, db, dc])" in df.source
    value, _ = df(x)
    assert type(value) is type(polynomial(x)) is np.float64


def few_reads(x):
    return x[0] * x[7] + 2.0 * x[-1]


def half_reads(x):
    a, b = x[0], x[1]
    return a * b - b * 0.5


def read_twice(x):
    return x[2] * x[-1] + x[0]


def returned_read(x):
    return x[1]


@pytest.mark.parametrize("fn, size, spelled", [
    (few_reads, 10, "x.item(7)"),  # a few of many: each read alone
    (half_reads, 4, "a, b, _, _ = x.tolist()"),  # half or more: unpacked, the rest `_`
    (read_twice, 3, "[-1]"),  # one position read two ways: the list is indexed
    (returned_read, 2, "_, t"),
])
def test_a_vector_read_at_half_its_positions_is_unpacked_from_one_list(fn, size, spelled, rng):
    x = rng.normal(size=size)
    ys.check_grad(fn, x)
    df = ys.simplegrad(fn, x)
    assert spelled in df.source
    value, dx = df(x)
    assert type(value) is type(fn(x)) and value == fn(x)


def divided(x):
    return x[0] / x[1] + x[2] % x[1]


def powered(x):
    return x[0] ** 2 + x[1] ** (1 / 3) + abs(x[2]) ** 0.5


def methods(x):
    a = x[0] * x[1]
    return a.item() + np.sum(a)


@pytest.mark.parametrize("fn, point", [
    (divided, [1.0, 0.0, 2.0]),  # NumPy gives inf and nan where Python floats raise
    (powered, [1e200, -8.0, 4.0]),  # overflow and a negative base: inf and nan, not an error
    (methods, [1.0, 2.0, 3.0]),  # a float has no .item()
])
def test_where_python_floats_would_differ_elements_stay_numpy_scalars(fn, point, rng):
    ys.check_grad(fn, np.array([0.7, 1.3, 2.1]))
    df = ys.simplegrad(fn, np.array([0.7, 1.3, 2.1]))
    x = np.array(point)
    with np.errstate(all="ignore"):
        expected = fn(x)
        value = df(x)[0]
    assert np.array_equal(value, expected, equal_nan=True) and type(value) is type(expected)


OPERATIONS = ["{} + {}", "{} - {}", "{} * {}", "{} / {}", "{} / 4.0", "-{}", "abs({})",
              "{} ** 2", "np.sin({})", "np.exp({}) * 0.5", "np.maximum({}, {})",
              "np.sqrt({})", "{} % {}", "{} // {}"]
expressions = st.recursive(
    st.sampled_from(["a", "b", "c", "x[0]", "x[-1]", "2.0"]),
    lambda inner: st.builds(lambda op, left, right: "(" + op.format(left, right) + ")",
                            st.sampled_from(OPERATIONS), inner, inner), max_leaves=8)
points = st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.0, 1e200, -1e-300, np.inf, np.nan]),
                  min_size=3, max_size=3)


@settings(max_examples=60, deadline=None)
@given(expressions, points)
@pytest.mark.slow
def test_generated_scalar_code_computes_what_numpy_does(tmp_path_factory, expression, point):
    """Bit for bit, nan and inf included, on points where Python
    floats would raise or differ (0, inf, nan, overflow)."""
    path = tmp_path_factory.mktemp("scalars") / "scalar_program.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    a, b, c = x[0], x[1], x[2]\n"
                    f"    return {expression} + 0.0 * a\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    f = namespace["f"]
    with np.errstate(all="ignore"):
        df = ys.simplegrad(f, np.array([0.7, 1.3, 2.1]))
        x = np.array(point)
        expected = f(x)
        value = df(x)[0]
    assert np.array_equal(value, expected, equal_nan=True), df.source
    assert type(value) is type(expected)


def with_float32(x, z):
    a = x[0] + 1.0
    return a + z[0] + np.sum(np.maximum(a * 1.0, z)) * x[1]


def compared_with_float32(x, z):
    a = x[0] * 1.0
    if a < z[0]:
        return a * 2.0
    return a * 3.0


def rounded_times_element(x):
    b = round(x[0]) * x[1]
    return b ** 2.5


def times_a_float_argument(x, s):
    b = x[0] * s
    return b ** 1.5


def plus_zero(v):
    return v[0] * v[1] + 0.0


@pytest.mark.parametrize("fn, example, point", [
    # NumPy 2 keeps float32 with a Python float, but not with a NumPy float64
    (with_float32, (np.array([0.1, 0.3]), np.array([0.1, 0.2], np.float32)), None),
    (compared_with_float32, (np.array([0.1, 0.3]), np.array([0.1, 0.2], np.float32)), None),
    # round() gives a Python int, a float argument is a Python float: ** must stay NumPy's
    (rounded_times_element, (np.array([1.3, 2.0]),), (np.array([1.3, -2.0]),)),
    (times_a_float_argument, (np.array([2.0, 1.0]), 3.0), (np.array([-2.0, 1.0]), 3.0)),
    (plus_zero, (np.array([0.5, 2.0]),), (np.array([0.0, -2.0]),)),  # -0.0 + 0.0 is 0.0
])
def test_python_floats_never_meet_what_would_treat_them_otherwise(fn, example, point):
    value, *_ = ys.simplegrad(fn, *example)(*example)
    expected = fn(*example)
    assert np.array_equal(value, expected) and type(value) is type(expected)
    if point is not None:
        with np.errstate(all="ignore"):
            value, *_ = ys.simplegrad(fn, *example)(*point)
            expected = fn(*point)
        assert np.array_equal(value, expected, equal_nan=True) and type(value) is type(expected)
        assert np.signbit(value) == np.signbit(expected)


def negated_comparison(x):
    a, b = x[0], x[1]
    keep = ~(a > b)
    return keep * a + b


def added_comparisons(x):
    a, b, c = x[0], x[1], x[2]
    return ((a < b) + (c < b)) * a + c


def printed_repr(x):
    t = x[0] * x[1]
    print(repr(t), t)
    return t


@pytest.mark.parametrize("fn, point", [
    (negated_comparison, [1.0, 2.0]),  # ~True is -2 for a Python bool, False for NumPy's
    (added_comparisons, [0.1, 0.3, 0.2]),  # True + True is 2 for Python bools
    (printed_repr, [0.1, 0.2, 0.3]),  # a string's dtype promotes with no float
])
def test_comparisons_and_strings_of_elements_keep_numpy_s_meaning(fn, point, capsys):
    x = np.array(point)
    value, dx = ys.simplegrad(fn, x)(x)
    assert value == fn(x) and type(value) is type(fn(x))
    assert np.allclose(dx, numerical_gradient(fn, (x,), 0))


def flagged(x):
    a, b, c = x[0], x[1], x[2]
    d = b * (x.shape[0] > 2)  # `b * True`: a bool is no Python float's partner
    return a * c + abs(d ** 0.5)


def test_an_element_times_a_bool_stays_a_numpy_scalar():
    df = ys.simplegrad(flagged, np.array([0.3, 4.0, 2.5]))
    x = np.array([0.3, -4.0, 2.5])  # NumPy's square root of a negative: nan, not complex
    with np.errstate(invalid="ignore"):
        assert np.isnan(df(x)[0]) and np.isnan(flagged(x))


def two_reads_and_a_sum(x):
    return x[0] * x[1] + np.sum(x ** 2)


def test_unpacking_never_pins_a_length_the_code_reads_at_run_time():
    df = ys.simplegrad(two_reads_and_a_sum, np.ones(4))  # half the positions read
    assert ".tolist()" not in df.source
    x = np.linspace(1.0, 2.0, 7)
    value, dx = df(x)
    assert value == two_reads_and_a_sum(x)
    assert np.allclose(dx, numerical_gradient(two_reads_and_a_sum, (x,), 0))
