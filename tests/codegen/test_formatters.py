"""Generated modules are what formatters leave alone (issue 27, item 7):
`ruff format --check` and `black --check` accept every golden module at their
default settings and at other line lengths, so formatting a project never
makes `yota-src check` report a gradient stale. Each module's first line is
`# fmt: off`; its code is spelled as the formatters spell it (double quotes,
`x**2`, `(N,) = x.shape`, spaced slices, a statement's brackets broken as they
break them), but for a long guard's test and a message, kept to two lines."""

import shutil
import subprocess
import sys

import pytest
from golden_files import GOLDEN, GOLDEN_FILES


def formatter(name: str) -> list[str]:
    if name == "black":
        pytest.importorskip("black", reason="black is not installed (the test extra)")
        return [sys.executable, "-m", "black", "-q"]
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (the test extra)")
    return ["ruff", "format"]


def copies(tmp_path):
    """The golden modules in a folder of no project (no configuration)."""
    for name in GOLDEN_FILES:
        (tmp_path / name).write_text((GOLDEN / name).read_text())
    return tmp_path


@pytest.mark.parametrize("tool", ["ruff", "black"])
@pytest.mark.parametrize("length", [None, 60, 120])
def test_formatters_accept_every_generated_module(tool, length, tmp_path):
    folder = copies(tmp_path)
    options = [] if length is None else ["--line-length", str(length)]
    result = subprocess.run([*formatter(tool), "--check", *options, str(folder)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
