"""docs/rules.md is generated from the registry and must stay in sync."""

import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("scipy", reason="docs/rules.md lists the SciPy rules: it is checked with "
                                    "SciPy installed (pip install yota-src[test])")



@pytest.mark.slow
def test_rule_catalogue_is_in_sync():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "make_rules_doc.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_catalogue_counts_match_the_registry():
    sys.path.insert(0, str(ROOT / "tools"))
    from make_rules_doc import builtin_rules

    templates, nondifferentiable = builtin_rules()
    text = (ROOT / "docs" / "rules.md").read_text()
    assert f"**{len(templates)} primitives have gradient rules; {len(nondifferentiable)}" in text
    assert len(templates) > 115
