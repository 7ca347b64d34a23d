"""Each example runs as a user would run it."""

import subprocess
import sys

import pytest
from conftest import EXAMPLES, ROOT


@pytest.mark.parametrize("name", ["affine", "linear", "mlp", "iterative", "branch"])
def test_example_runs(name):
    result = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout


def test_iterative_gives_2_4_8():
    result = subprocess.run([sys.executable, str(EXAMPLES / "iterative.py")],
                            capture_output=True, text=True, check=True)
    assert "n = 1: d/dx = 2.0" in result.stdout
    assert "n = 2: d/dx = 4.0" in result.stdout
    assert "n = 3: d/dx = 8.0" in result.stdout
