"""What a user of the installed package gets besides the code."""

import importlib.metadata
import importlib.resources
import re

from conftest import ROOT

import yota_src


def test_the_package_says_it_is_typed():
    assert importlib.resources.files("yota_src").joinpath("py.typed").is_file()


def test_the_version_is_defined_once():
    text = (ROOT / "pyproject.toml").read_text()
    project = text[text.index("[project]"):].split("\n[", 1)[0]  # the [project] table
    assert re.search(r"^version\s*=", project, re.MULTILINE) is None
    assert 'dynamic = ["version"]' in project
    assert importlib.metadata.version("yota-src") == yota_src.__version__


def test_the_metadata_a_package_index_shows():
    metadata = importlib.metadata.metadata("yota-src")
    assert "cuda" in metadata.get_all("Provides-Extra")
    assert any("Typing :: Typed" in each for each in metadata.get_all("Classifier"))
    assert metadata["License"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT")
