"""Golden files pin the generated source of the examples.

After a deliberate change: YOTA_SRC_UPDATE_GOLDEN=1 pytest tests/test_golden.py,
then review the diff like any other code change.
"""

import os
import pathlib

import pytest
from conftest import load_example

import yota_src as ys

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = {
    "affine": lambda m: (m.loss, m.example()),
    "linear": lambda m: (m.loss, m.example()),
    "mlp": lambda m: (m.loss, m.example()),
    "iterative": lambda m: (m.double, m.example()),
    "branch": lambda m: (m.energy, m.example()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden_file(name):
    fn, args = CASES[name](load_example(name))
    source = ys.simplegrad(fn, *args).source
    path = GOLDEN / f"grad_{name}.py"
    if os.environ.get("YOTA_SRC_UPDATE_GOLDEN"):
        path.write_text(source)
    assert path.exists(), f"no golden file {path}; run with YOTA_SRC_UPDATE_GOLDEN=1"
    assert source == path.read_text(), f"{path.name} changed; review and update deliberately"
