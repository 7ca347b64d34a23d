"""Each example runs as a user would run it."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import EXAMPLES, ROOT


@pytest.mark.parametrize("name", ["affine", "linear", "mlp", "iterative", "branch"])
def test_example_runs(name):
    result = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout


def test_dask_logreg_trains_on_a_local_cluster():
    pytest.importorskip("distributed")
    result = subprocess.run([sys.executable, str(EXAMPLES / "dask_logreg.py")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    losses = [float(line.rsplit(" ", 1)[1]) for line in result.stdout.splitlines()
              if line.startswith("step ")]
    assert len(losses) == 8 and losses[0] == pytest.approx(np.log(2), rel=1e-4)
    assert all(later < earlier for earlier, later in zip(losses, losses[1:])), losses


def test_iterative_gives_2_4_8():
    result = subprocess.run([sys.executable, str(EXAMPLES / "iterative.py")],
                            capture_output=True, text=True, check=True)
    assert "n = 1: d/dx = 2.0" in result.stdout
    assert "n = 2: d/dx = 4.0" in result.stdout
    assert "n = 3: d/dx = 8.0" in result.stdout
