"""Code typed into IPython or Jupyter is named as IPython's tracebacks name it
(`Cell In[3], line 2`), not by the temporary file IPython compiled the cell
from (ipykernel's `/tmp/ipykernel_1234/196883547.py`). The shell here is a
stand-in with IPython's `compile.format_code_name`; with IPython installed,
tests/programs/test_readme_snippet.py runs the real one."""

import importlib.util
import sys
import types

import numpy as np
import pytest

import yota_src as ys

CELL = """\
import numpy as np

def loss(x):
    y = np.tanh(x)
    return np.sum(y * y)

def refused(x):
    x.sort()
    return np.sum(x)

def wide(x):
    return x * 2.0
"""


class Compiler:
    """IPython's CachingCompiler, as far as naming cells goes."""

    def __init__(self, cells: dict):
        self.cells = cells

    def format_code_name(self, name):
        return ("Cell", f"In[{self.cells[name]}]") if name in self.cells else None


@pytest.fixture
def cell(tmp_path, monkeypatch):
    path = tmp_path / "196883547.py"
    path.write_text(CELL)
    spec = importlib.util.spec_from_file_location("notebook_cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ipython = types.ModuleType("IPython")
    shell = types.SimpleNamespace(compile=Compiler({str(path): 3}))
    ipython.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    return module


def test_comments_name_the_cell_and_its_line(cell):
    source = ys.simplegrad(cell.loss, np.ones(3)).source
    assert "    # Cell In[3], line 4  y = np.tanh(x)\n" in source
    assert "196883547" not in source


def test_errors_name_the_cell_and_its_line(cell):
    with pytest.raises(ys.errors.YotaError) as error:
        ys.grad(cell.refused, np.ones(3))
    assert str(error.value).startswith("Cell In[3], line 8: "), str(error.value)
    with pytest.raises(ValueError, match=r"wide\(\) \(Cell In\[3\], line 12\) must return"):
        ys.grad(cell.wide, np.ones(3))


def test_outside_ipython_a_file_is_named_by_its_name(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(CELL)
    spec = importlib.util.spec_from_file_location("model_for_cells", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "    # model.py:4  y = np.tanh(x)\n" in ys.simplegrad(module.loss, np.ones(3)).source
