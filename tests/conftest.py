import importlib.util
import os
import pathlib
import sys

# every pass's output is checked by Tape.verify(), and its input left unchanged
os.environ["YOTA_SRC_VERIFY"] = "1"

import numpy as np
import pytest
from hypothesis import settings

# `pytest` draws the same examples on every run and keeps no database, so a
# first run cannot fail on an example no change of yours caused, nor replay
# one found elsewhere; `pytest --hypothesis-profile explore` draws new ones
# and remembers what fails (what to run after changing a pass or the layout).
settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

TESTS = pathlib.Path(__file__).resolve().parent  # shared helpers, golden files, models
ROOT = TESTS.parent
EXAMPLES = ROOT / "examples"


def load_example(name: str):
    """Import examples/NAME.py by path, under the module name NAME (as the CLI does)."""
    if name in sys.modules and getattr(sys.modules[name], "__file__", "") == str(
            EXAMPLES / f"{name}.py"):
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(autouse=True)
def fresh_gradient_cache():
    """Each test starts without gradients cached by another, so a test that
    traces at one point is not answered by a variant another test made."""
    import yota_src.api.gradients

    yota_src.api.gradients._cache.clear()
    yield
