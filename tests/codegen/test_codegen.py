"""The generated module: deterministic, self-contained, readable, inspectable."""

import inspect
import subprocess
import sys
import traceback

import numpy as np
import pytest
from conftest import ROOT, load_example

import yota_src as ys


def affine_module():
    affine = load_example("affine")
    return affine, ys.simplegrad(affine.loss, *affine.example())


def test_output_is_byte_identical_across_runs():
    _, first = affine_module()
    _, second = affine_module()
    assert first.source == second.source


def test_output_is_identical_in_a_fresh_interpreter():
    script = ("import sys; sys.path.insert(0, 'tests'); from conftest import load_example;"
              "import yota_src as ys; a = load_example('affine');"
              "sys.stdout.write(ys.simplegrad(a.loss, *a.example()).source)")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out == affine_module()[1].source


def test_module_imports_only_numpy():
    _, df = affine_module()
    imports = [line for line in df.source.splitlines() if line.startswith(("import", "from"))]
    assert imports == ["import numpy as np"]
    assert "yota_src" not in df.source


def test_saved_module_runs_without_yota_src(tmp_path):
    affine, df = affine_module()
    df.save(tmp_path / "grad_loss.py")
    script = ("import sys, numpy as np; import grad_loss;"
              "assert not any(m.startswith('yota_src') for m in sys.modules);"
              "rng = np.random.default_rng(0);"
              "W, b, x = rng.standard_normal((128, 784)), rng.standard_normal(128),"
              " rng.standard_normal((784, 100));"
              "v, dW, db, dx = grad_loss.grad_loss(W, b, x); print(float(db[0]))")
    out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, "
                          f"{str(tmp_path)!r}); " + script],
                         capture_output=True, text=True, check=True).stdout
    assert float(out) == 100.0


def test_names_comments_and_no_dead_code():
    mlp = load_example("mlp")
    source = ys.simplegrad(mlp.loss, *mlp.example()).source
    assert "# mlp.py:20  h = np.tanh(params.W1 @ x + params.b1[:, None])" in source
    assert "h = np.tanh(params_W1 @ x + params_b1[:, None])" in source
    assert "dh = " in source and "dparams_W1 = " in source
    assert 'dparams = {("W1",): dparams_W1' in source
    compiled = compile(source, "m.py", "exec")
    assigned = set()
    for line in source.splitlines():
        stripped = line.strip()
        if " = " in stripped and not stripped.startswith(("#", "raise", "if")):
            assigned.add(stripped.split(" = ")[0])
    body = source.split("def grad_loss")[1]
    for name in assigned - {"SignatureMismatch = ControlFlowChanged", "SignatureMismatch"}:
        uses = body.count(name)
        assert uses >= 2, f"{name} is assigned but never read"
    assert compiled


def test_inspect_getsource_and_tracebacks_show_generated_lines():
    branch = load_example("branch")
    df = ys.simplegrad(branch.energy, *branch.example())
    assert "def grad_energy" in inspect.getsource(df._function)
    try:
        df(-np.ones(3))
    except ValueError:
        text = traceback.format_exc()
    assert "raise ControlFlowChanged(" in text


def test_grad_of_a_generated_gradient():
    branch = load_example("branch")
    df = ys.simplegrad(branch.energy, *branch.example())

    def first_component(x):
        value, dx = df._function(x)
        return dx[0] * dx[0]

    ys.check_grad(first_component, np.array([1.0, 2.0, 3.0]))


@pytest.mark.slow
def test_an_element_read_thousands_of_times_generates():
    def loss(w, steps):
        total = 0.0
        for t in range(steps):
            total = total + w[0] * t
        return total

    w = np.array([0.5, 1.0])
    value, g = ys.grad(loss, w, 1500)
    assert value == pytest.approx(loss(w, 1500))
    np.testing.assert_allclose(g[0], [sum(range(1500)), 0.0])


def halving(x):
    y = x * 1.0
    err = np.sum(y * y)
    while err > 0.001:
        y = y * 0.5
        err = np.sum(y * y)
    total = 0.0
    for row in y.reshape(2, 1) * 3.0:
        total = total + np.sum(row * row)
    return total


def test_a_loop_header_s_work_sits_under_the_header_s_comment():
    """The while test and the for loop's rows are the header's lines, not the
    last line of the body before them."""
    lines = inspect.getsource(halving).splitlines()
    start = halving.__code__.co_firstlineno
    header = {start + i for i, line in enumerate(lines) if line.lstrip().startswith(("while",
                                                                                       "for"))}
    source = ys.simplegrad(halving, np.array([0.1, 0.2])).source
    comment = None
    body = source.split("def grad_halving")[1].split("# backward")[0]
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("# test_codegen.py:"):
            comment = int(stripped.split(":")[1].split()[0])
        elif "> 0.001" in stripped or "[0]" in stripped or "[1]" in stripped:
            assert comment in header, (line, comment)


def signs_and_transposes(K, x, y):
    z = -1.0 * x + y * -1.0
    w = x + -y
    v = x - -y
    return np.sum((K.T.T @ z) * w * v)


def test_signs_and_double_transposes_are_spelled_as_a_person_would():
    args = (np.arange(4.0).reshape(2, 2), np.array([0.5, -1.0]), np.array([2.0, 0.3]))
    source = ys.simplegrad(signs_and_transposes, *args).source
    body = "\n".join(line for line in source.split("def grad_signs_and_transposes")[1]
                     .splitlines() if not line.strip().startswith("#"))
    for spelling in ("-1.0 *", "* -1.0", "+ -", "- -", ".T.T", "K.T"):
        assert spelling not in body, spelling
    assert "z = -x - y" in body and "w = x - y" in body and "v = x + y" in body
    ys.check_grad(signs_and_transposes, *args)
