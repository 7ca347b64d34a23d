"""Every value the generated code prints is spelled exactly, or refused.

Dict keys, static values, constants, dtypes and parameter names reach the
module text; whatever they are, the module compiles, runs on its own example
with the right value and gradient, and refuses other inputs with ValueError.
"""

import builtins
import importlib.util
import inspect
import math
import math as math_module
import subprocess
import sys
import sys as sys_module
import textwrap

import numpy as np
import pytest

import yota_src as ys
from yota_src.codegen import CodegenError
from yota_src.errors import NoDiffRuleError, UnsaveableError

X = np.array([1.0, 2.0, 3.0])


def saved_module(df, tmp_path, name="spelled"):
    """`df` saved to a file and imported from it, as a user would."""
    path = tmp_path / f"{name}.py"
    df.save(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_spelled(f, args, other, tmp_path):
    """The saved module of `f` gives f's value and gradients on `args`
    (which agree with finite differences) and refuses `other`."""
    df = ys.simplegrad(f, *args)
    module = saved_module(df, tmp_path)
    name = df.source.split("\ndef ", 1)[1].split("(", 1)[0]
    gradient = getattr(module, name)
    parameters = inspect.signature(f).parameters
    if all(p.kind != p.VAR_POSITIONAL for p in parameters.values()):
        assert list(inspect.signature(gradient).parameters) == list(parameters)[:len(args)]
    value, *grads = gradient(*args)
    expected_value, *expected = df(*args)
    assert value == pytest.approx(expected_value)
    for got, want in zip(grads, expected):
        if isinstance(want, dict):
            assert got.keys() == want.keys()
            got, want = list(got.values()), list(want.values())
        else:
            got, want = [got], [want]
        for got_part, want_part in zip(got, want):
            assert (got_part is None) == (want_part is None)
            if want_part is not None:
                np.testing.assert_allclose(got_part, want_part)
    ys.check_grad(f, *args)
    with pytest.raises(ValueError):
        gradient(*other)
    return df.source


# -- dict keys --------------------------------------------------------------

def sum_of_squares(d):
    return sum(np.sum(v * v) for v in d.values())


def nested_sum(m):
    return np.sum(m["layers"][0]["W"]) + sum(np.sum(v) for v in m["extra"].values())


AWKWARD_KEYS = ["it's", 'say "hi"', "C:\\data", "}", "{", "#", "a\nb", '"""', "é",
                frozenset({1}), frozenset(), int, np.float64, float("inf"), -float("inf"),
                (1, "a'"), (), None, True, b"\\'", -0.0]


@pytest.mark.parametrize("key", AWKWARD_KEYS, ids=repr)
def test_dict_key_is_spelled_as_a_literal(key, tmp_path):
    assert_spelled(sum_of_squares, ({key: 2.0, "plain": X},),
                   ({"other": 2.0, "plain": X},), tmp_path)


@pytest.mark.parametrize("key", AWKWARD_KEYS, ids=repr)
def test_nested_dict_key_is_spelled_as_a_literal(key, tmp_path):
    model = {"layers": [{"W": X}], "extra": {key: X * 2}}
    assert_spelled(nested_sum, (model,), ({"layers": [{"W": X}], "extra": {"b": X}},), tmp_path)


def test_dict_key_names_a_readable_leaf_variable():
    source = ys.simplegrad(sum_of_squares, {"C:\\data": 2.0, int: 1.0}).source
    assert 'd_C_data = d["C:\\\\data"]' in source
    assert "d_int = d[int]" in source


@pytest.mark.parametrize("key", [float("nan"), (1, float("nan"))], ids=repr)
def test_nan_dict_key_is_refused_naming_the_argument(key):
    with pytest.raises(CodegenError, match=r"argument `d\[.*nan.*\]`.*NaN"):
        ys.simplegrad(sum_of_squares, {key: 2.0})


def test_key_no_literal_spells_is_refused_naming_the_argument():
    with pytest.raises(CodegenError, match=r"argument `m\['extra'\]\[<object object>\]`"):
        ys.simplegrad(nested_sum, {"layers": [{"W": X}], "extra": {object(): X}})


# -- attributes ---------------------------------------------------------------

class Bag:
    pass


def odd_attributes(o):
    return np.sum(getattr(o, "my-attr")) * getattr(o, "class") * o.plain


def nfkc_attributes(o):
    return getattr(o, "\ufb01") * o.fi  # noqa: B009 - o.ﬁ would read o.fi (NFKC)


@pytest.mark.parametrize("f, attributes", [
    (odd_attributes, {"my-attr": X, "class": 2.0, "plain": 3.0}),
    (nfkc_attributes, {"\ufb01": 3.0, "fi": 5.0}),
], ids=["not identifiers", "changed by NFKC"])
def test_attribute_that_is_no_name_is_read_with_getattr(f, attributes, tmp_path):
    bag = Bag()
    for name, value in attributes.items():
        setattr(bag, name, value)
    source = assert_spelled(f, (bag,), (1.0,), tmp_path)
    assert "getattr(o, " in source


# -- static values --------------------------------------------------------------

def scaled_by_text(x, s):
    return np.sum(x) * len(s)


@pytest.mark.parametrize("text", ["it's", 'say "hi"', "C:\\data", "}{", "a\nb\x00c", '"""',
                                  "#", "\u2028", "\ud800", b"\\'\"\x00"], ids=repr)
def test_static_text_is_spelled_in_guard_and_docstring(text, tmp_path):
    assert_spelled(scaled_by_text, (X, text), (X, text[:0] + text[:1] * 9), tmp_path)


def summed_over(x, indices):
    return sum(x[i] for i in indices)


def cast_to(x, dtype):
    return np.sum(x.astype(dtype) * 2.0)


@pytest.mark.parametrize("f, static, other, spelled", [
    (summed_over, range(0, 3, 2), [0, 2], "indices != range(0, 3, 2)"),
    (cast_to, np.longdouble, np.float64, "dtype is not np.longdouble"),
    (cast_to, np.dtype(">f8"), np.dtype("<f8"), 'dtype != np.dtype(">f8")'),
], ids=["range", "scalar type", "big-endian dtype"])
def test_static_range_and_dtype_are_spelled(f, static, other, spelled, tmp_path):
    assert spelled in assert_spelled(f, (X, static), (X, other), tmp_path)


def scaled_if_member(x, s):
    return np.sum(x) * (2.0 if 1.5 in s else 1.0)


def test_static_set_with_infinities_and_negative_zero_is_spelled(tmp_path):
    source = assert_spelled(scaled_if_member, (X, {1.5, float("inf"), -0.0}), (X, {1.5}),
                            tmp_path)
    assert "{-0.0, 1.5, np.inf}" in source


def test_static_frozensets_nest(tmp_path):
    assert_spelled(scaled_if_member, (X, frozenset({frozenset({1}), 1.5})), (X, {1.5}),
                   tmp_path)


@pytest.mark.parametrize("value", [frozenset({1.5, float("nan")}), {float("nan")}], ids=repr)
def test_static_value_holding_nan_is_compared_by_identity(value, tmp_path):
    _, g = ys.grad(scaled_if_member, X, value)  # its own example is accepted
    np.testing.assert_allclose(g[0], np.full(3, 2.0 if 1.5 in value else 1.0))
    df = ys.simplegrad(scaled_if_member, X, value)
    with pytest.raises(ValueError):
        df(X, {float("nan")})
    with pytest.raises(UnsaveableError, match="nan"):
        df.save(tmp_path / "nan.py")


# -- constants -----------------------------------------------------------------

INF = float("inf")
NAN = float("nan")
NEGATIVE_ZERO = -0.0
LONG = np.longdouble("0.1")
HUGE_LONG = np.longdouble("1e4000")
LONG_ARRAY = np.array([np.longdouble("0.1"), np.longdouble(1) / 3, np.longdouble(2)])
BIG_ENDIAN = np.array([1.0, 2.0, 3.0], dtype=">f8")
RECORDS = np.array([(1.0,), (2.0,), (3.0,)], dtype=[("f", float)])


def clipped_at_infinity(x):
    return np.sum(np.minimum(x, INF)) + np.sum(np.maximum(x, -INF)) + NEGATIVE_ZERO


def nan_ignored(x):
    return np.sum(np.fmax(x, NAN) + np.fmin(NAN, x * x)) * (2.0 if math.isnan(NAN) else 1.0)


def times_long(x):
    return np.sum(x * LONG) + np.sum(x * LONG_ARRAY) + np.sum(x * HUGE_LONG) * 0.0


def times_constant_arrays(x):
    return np.sum(x * BIG_ENDIAN) + np.sum(x * RECORDS["f"])


@pytest.mark.parametrize("f", [clipped_at_infinity, nan_ignored, times_long,
                               times_constant_arrays])
def test_constant_is_spelled_exactly(f, tmp_path):
    assert_spelled(f, (X,), (X[:2, None],), tmp_path)  # another rank: refused


def test_saved_constants_equal_the_live_ones(tmp_path):
    module = saved_module(ys.simplegrad(times_long, X), tmp_path, "longs")
    assert module.LONG == LONG and module.HUGE_LONG == HUGE_LONG
    assert module.LONG_ARRAY.dtype == np.longdouble and np.all(module.LONG_ARRAY == LONG_ARRAY)
    module = saved_module(ys.simplegrad(times_constant_arrays, X), tmp_path, "arrays")
    assert module.BIG_ENDIAN.dtype == BIG_ENDIAN.dtype
    assert module.RECORDS.dtype == RECORDS.dtype and np.all(module.RECORDS == RECORDS)


def test_long_double_is_written_from_its_decimal_string():
    source = ys.simplegrad(times_long, X).source
    assert 'LONG = np.longdouble("0.1")' in source
    assert "np.longdouble(0.1)" not in source


# -- dtypes of arguments ---------------------------------------------------------

def doubled(a):
    return np.sum(a * 2.0)


def doubled_entry(d):
    return np.sum(d["a"] * 2.0)


def test_big_endian_array_is_guarded_by_its_exact_dtype(tmp_path):
    a = np.array([1.0, 2.0], dtype=">f8")
    source = assert_spelled(doubled, (a,), (a.astype("<f8"),), tmp_path)
    assert 'dtype = np.dtype(">f8")' in source and "a.dtype != dtype" in source
    assert "a >f8 (N,)" in source
    source = assert_spelled(doubled_entry, ({"a": a},), ({"a": a[:1, None]},), tmp_path)
    assert 'd["a"].dtype != dtype' in source


def first_if_text(a, s):
    return np.sum(a) * (2.0 if s[0] == "xy" else 1.0)


@pytest.mark.parametrize("data", [np.array(["xy", "z"]), np.array([b"xy", b"z"]),
                                  np.array(["2020-01-01"], dtype="datetime64[s]")], ids=str)
def test_data_array_of_text_or_dates_is_guarded(data, tmp_path):
    other = (X, data.astype(data.dtype.str[:-1] + "9") if data.dtype.kind in "US" else
             data.astype("datetime64[D]"))
    f = first_if_text if data.dtype.kind in "US" else (lambda a, s: np.sum(a) * 2.0)
    assert_spelled(f, (X, data), other, tmp_path)


@pytest.mark.parametrize("array, what", [
    (np.array([1.0, 2.0], dtype=object), "Python objects"),
    (np.array([(1.0,), (2.0,)], dtype=[("f", float)]), "structured array"),
    (np.zeros(2, dtype="V8"), "raw bytes"),
], ids=["object", "structured", "void"])
def test_array_that_cannot_be_differentiated_is_refused_by_name(array, what):
    with pytest.raises(NoDiffRuleError, match=f"argument `a` is .*{what}"):
        ys.simplegrad(doubled, array)
    with pytest.raises(NoDiffRuleError, match=f"argument `d\\['a'\\]` is .*{what}"):
        ys.simplegrad(doubled_entry, {"a": array})


# -- parameters named like what the code reads ------------------------------------

def param_np(x, np):
    return x.sum() * np


def param_len(x, len):
    return x.sum() * len


def param_type(x, type):
    return (x * type).sum()


def param_isinstance(x, isinstance):
    return x * isinstance


def param_float(x, float):
    return x * float


def param_list(d, list):
    return d["a"] * list


def param_hasattr(o, hasattr):
    return o.w * hasattr


def param_getattr(o, getattr):
    return builtins.getattr(o, "my-attr") * getattr


def param_name(o, name):
    return o.w * name


def param_math(v, math):
    return math_module.exp(v) * math


def param_error(x, SignatureMismatch):  # noqa: N803 - the point of the test
    return x.sum() * SignatureMismatch


def param_np_and_len(np, len):
    return (np * np).sum() * len


def struct_param_list(list, type):
    return list[0] * type["k"]


def bag(**attributes):
    made = Bag()
    for name, value in attributes.items():
        setattr(made, name, value)
    return made


@pytest.mark.parametrize("f, args, other", [
    (param_np, (X, 3.0), (X, 3)),
    (param_len, (X, 3.0), (X, 3)),
    (param_type, (X, X), (X, 1.0)),
    (param_isinstance, (2.0, 3.0), (2, 3.0)),
    (param_float, (2.0, 3.0), (X, 3.0)),
    (param_list, ({"a": 2.0}, 3.0), ({"b": 2.0}, 3.0)),
    (param_hasattr, (bag(w=2.0), 3.0), (1.0, 3.0)),
    (param_getattr, (bag(**{"my-attr": 2.0}), 3.0), (bag(), 3.0)),
    (param_name, (bag(w=2.0), 3.0), (bag(v=1.0), 3.0)),
    (param_math, (1.5, 2.0), (1.5, 2)),
    (param_error, (X, 3.0), (X, 3)),
    (param_np_and_len, (X, 3.0), (X[:1, None], 3.0)),
    (struct_param_list, ([2.0], {"k": 3.0}), ([2.0, 1.0], {"k": 3.0})),
], ids=lambda value: value.__name__ if callable(value) else "")
def test_parameter_named_like_a_name_the_code_reads(f, args, other, tmp_path):
    assert_spelled(f, args, other, tmp_path)


def test_hidden_name_is_taken_under_a_fresh_one_behind_the_user_parameters(tmp_path):
    source = ys.simplegrad(param_np, X, 3.0).source
    assert "def grad_param_np(x, np):" in source
    assert "def grad_param_np_body(x, np_2):" in source
    assert "x.dtype != float64" in source and "float64 = np.dtype(np.float64)" in source
    module = saved_module(ys.simplegrad(param_np, X, 3.0), tmp_path)
    value, dx, dnp = module.grad_param_np(np=3.0, x=X)
    assert value == 18.0 and dnp == 6.0
    np.testing.assert_allclose(dx, np.full(3, 3.0))


def param_input(x, input):
    return x.sum() * input


def test_parameter_named_like_an_unused_builtin_keeps_one_function():
    source = ys.simplegrad(param_input, X, 2.0).source
    assert "_body" not in source and "def grad_param_input(x, input):" in source


def printed_to_stderr(x, sys):
    print(x[0], file=sys_module.stderr)
    return x.sum() * sys


def test_module_named_like_a_parameter_is_imported_under_an_alias(tmp_path, capsys):
    source = assert_spelled(printed_to_stderr, (X, 2.0), (X, 2), tmp_path)
    assert "import sys as sys_2" in source and "file=sys_2.stderr" in source


def args_0_and_more(args_0, *args):
    return args_0 * args[0] * args[1]


def test_star_args_names_skip_the_function_parameters(tmp_path):
    source = assert_spelled(args_0_and_more, (2.0, 3.0, 4.0), (2.0, 3.0, 4), tmp_path)
    assert "def grad_args_0_and_more(args_0, args_1, args_2):" in source


# -- other text the code holds ----------------------------------------------------

def type(x):  # noqa: A001 - a primal named like a builtin its module reads
    return np.sum(x * 2.0)


@pytest.mark.parametrize("f", [type, lambda x: np.sum(x * 2.0)], ids=["type", "lambda"])
def test_forward_module_of_any_function_name_compiles(f):
    _, tape = ys.trace(f, X)
    compiled = tape.compile()
    assert compiled(X) == 12.0
    with pytest.raises(ValueError):
        compiled(X[:1])


def printed_with_static_text(x):
    parts = ("a\\", "#")
    print(f"{x[0]} {parts} {parts!r:>20} {{}}")
    return np.sum(x)


def test_f_string_field_an_f_string_cannot_hold_is_formatted(capsys):
    df = ys.simplegrad(printed_with_static_text, X)
    df(X)
    assert capsys.readouterr().out == f"1.0 {('a' + chr(92), '#')} " \
        f"{('a' + chr(92), '#')!r:>20} {{}}\n"


# -- the command line ----------------------------------------------------------------

@pytest.mark.slow
def test_gen_writes_a_module_for_awkward_keys_and_parameter_names(tmp_path):
    (tmp_path / "awkward.py").write_text(textwrap.dedent('''
        import numpy as np

        def loss(d, np):
            return sum(v * v for v in d.values()) * np

        def example():
            return ({"it's": 2.0, 'say "hi"': 1.0, "C:\\\\data": 3.0, "}": 1.0}, 2.0)

        def nan_key():
            return ({float("nan"): 2.0}, 2.0)
        '''))
    out = tmp_path / "grad_loss.py"
    result = subprocess.run([sys.executable, "-m", "yota_src.cli", "gen", "awkward.py:loss",
                             "--args", "awkward.py:example", "-o", str(out)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    script = ("import grad_loss, awkward; args = awkward.example();"
              "v, dd, dnp = grad_loss.grad_loss(*args); print(v, dnp);"
              "\ntry: grad_loss.grad_loss({'x': 1.0}, 2.0)\nexcept ValueError: print('refused')")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert run.stdout.split() == ["30.0", "15.0", "refused"], run.stderr
    refused = subprocess.run([sys.executable, "-m", "yota_src.cli", "gen", "awkward.py:loss",
                              "--args", "awkward.py:nan_key", "-o", str(out)],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert refused.returncode != 0
    assert "argument `d[nan]`" in refused.stderr and "Traceback" not in refused.stderr
    assert out.read_text().count("def grad_loss(") == 1  # left as it was


def reductions(x, A):
    s = x[0] * x[1]
    return (np.sum(x) + np.max(A, axis=0).sum() + np.mean(A) + np.std(A, ddof=1)
            + np.sum(np.clip(x, -0.5, 0.5)) + np.sum([x[0], x[2]]) + np.sum(s)
            + np.sum(np.reshape(A, (2, 3))[0]) + np.prod(np.transpose(A)[0]))


def test_reductions_of_arrays_are_spelled_as_methods(tmp_path):
    """`x.sum()` costs half of `np.sum(x)` on small arrays; a list or a value
    that may be a Python float keeps the function."""
    x, A = np.array([0.3, -0.7, 1.1]), np.arange(6.0).reshape(3, 2) / 7
    ys.check_grad(reductions, x, A)
    source = ys.simplegrad(reductions, x, A).source
    for method in ("x.sum()", "A.max(axis=0)", "A.mean()", "A.std(ddof=1)", "A.reshape((2, 3))",
                   "A.transpose()"):
        assert method in source, method
    assert "np.sum([" in source and "np.sum(s)" in source


def test_each_method_spelling_takes_the_arguments_its_method_takes_by_position():
    """The table of how many arguments after the array a method takes by
    position, against NumPy's signatures where this NumPy has them."""
    from helpers_rule_checks import method_positional

    from yota_src.codegen import spelling

    for fn, name in spelling._METHOD_SPELLINGS.items():
        found = method_positional(fn, name)  # (None: an older NumPy without signatures)
        if found is not None:
            assert spelling._METHOD_POSITIONAL[fn] == found[0], name
