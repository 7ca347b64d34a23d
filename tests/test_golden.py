"""Golden files pin the generated source of the examples and of a dozen
ordinary programs (golden_programs.py).

After a deliberate change: YOTA_SRC_UPDATE_GOLDEN=1 pytest tests/test_golden.py,
then review the diff like any other code change.
"""

import os
import pathlib

import golden_programs
import pytest
from conftest import load_example

import yota_src as ys

GOLDEN = pathlib.Path(__file__).parent / "golden"
EXAMPLES = {
    "affine": lambda m: (m.loss, m.example()),
    "linear": lambda m: (m.loss, m.example()),
    "mlp": lambda m: (m.loss, m.example()),
    "iterative": lambda m: (m.double, m.example()),
    "branch": lambda m: (m.energy, m.example()),
}


def golden_sources() -> dict:
    """Each golden file's name and the source generated for it now."""
    sources = {}
    for name, case in EXAMPLES.items():
        fn, args = case(load_example(name))
        sources[f"grad_{name}.py"] = ys.simplegrad(fn, *args).source
    for name in golden_programs.NAMES:
        fn, args, wrt = golden_programs.case(name)
        sources[f"grad_program_{name}.py"] = ys.simplegrad(fn, *args, wrt=wrt).source
    return sources


@pytest.fixture(scope="module")
def sources():
    return golden_sources()


NAMES = [f"grad_{name}.py" for name in EXAMPLES] + \
    [f"grad_program_{name}.py" for name in golden_programs.NAMES]


@pytest.mark.parametrize("name", NAMES)
def test_generated_source_matches_golden_file(name, sources):
    path = GOLDEN / name
    if os.environ.get("YOTA_SRC_UPDATE_GOLDEN"):
        path.write_text(sources[name])
    assert path.exists(), f"no golden file {path}; run with YOTA_SRC_UPDATE_GOLDEN=1"
    assert sources[name] == path.read_text(), f"{name} changed; review and update deliberately"


@pytest.mark.parametrize("name", golden_programs.NAMES)
def test_golden_programs_gradients_are_right(name):
    fn, args, _ = golden_programs.case(name)
    ys.check_grad(fn, *args)
