"""`yota-src gen` and `yota-src trace`, run as a user runs them."""

import subprocess
import sys
import textwrap

import pytest
from conftest import EXAMPLES


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "yota_src.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def affine(*extra):
    return run("gen", f"{EXAMPLES}/affine.py:loss", "--args", f"{EXAMPLES}/affine.py:example",
               *extra)


def test_gen_writes_an_importable_module(tmp_path):
    out = tmp_path / "grad_loss.py"
    result = affine("-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "def grad_loss(W, b, x):" in text
    compile(text, str(out), "exec")


def test_gen_without_output_prints_the_module():
    result = affine()
    assert result.returncode == 0 and "def grad_loss(W, b, x):" in result.stdout


def test_check_fresh_and_stale(tmp_path):
    out = tmp_path / "grad_loss.py"
    affine("-o", str(out))
    assert affine("-o", str(out), "--check").returncode == 0
    out.write_text(out.read_text().replace("np.sum(t1, axis=1)", "np.sum(t1, axis=0)"))
    stale = affine("-o", str(out), "--check")
    assert stale.returncode == 1 and "stale" in stale.stderr


def test_check_detects_an_edit_of_the_function(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""
        import numpy as np
        def loss(x):
            return np.sum(x ** 2)
        def example():
            return (np.ones(3),)
    """))
    out = tmp_path / "grad_loss.py"
    command = ("gen", f"{source}:loss", "--args", f"{source}:example", "-o", str(out))
    assert run(*command).returncode == 0
    source.write_text(source.read_text().replace("x ** 2", "x ** 3"))
    result = run(*command, "--check")
    assert result.returncode == 1


def test_trace_prints_the_tape():
    result = run("trace", f"{EXAMPLES}/affine.py:loss", "--args", f"{EXAMPLES}/affine.py:example")
    assert result.returncode == 0
    assert "input W  :: float64 (128, 784)" in result.stdout


BAD = {
    "missing_file": ("gen", "nowhere.py:loss", "--args", "nowhere.py:example"),
    "missing_function": ("gen", f"{EXAMPLES}/affine.py:nothing", "--args",
                         f"{EXAMPLES}/affine.py:example"),
}


def write_bad_modules(tmp_path):
    syntax = tmp_path / "broken.py"
    syntax.write_text("def loss(x):\n    return x +\n")
    norule = tmp_path / "norule.py"
    norule.write_text(textwrap.dedent("""
        import numpy as np
        def loss(x):
            return np.sum(np.i0(x))
        def example():
            return (np.ones(3),)
    """))
    return {
        "syntax_error": ("gen", f"{syntax}:loss", "--args", f"{syntax}:loss"),
        "no_rule": ("gen", f"{norule}:loss", "--args", f"{norule}:example"),
    }


@pytest.mark.parametrize("case", ["missing_file", "missing_function", "syntax_error", "no_rule"])
def test_bad_input_is_one_clear_line_and_leaves_output_untouched(case, tmp_path):
    cases = {**BAD, **write_bad_modules(tmp_path)}
    out = tmp_path / "grad_loss.py"
    out.write_text("# precious\n")
    result = run(*cases[case], "-o", str(out))
    assert result.returncode not in (0, 1)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yota-src: error: ")
    assert out.read_text() == "# precious\n"
    expected = {"missing_file": "no such file", "missing_function": "has no 'nothing'",
                "syntax_error": "syntax error", "no_rule": "no gradient rule for np.i0"}[case]
    assert expected in lines[0]
    if case == "no_rule":
        assert "norule.py:4" in lines[0]
