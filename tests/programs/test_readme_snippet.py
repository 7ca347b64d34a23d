"""The README's Python snippet runs pasted into a file; where the source
cannot be read (`python -c`, a piped interactive prompt before Python 3.13)
the error says so and what to do, in one frame of yota-src's, not a dozen."""

import re
import subprocess
import sys

import pytest
from conftest import ROOT

SNIPPET = re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)


def run(args, tmp_path, stdin=None):
    return subprocess.run([sys.executable, *args], cwd=tmp_path, input=stdin,
                          capture_output=True, text=True, timeout=300)


def own_frames(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if line.strip().startswith("File ") and "yota_src" in line]


def test_snippet_runs_from_a_file(tmp_path):
    (tmp_path / "snippet.py").write_text(SNIPPET)
    result = run(["snippet.py"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "def grad_loss(W, b, x):" in result.stdout
    assert (tmp_path / "grad_loss.py").exists()


def assert_says_what_to_do(result, where: str):
    assert result.returncode != 0 or "Traceback" in result.stderr
    assert f"yota_src.errors.SourceUnavailableError: the source of loss() cannot be read: " \
           f"{where}" in result.stderr
    assert "Put the function in a file" in result.stderr
    assert "use IPython or Jupyter" in result.stderr
    frames = own_frames(result.stderr)
    assert len(frames) == 1 and frames[0].endswith("in simplegrad"), result.stderr


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="`python -c` keeps source from 3.13")
def test_python_c_says_the_source_cannot_be_read(tmp_path):
    result = run(["-c", SNIPPET], tmp_path)
    assert_says_what_to_do(result, "it was defined by code run from a string")


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="the prompt keeps source from 3.13")
def test_interactive_prompt_says_the_source_cannot_be_read(tmp_path):
    result = run(["-i"], tmp_path, stdin=SNIPPET)
    assert_says_what_to_do(result, "it was typed at Python's interactive prompt")


@pytest.mark.skipif(sys.version_info < (3, 13), reason="the prompt keeps no source before 3.13")
def test_interactive_prompt_runs_the_snippet_from_3_13(tmp_path):
    result = run(["-i"], tmp_path, stdin=SNIPPET)
    assert "Traceback" not in result.stderr, result.stderr
    assert (tmp_path / "grad_loss.py").exists()


def test_ipython_runs_the_snippet(tmp_path):
    pytest.importorskip("IPython")
    result = subprocess.run([sys.executable, "-m", "IPython", "--simple-prompt", "--no-banner"],
                            cwd=tmp_path, input=SNIPPET, capture_output=True, text=True,
                            timeout=300)
    assert "Traceback" not in result.stdout + result.stderr, result.stdout
    saved = (tmp_path / "grad_loss.py").read_text()
    assert re.search(r"# Cell In\[\d+\], line 2  return np.sum\(W @ x", saved), saved


def test_exec_says_the_source_cannot_be_read(tmp_path):
    (tmp_path / "run_it.py").write_text(f"exec({SNIPPET!r})\n")
    result = run(["run_it.py"], tmp_path)
    assert_says_what_to_do(result, "it was defined by code run from a string")


MODEL = ("import numpy as np\nimport yota_src as ys\n\n"
         "def loss(x):\n    with open('missing.txt'):\n        pass\n    return np.sum(x)\n\n"
         "ys.grad(loss, np.ones(3))\n")


def test_an_error_at_the_users_line_shows_that_line_and_one_frame_of_ours(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    result = run(["model.py"], tmp_path)
    assert "FileNotFoundError" in result.stderr
    assert "with open('missing.txt'):" in result.stderr
    assert len(own_frames(result.stderr)) == 1, result.stderr


def test_a_full_traceback_is_there_for_whoever_debugs_yota_src(tmp_path, monkeypatch):
    monkeypatch.setenv("YOTA_SRC_FULL_TRACEBACK", "1")
    (tmp_path / "model.py").write_text(MODEL)
    result = run(["model.py"], tmp_path)
    assert len(own_frames(result.stderr)) > 3, result.stderr
