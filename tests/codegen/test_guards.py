"""Generated code refuses calls outside what it was specialised to."""

import dataclasses
import re
import types

import numpy as np
import pytest
from conftest import load_example
from golden_files import GOLDEN, GOLDEN_FILES

import yota_src as ys
from yota_src.errors import ControlFlowChanged, SignatureMismatch, UnsaveableError


def scaled(x, n, mode):
    y = x * n
    if mode == "double":
        y = y * 2.0
    return np.sum(y)


def branchy(x):
    if np.sum(x) > 0:
        return np.sum(x ** 2)
    return -np.sum(x)


def test_other_rank_raises_naming_it():
    df = ys.simplegrad(scaled, np.ones(3), 2, "double")
    assert df(np.ones(4), 2, "double")[1].shape == (4,)  # any length
    with pytest.raises(SignatureMismatch, match=r"x float64 \(N,\), got ndarray float64 \(4, 1\)"):
        df(np.ones((4, 1)), 2, "double")


def test_other_dtype_raises():
    df = ys.simplegrad(scaled, np.ones(3), 2, "double")
    with pytest.raises(ValueError, match="float32"):
        df(np.ones(3, dtype=np.float32), 2, "double")


def test_other_static_values_raise():
    df = ys.simplegrad(scaled, np.ones(3), 2, "double")
    with pytest.raises(SignatureMismatch, match="n == 2, got int 3"):
        df(np.ones(3), 3, "double")
    with pytest.raises(SignatureMismatch, match="mode == 'double', got str 'half'"):
        df(np.ones(3), 2, "half")


def test_flipped_branch_raises_naming_the_condition():
    df = ys.simplegrad(branchy, np.ones(3))
    assert np.allclose(df(np.ones(3))[1], 2.0)
    with pytest.raises(ControlFlowChanged, match=r"`np.sum\(x\) > 0` was True"):
        df(-np.ones(3))


def test_errors_are_value_errors():
    assert issubclass(SignatureMismatch, ValueError)
    assert issubclass(ControlFlowChanged, ValueError)


def test_cached_grad_never_returns_a_stale_branch():
    ys.grad(branchy, np.ones(3))
    with pytest.raises(ControlFlowChanged):
        ys.grad(branchy, -np.ones(3))


def test_dynamic_grad_retraces_each_path_once():
    x = np.arange(1.0, 4.0)
    _, g_positive = ys.grad(branchy, x, dynamic=True)
    _, g_negative = ys.grad(branchy, -x, dynamic=True)
    assert np.allclose(g_positive[0], 2 * x) and np.allclose(g_negative[0], -1.0)
    from yota_src.api import gradients
    variants = [v for key, v in gradients._cache.items() if key[0] is branchy]
    assert sum(len(v) for v in variants) == 2
    ys.grad(branchy, x, dynamic=True)
    assert sum(len(v) for v in variants) == 2


def double(x, n):
    for _ in range(n):
        x = x * 2.0
    return x


def test_grad_cache_is_per_static_value():
    assert [ys.grad(double, 1.5, n)[1][0] for n in (1, 2, 3, 1)] == [2.0, 4.0, 8.0, 2.0]


def test_saved_module_raises_plain_value_error(tmp_path):
    df = ys.simplegrad(branchy, np.ones(3))
    path = tmp_path / "grad_branchy.py"
    df.save(path)
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(ValueError) as error:
        namespace["grad_branchy"](-np.ones(3))
    assert type(error.value) is ValueError
    assert "np.sum(x) > 0" in str(error.value)


def masked_total(x):
    return np.sum(x[x > 0])


def test_a_mask_count_is_read_at_run_time():
    df = ys.simplegrad(masked_total, np.array([1.0, -1.0, 2.0]))
    assert np.allclose(df(np.array([3.0, -2.0, 1.0]))[1], [1.0, 0.0, 1.0])
    assert np.allclose(df(np.array([3.0, 2.0, 1.0]))[1], [1.0, 1.0, 1.0])  # another count


def nonzero_total(x):
    return np.sum(x[np.nonzero(x > 0)])


def test_data_dependent_shapes_without_a_rule_are_guarded():
    """np.nonzero of a 2-d mask (a tuple of index arrays): its count is guarded
    (of a 1-d mask it is read at run time: test_library_shapes.py)."""
    df = ys.simplegrad(nonzero_total, np.array([[1.0, -1.0], [2.0, -3.0]]))
    assert np.allclose(df(np.array([[3.0, -2.0], [1.0, -1.0]]))[1], [[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ControlFlowChanged):
        df(np.array([[3.0, 2.0], [1.0, -1.0]]))


def stacked_first(d):
    return np.sum(np.stack(list(d.values()))[0])


def test_dict_argument_with_keys_in_another_order_is_refused():
    df = ys.simplegrad(stacked_first, {"a": np.ones(2), "b": np.ones(2)})
    expected = r"keys \['a', 'b'\] in this order, got dict with the keys \['b', 'a'\]"
    with pytest.raises(SignatureMismatch, match=expected):
        df({"b": np.ones(2), "a": np.ones(2)})


@dataclasses.dataclass
class Pair:
    w: np.ndarray
    s: float


def pair_loss(p, x, d, n):
    return np.sum(p.w * x) * p.s + d["k"] * n


def pair_args():
    return Pair(np.ones(3), 2.0), np.ones(3), {"k": 1.5}, 2


def without_w():
    pair = Pair(np.ones(3), 2.0)
    del pair.w
    return pair


WRONG_ARGUMENTS = {
    "list for array": (1, [1.0, 2.0, 3.0]),
    "None for array": (1, None),
    "float for array": (1, 1.0),
    "array for float": (2, {"k": np.ones(3)}),
    "int for float": (2, {"k": 1}),
    "dict missing a key": (2, {}),
    "list for dict": (2, [1.5]),
    "struct missing an attribute": (0, without_w()),
    "other class for struct": (0, types.SimpleNamespace(w=np.ones(3), s=2.0)),
    "float for static int": (3, 2.0),
}


@pytest.mark.parametrize("case", sorted(WRONG_ARGUMENTS))
def test_argument_of_the_wrong_type_raises_signature_mismatch(case):
    df = ys.simplegrad(pair_loss, *pair_args())
    index, wrong = WRONG_ARGUMENTS[case]
    args = list(pair_args())
    args[index] = wrong
    with pytest.raises(SignatureMismatch, match="grad_pair_loss was generated for"):
        df(*args)


@pytest.mark.parametrize("case", sorted(WRONG_ARGUMENTS))
def test_saved_module_refuses_an_argument_of_the_wrong_type_with_value_error(case, tmp_path):
    path = tmp_path / "grad_pair_loss.py"
    ys.simplegrad(pair_loss, *pair_args()).save(path)
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    index, wrong = WRONG_ARGUMENTS[case]
    args = list(pair_args())
    args[index] = wrong
    with pytest.raises(ValueError, match="grad_pair_loss was generated for") as error:
        namespace["grad_pair_loss"](*args)
    assert type(error.value) is ValueError


def apply(x, activation):
    return np.sum(activation(x))


def test_static_function_without_a_name_is_guarded_by_identity():
    df = ys.simplegrad(apply, np.ones(3), lambda v: v * 2.0)
    with pytest.raises(SignatureMismatch, match="activation is .*<lambda>"):
        df(np.ones(3), lambda v: v * 3.0)


def test_module_guarded_by_identity_is_refused_when_saved(tmp_path):
    df = ys.simplegrad(apply, np.ones(3), lambda v: v * 2.0)
    path = tmp_path / "grad_apply.py"
    with pytest.raises(UnsaveableError, match=r"test_guards.py:\d+: grad_apply cannot be saved"):
        df.save(path)
    assert not path.exists()


def test_docstring_describes_static_objects_without_memory_addresses():
    df = ys.simplegrad(apply, np.ones(3), lambda v: v * 2.0)
    docstring = df.source.split('"""')[1]
    assert "0x" not in docstring
    words = " ".join(docstring.split())
    assert "activation is test_guards." in words and "<locals>.<lambda> (test_guards.py:" in words


def weighted(d, x):
    return np.sum(d[(1, "a")] * x)


def test_dict_with_tuple_keys_gets_valid_names_and_a_key_guard():
    d, x = {(1, "a"): np.full(3, 2.0)}, np.arange(3.0)
    ys.check_grad(weighted, d, x)
    df = ys.simplegrad(weighted, d, x)
    with pytest.raises(SignatureMismatch, match=r"keys \[\(1, 'a'\)\] in this order"):
        df({(1, "b"): np.ones(3)}, x)


def test_a_gradient_function_refuses_a_class_redefined_under_the_same_name(tmp_path,
                                                                           monkeypatch):
    import importlib

    path = tmp_path / "netmodule.py"
    code = ("import numpy as np\n\n\nclass Net:\n"
            "    def __init__(self, W):\n        self.W = W\n\n"
            "    def forward(self, x):\n        return np.sum(self.W @ x) * {}\n\n\n"
            "def loss(net, x):\n    return net.forward(x)\n")
    path.write_text(code.format("2.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("netmodule")
    old_net, x = module.Net(np.ones((2, 3))), np.array([1.0, 2.0, 3.0])
    df = ys.simplegrad(module.loss, old_net, x)
    path.write_text(code.format("-1.0"))  # edited, and reloaded as a notebook would
    module = importlib.reload(module)
    with pytest.raises(SignatureMismatch, match="another class of the same name"):
        df(module.Net(np.ones((2, 3))), x)
    assert df(old_net, x)[0] == module.loss(old_net, x) == 24.0  # the old class still runs


def _guard_block(source: str, function: str) -> list[str]:
    """The lines of `function` before its first line that is not a check."""
    body = source.split(f"def {function}(")[1].splitlines()[1:]
    block = []
    for line in body:
        binding = re.fullmatch(r"    \(?[A-Z][\w, ]*\)? = [\w.\[\]'\"]+\.shape(\[\d\])?", line)
        if not (line.startswith(("    if", "            ", "        ", "    ):"))
                or not line.strip() or binding):
            break
        block.append(line)
    return block


@pytest.mark.parametrize("name", sorted(GOLDEN_FILES))
def test_each_argument_check_is_one_test_and_one_call(name):
    """Compact guards: a test (wrapped to two lines at most, but a struct's,
    which has a line per attribute) and a call of the helper that says what
    came instead, for each part of each argument."""
    source = (GOLDEN / name).read_text()
    function = source.split("\ndef ")[1].split("(")[0]
    block = _guard_block(source, function)
    tests = [number for number, line in enumerate(block) if line.startswith("    if")]
    for start, end in zip(tests, tests[1:] + [len(block)]):
        check = [line for line in block[start:end] if not line.startswith("    ")
                 or line.startswith(("    if", "        ")) and line.strip() != "):"]
        struct = all(line.strip().startswith(("hasattr(", "and hasattr(", "):"))
                     for line in check[1:-1])  # a line an attribute, as formatters break it
        assert (len(check) <= 3 or struct) and "_mismatch(" in check[-1], "\n".join(check)
        assert check[-1].startswith("        _mismatch(")


def test_the_mlp_example_checks_each_leaf_in_about_two_lines():
    params, x, labels = load_example("mlp").example()
    source = ys.simplegrad(load_example("mlp").loss, params, x, labels).source
    block = _guard_block(source, "grad_loss")
    checks = [line for line in block if " = " not in line or line.startswith("    if")]
    assert len(checks) <= 15, "\n".join(block)  # 6 arrays and the struct holding four
    assert len(block) - len(checks) <= 4  # `N, M = params.W1.shape`: each size read once


@dataclasses.dataclass
class Halves:
    a: np.ndarray
    b: np.ndarray


def pair_sum(p, x):
    return np.sum(p.a * x) + np.sum(p.b)


@pytest.mark.parametrize("call, expected", [
    (lambda df: df(types.SimpleNamespace(a=np.ones(2)), np.ones(2)),
     r"p of type Halves with the attributes \('a', 'b'\), got SimpleNamespace, missing \['b'\]"),
    (lambda df: df(Halves(np.ones(2), np.ones(3)), [1.0, 2.0]),
     r"x float64 \(2,\), got list"),
    (lambda df: df(Halves(np.ones(2), np.ones(3)), np.ones((2, 1), np.float32)),
     r"x float64 \(2,\), got ndarray float32 \(2, 1\)"),
])
def test_the_helper_says_what_came_instead(call, expected):
    df = ys.simplegrad(pair_sum, Halves(np.ones(2), np.ones(3)), np.ones(2))
    with pytest.raises(SignatureMismatch, match=expected):
        call(df)
