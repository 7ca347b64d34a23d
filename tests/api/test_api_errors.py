"""The API's own errors: each says what is wrong and what to do, naming the
user's function and line; none is an internal crash or a silent default."""

import functools

import numpy as np
import pytest

import yota_src as ys
from yota_src.api import numerical_gradient
from yota_src.errors import UnsupportedSyntaxError


def returns_nothing(x):
    np.sum(x)


def returns_pair(x):
    return np.sum(x), np.mean(x)


def returns_vector(x):
    return x * 2.0


def returns_dict(x):
    return {"loss": np.sum(x)}


@pytest.mark.parametrize("f, says", [
    (returns_nothing, r"returned None.*forget to `return`"),
    (returns_pair, r"returned a tuple of 2.*loss alone"),
    (returns_dict, r"returned a dict of 1"),
    (returns_vector, r"returned ndarray of shape \(3,\).*np.sum"),
])
def test_a_non_scalar_result_is_refused_naming_the_function(f, says):
    with pytest.raises(ValueError, match=f"{f.__name__}\\(\\) \\(test_api_errors.py:\\d+\\) "
                                         f"must return a scalar.*{says}"):
        ys.grad(f, np.ones(3))


def test_the_refusal_points_at_the_return_line():
    with pytest.raises(ValueError) as raised:
        ys.grad(returns_pair, np.ones(3))
    frame = raised.tb
    while frame.tb_next is not None:
        frame = frame.tb_next
    assert frame.tb_frame.f_code.co_filename == __file__
    assert frame.tb_lineno == returns_pair.__code__.co_firstlineno + 1


def size_one(x):
    return np.sum(x, keepdims=True) * 2.0


def test_a_size_one_array_counts_as_a_scalar_loss():
    x = np.array([0.5, 1.5])
    value, g = ys.grad(size_one, x)
    assert np.shape(value) == (1,) and np.allclose(g[0], 2.0)


def two_args(a, b):
    return np.sum(a * b)


@pytest.mark.parametrize("args", [(np.ones(2),), (np.ones(2), np.ones(2), np.ones(2))])
def test_a_wrong_number_of_arguments_names_the_function(args):
    with pytest.raises(TypeError, match=r"two_args\(\) \(test_api_errors.py:\d+\) cannot be "
                                        rf"called with {len(args)} argument"):
        ys.grad(two_args, *args)


def test_the_jax_habit_says_how_to_call_grad():
    with pytest.raises(TypeError, match=r"not a function.*ys.grad\(f, x\)"):
        ys.grad(two_args)(np.ones(2), np.ones(2))


@pytest.mark.parametrize("wrt, error, says", [
    (2, ValueError, "index 2 is out of range"),
    (-1, ValueError, "index -1 is out of range"),
    ("c", ValueError, "no argument named 'c'; its arguments are named: a, b"),
    ([0, "z"], ValueError, "no argument named 'z'"),
    (True, TypeError, "argument indices"),
    ([0.5], TypeError, "argument indices"),
    (1.0, TypeError, "argument index or name, or a sequence"),
    ([], ValueError, "chooses no argument"),
])
def test_a_bad_wrt_is_refused(wrt, error, says):
    with pytest.raises(error, match=says):
        ys.grad(two_args, np.ones(2), np.ones(2), wrt=wrt)


@pytest.mark.parametrize("api", [ys.grad, ys.simplegrad])
def test_keyword_arguments_are_refused_with_a_way_out(api):
    with pytest.raises(TypeError, match=r"positionally.*b=\.\.\."):
        api(two_args, np.ones(2), b=np.ones(2))


def test_a_partial_is_differentiated_in_its_remaining_arguments():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    _, g = ys.grad(functools.partial(two_args, a), b)
    assert len(g) == 1 and np.allclose(g[0], a)
    value, db = ys.simplegrad(functools.partial(two_args, a), b)(b)
    assert value == two_args(a, b) and np.allclose(db, a)


def weighted(x, scale=1.0, *, power=2):
    return np.sum(scale * x ** power)


@pytest.mark.parametrize("bound", [dict(scale=2.0), dict(power=3), dict(scale=0.5, power=3)])
def test_a_partial_with_keyword_arguments_is_differentiated_in_the_others(bound, rng):
    f, x = functools.partial(weighted, **bound), rng.normal(size=4)
    df = ys.simplegrad(f, x)
    value, dx = df(x)
    assert value == f(x) and "def grad_weighted(x):" in df.source
    np.testing.assert_allclose(dx, numerical_gradient(f, (x,), 0), rtol=1e-6)
    _, (again,) = ys.grad(f, x)
    np.testing.assert_allclose(again, dx)


class Scaled:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return np.sum(self.scale * np.sin(x))


def test_a_callable_object_is_differentiated_through_its_call():
    f, x = Scaled(3.0), np.array([0.2, -0.4])
    _, g = ys.grad(f, x)
    assert len(g) == 1 and np.allclose(g[0], numerical_gradient(f, (x,), 0))


def test_a_non_callable_target_says_so():
    with pytest.raises(TypeError, match="differentiates Python functions; got int"):
        ys.grad(3, np.ones(2))


def counts_labels(x, labels):
    return np.sum(x) * len(labels)


def test_a_set_argument_changed_in_place_retraces():
    labels, x = {"a", "b"}, np.ones(2)
    assert ys.grad(counts_labels, x, labels)[0] == 4.0
    labels.add("c")
    assert ys.grad(counts_labels, x, labels)[0] == 6.0


@pytest.mark.parametrize("target, says", [
    (np.sum, "np.sum is a primitive"),
    (Scaled, "Scaled is a class, not a Python function"),
    (np.linalg.cond, "cond is a function of numpy.linalg, not a Python function"),
])
def test_a_target_without_source_is_described_truly(target, says):
    with pytest.raises(ys.errors.SourceUnavailableError, match=says):
        ys.grad(target, np.ones((2, 2)))


def scaled_by(x, how):
    return x * how.factor


ys.diffrule(scaled_by, "x", "dy * how.factor")


class How:
    factor = 2.0


def _passes_a_local_object_to_a_rule(x):
    return np.sum(scaled_by(x, How()))  # an object made here: no spelling for it


def test_a_value_generated_code_cannot_spell_is_refused_at_the_line():
    with pytest.raises(UnsupportedSyntaxError, match=r"test_api_errors.py:\d+: generated code "
                                                     r"cannot (refer to|spell)"):
        ys.grad(_passes_a_local_object_to_a_rule, np.ones(2))


def test_check_grad_accepts_a_size_one_array_result():
    def f(x):
        return np.sum(x ** 2, keepdims=True)

    ys.check_grad(f, np.array([0.5, 2.0]))


def test_a_flipped_branch_suggests_dynamic():
    def f(x):
        return np.sum(x) if x[0] > 0 else np.sum(x * 2.0)

    ys.grad(f, np.ones(2))
    with pytest.raises(ys.errors.ControlFlowChanged, match="dynamic=True"):
        ys.grad(f, -np.ones(2))


def test_float32_gradients_pass_the_check():
    def f(x):
        return np.sum(np.tanh(x) * x)

    ys.check_grad(f, np.array([0.5, -1.5, 2.0], dtype=np.float32))


@pytest.mark.parametrize("wrt", ["b", ["b"], [1], ("b",), 1])
def test_wrt_takes_names_or_positions(wrt):
    value, g = ys.grad(two_args, np.ones(2), np.full(2, 3.0), wrt=wrt)
    assert g[0] is None and np.allclose(g[1], ys.grad(two_args, np.ones(2), np.full(2, 3.0))[1][1])
    source = ys.simplegrad(two_args, np.ones(2), np.full(2, 3.0), wrt=wrt).source
    assert "da =" not in source and "db =" in source


def int_arg(x, i):
    return np.sum(x) * i


@pytest.mark.parametrize("wrt", ["i", 1, [0, "i"]])
def test_wrt_choosing_an_argument_without_floats_is_refused(wrt):
    with pytest.raises(TypeError, match=r"holds no floats to differentiate \(it is int\)"):
        ys.simplegrad(int_arg, np.ones(2), 2, wrt=wrt)


def test_a_function_read_from_standard_input(tmp_path):
    """`python - < file.py` is no prompt, and Python 3.13's keeps no source of it either."""
    import subprocess
    import sys

    script = "import numpy as np\nimport yota_src as ys\n\ndef f(x):\n    return np.sum(x * x)\n" \
             "\nys.grad(f, np.ones(3))\n"
    result = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True,
                            cwd=tmp_path)
    assert "it was read from standard input (`python - < file.py`)" in result.stderr
    assert "prompt" not in result.stderr
