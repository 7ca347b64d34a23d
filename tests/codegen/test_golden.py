"""Golden files pin the generated source of the examples and of a dozen
ordinary programs (golden_programs.py).

After a deliberate change: YOTA_SRC_UPDATE_GOLDEN=1 pytest tests/codegen/test_golden.py,
then review the diff like any other code change.
"""

import os

import golden_programs
import pytest
from golden_files import GOLDEN, GOLDEN_FILES, golden_sources

import yota_src as ys


@pytest.fixture(scope="module")
def sources():
    return golden_sources()


@pytest.mark.parametrize("name", GOLDEN_FILES)
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
