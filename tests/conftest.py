import contextlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

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
STANDIN = TESTS / "cupy_standin"  # a NumPy-backed `cupy`, for machines without a GPU


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


def _device_modules() -> list[str]:
    return [name for name in sys.modules if name.partition(".")[0] in ("cupy", "cupyx")]


@contextlib.contextmanager
def cupy_standin():
    """The stand-in imported as `cupy` while inside: a real CuPy imported
    before is put back after."""
    saved = {name: sys.modules.pop(name) for name in _device_modules()}
    sys.path.insert(0, str(STANDIN))
    try:
        import cupy

        assert cupy.STANDIN
        yield cupy
    finally:
        sys.path.remove(str(STANDIN))
        for name in _device_modules():
            del sys.modules[name]
        sys.modules.update(saved)


def run_without_yota_src(script: str, *paths, timeout: float | None = None) -> str:
    """What `script` prints, run in a new interpreter where importing
    yota_src fails and `paths` come first on sys.path: a saved module must
    need nothing of yota-src's."""
    prelude = textwrap.dedent(f"""
        import sys
        class NoYota:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] == "yota_src":
                    raise ImportError("yota_src is not installed here")
        sys.meta_path.insert(0, NoYota())
        sys.path[:0] = {[str(path) for path in paths]!r}
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)],
                          check=True, capture_output=True, text=True, timeout=timeout).stdout


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
