"""The golden files (tests/golden/): the modules generated for the examples
and for the programs of golden_programs.py, pinned byte for byte by
codegen/test_golden.py and read as a reviewer would by
codegen/test_reviewer_properties.py."""

import golden_programs
from conftest import TESTS, load_example

import yota_src as ys

GOLDEN = TESTS / "golden"
GOLDEN_EXAMPLES = {
    "affine": lambda m: (m.loss, m.example()),
    "linear": lambda m: (m.loss, m.example()),
    "mlp": lambda m: (m.loss, m.example()),
    "iterative": lambda m: (m.double, m.example()),
    "branch": lambda m: (m.energy, m.example()),
}


def golden_sources() -> dict:
    """Each golden file's name and the source generated for it now."""
    sources = {}
    for name, made in GOLDEN_EXAMPLES.items():
        fn, args = made(load_example(name))
        sources[f"grad_{name}.py"] = ys.simplegrad(fn, *args).source
    for name in golden_programs.NAMES:
        fn, args, wrt = golden_programs.case(name)
        sources[f"grad_program_{name}.py"] = ys.simplegrad(fn, *args, wrt=wrt).source
    return sources


GOLDEN_FILES = [f"grad_{name}.py" for name in GOLDEN_EXAMPLES] + \
    [f"grad_program_{name}.py" for name in golden_programs.NAMES]
