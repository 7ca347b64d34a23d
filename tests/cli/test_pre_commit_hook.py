"""docs/review.md's pre-commit snippet, as written, against a release of this
repository: the hook passes on fresh gradients and fails on a stale one."""

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

import yota_src

SNIPPET = next(block for block in re.findall(r"```yaml\n(.*?)```",
                                             (ROOT / "docs" / "review.md").read_text(), re.S)
               if "yota-src-check" in block)
REPO = re.search(r"^  - repo: (\S+)", SNIPPET, re.M).group(1)


def test_the_snippet_names_the_tag_of_this_release():
    """Releases are tagged `v<version>`: the snippet's rev is this one's."""
    assert re.search(r"^    rev: (\S+)", SNIPPET, re.M).group(1) == f"v{yota_src.__version__}"


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com",
                    *args], cwd=cwd, check=True, capture_output=True, timeout=120)


def release(tmp_path):
    """This working tree as a repository tagged as the release it is."""
    repository = tmp_path / "yota-src"
    shutil.copytree(ROOT, repository, ignore=shutil.ignore_patterns(
        ".git", ".hypothesis", ".*_cache", "__pycache__", "build", "*.egg-info", ".benchmarks"))
    git("init", "-q", cwd=repository)
    git("add", "-A", cwd=repository)
    git("commit", "-q", "-m", "release", cwd=repository)
    git("tag", f"v{yota_src.__version__}", cwd=repository)
    return repository


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_pre_commit_snippet_works_as_written(tmp_path):
    pytest.importorskip("pre_commit", reason="pre-commit is not installed (the test extra)")
    project = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "cli" / "hook_project", project)
    (project / ".pre-commit-config.yaml").write_text(
        SNIPPET.replace(REPO, str(release(tmp_path))))
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"),
                   "PYTHONHASHSEED": "0"}

    def hook():
        git("add", "-A", cwd=project)
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"],
                              cwd=project, env=environment, capture_output=True, text=True,
                              timeout=600)

    git("init", "-q", cwd=project)
    subprocess.run([sys.executable, "-m", "yota_src", "gen"], cwd=project, check=True,
                   env=environment, capture_output=True, timeout=300)
    fresh = hook()
    assert fresh.returncode == 0 and "yota-src check" in fresh.stdout, fresh.stdout + fresh.stderr
    model = project / "model.py"
    model.write_text(model.read_text().replace("np.sum(h * h)", "np.sum(h ** 3)"))
    stale = hook()
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "grads/grad_loss.py (model.py:loss) is stale" in stale.stdout
