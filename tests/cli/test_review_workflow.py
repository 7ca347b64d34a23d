"""The review workflow: targets listed in pyproject.toml, generated with
`yota-src gen`, checked with `yota-src check`, reviewed with `yota-src diff`."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

from yota_src.cli import config

MODEL = """
    import numpy as np


    def loss(W, b, x):
        h = np.tanh(W @ x + b)
        return np.sum(h * h)


    def predict(W, x):
        return np.sum(W @ x)


    def example():
        return np.full((3, 4), 0.1), np.zeros(3), np.ones(4)


    def example_predict():
        return np.ones((3, 4)), np.ones(4)
"""

PYPROJECT = """
    [project]
    name = "demo"

    [tool.yota-src.targets."model.py:loss"]
    args = "model.py:example"
    out = "grads/grad_loss.py"
    wrt = ["W", "b"]

    [tool.yota-src.targets."model.py:predict"]
    args = "model.py:example_predict"
    out = "grads/grad_predict.py"
"""


def run(*args, cwd):
    """`python -m yota_src ARGS` in `cwd`, under the hash seed the command
    would start itself again with (which saves starting twice)."""
    return subprocess.run([sys.executable, "-m", "yota_src", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300,
                          env={**os.environ, "PYTHONHASHSEED": "0"})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture
def project(tmp_path):
    write(tmp_path / "model.py", MODEL)
    write(tmp_path / "pyproject.toml", PYPROJECT)
    (tmp_path / "grads").mkdir()
    return tmp_path


@pytest.fixture
def generated(project):
    result = run("gen", cwd=project)
    assert result.returncode == 0, result.stderr
    return project


def make_loss_stale(project):
    model = project / "model.py"
    model.write_text(model.read_text().replace("np.sum(h * h)", "np.sum(h ** 3)"))


@pytest.mark.slow
def test_gen_without_a_target_writes_every_target(project):
    result = run("gen", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "wrote grads/grad_loss.py\nwrote grads/grad_predict.py\n"
    loss = (project / "grads" / "grad_loss.py").read_text()
    assert "def grad_loss(W, b, x):" in loss and "    return out, dW, db, None\n" in loss
    assert "def grad_predict(W, x):" in (project / "grads" / "grad_predict.py").read_text()


@pytest.mark.slow
def test_check_passes_on_fresh_targets_and_writes_nothing(generated):
    before = {path: path.stat().st_mtime_ns for path in (generated / "grads").iterdir()}
    result = run("check", cwd=generated)
    assert (result.returncode, result.stdout, result.stderr) == (0, "2 targets up to date\n", "")
    assert {path: path.stat().st_mtime_ns for path in (generated / "grads").iterdir()} == before


@pytest.mark.slow
def test_a_stale_target_is_named_diffed_and_fixed(generated):
    predict = (generated / "grads" / "grad_predict.py").read_text()
    make_loss_stale(generated)
    before = (generated / "grads" / "grad_loss.py").read_text()

    check = run("check", cwd=generated)
    assert check.returncode == 1 and check.stdout == ""
    command = "yota-src gen model.py:loss --args model.py:example --wrt W,b -o grads/grad_loss.py"
    assert check.stderr.splitlines() == [
        f"yota-src: grads/grad_loss.py (model.py:loss) is stale: regenerate it with `{command}`"]
    assert (generated / "grads" / "grad_loss.py").read_text() == before  # written by none

    diff = run("diff", cwd=generated)
    assert diff.returncode == 1, diff.stderr
    lines = diff.stdout.splitlines()
    assert lines[:2] == ["--- grads/grad_loss.py\tcommitted",
                         "+++ grads/grad_loss.py\tgenerated now"]
    assert "-    # model.py:6  return np.sum(h * h)" in lines
    assert "+    # model.py:6  return np.sum(h ** 3)" in lines
    assert "grad_predict" not in diff.stdout

    fix = run(*command.split()[1:], cwd=generated)  # the command check suggested
    assert fix.returncode == 0, fix.stderr
    assert run("check", cwd=generated).returncode == 0
    assert run("diff", cwd=generated).stdout == ""
    assert (generated / "grads" / "grad_predict.py").read_text() == predict


@pytest.mark.slow
def test_gen_regenerates_stale_targets(generated):
    make_loss_stale(generated)
    assert run("gen", cwd=generated).returncode == 0
    result = run("check", cwd=generated)
    assert (result.returncode, result.stdout) == (0, "2 targets up to date\n")


@pytest.mark.slow
def test_gen_check_without_a_target_checks_every_target(generated):
    make_loss_stale(generated)
    result = run("gen", "--check", cwd=generated)
    assert result.returncode == 1 and "grads/grad_loss.py (model.py:loss) is stale" in result.stderr


@pytest.mark.slow
def test_a_missing_output_is_named_with_the_command_that_writes_it(project):
    result = run("check", cwd=project)
    assert result.returncode == 1
    assert [line.split(" with ")[0] for line in result.stderr.splitlines()] == [
        "yota-src: grads/grad_loss.py (model.py:loss) is missing: generate it",
        "yota-src: grads/grad_predict.py (model.py:predict) is missing: generate it"]
    diff = run("diff", cwd=project)
    assert diff.returncode == 1
    assert diff.stdout.startswith("--- /dev/null\n+++ grads/grad_loss.py\tgenerated now\n")


@pytest.mark.slow
def test_diff_of_one_target_on_the_command_line(generated):
    command = ("diff", "model.py:loss", "--args", "model.py:example", "--wrt", "W,b",
               "-o", "grads/grad_loss.py")
    fresh = run(*command, cwd=generated)
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (0, "", "")
    make_loss_stale(generated)
    stale = run(*command, cwd=generated)
    assert stale.returncode == 1 and "+    # model.py:6  return np.sum(h ** 3)" in stale.stdout


@pytest.mark.slow
def test_paths_are_relative_to_the_pyproject_whatever_the_working_directory(generated):
    make_loss_stale(generated)
    result = run("check", cwd=generated / "grads")
    assert result.returncode == 1
    assert "`yota-src gen ../model.py:loss --args ../model.py:example --wrt W,b " \
           "-o grad_loss.py`" in result.stderr


@pytest.mark.slow
def test_a_target_generates_what_its_command_line_would(generated):
    command = run("gen", "model.py:loss", "--args", "model.py:example", "--wrt", "W,b",
                  cwd=generated)
    assert command.stdout == (generated / "grads" / "grad_loss.py").read_text()


@pytest.mark.slow
def test_every_gen_option_is_a_key(project):
    write(project / "pyproject.toml", """
        [tool.yota-src.targets."model.py:predict"]
        args = "model.py:example_predict"
        out = "grads/vjp_predict.py"
        transform = "vjp"
        unroll = true
    """)
    assert run("gen", cwd=project).returncode == 0
    command = run("gen", "model.py:predict", "--args", "model.py:example_predict",
                  "--transform", "vjp", "--unroll", cwd=project)
    assert command.returncode == 0, command.stderr
    assert (project / "grads" / "vjp_predict.py").read_text() == command.stdout
    assert "def vjp_predict(W, x, dout):" in command.stdout


def test_targets_read_every_key(tmp_path):
    write(tmp_path / "pyproject.toml", """
        [tool.yota-src.targets."src/model.py:loss"]
        args = "src/model.py:example"
        out = "grads/grad_loss.py"
        wrt = [0, "b"]
        unroll = true
        has-aux = true
        transform = "grad"
    """)
    path, targets = config.load_targets(str(tmp_path))
    assert path == str(tmp_path / "pyproject.toml")
    assert targets == [config.Target("src/model.py:loss", "src/model.py:example",
                                     "grads/grad_loss.py", wrt=(0, "b"), unroll=True,
                                     has_aux=True)]
    assert targets[0].command() == ("yota-src gen src/model.py:loss --args src/model.py:example "
                                    "--wrt 0,b --unroll --has-aux -o grads/grad_loss.py")


TARGET = '[tool.yota-src.targets."model.py:loss"]\n'
BAD_CONFIGS = {  # pyproject.toml text (None: no file), what the one error line says
    "no pyproject.toml": (None, ["no pyproject.toml in", "[tool.yota-src.targets]"]),
    "not TOML": ("[tool.yota-src\n", ["pyproject.toml: not valid TOML"]),
    "no [tool.yota-src]": ("[project]\nname = 'demo'\n",
                           ["pyproject.toml: no [tool.yota-src] table"]),
    "no targets": ("[tool.yota-src]\n", ["pyproject.toml: [tool.yota-src] has no targets"]),
    "targets not a table": ("[tool.yota-src]\ntargets = ['model.py:loss']\n",
                            ["[tool.yota-src] has targets as ['model.py:loss']"]),
    "unknown key in [tool.yota-src]": ("[tool.yota-src]\ntarget = 1\n",
                                       ["[tool.yota-src] has an unknown key 'target'",
                                        "did you mean 'targets'?"]),
    "no args": (TARGET + "out = 'g.py'\n",
                ['[tool.yota-src.targets."model.py:loss"] has no \'args\'']),
    "no out": (TARGET + "args = 'model.py:example'\n",
               ['[tool.yota-src.targets."model.py:loss"] has no \'out\'']),
    "unknown key": (TARGET + "args = 'model.py:example'\nout = 'g.py'\nhas_aux = true\n",
                    ["unknown key 'has_aux'", "did you mean 'has-aux'?"]),
    "args not FILE:NAME": (TARGET + "args = 'model.py'\nout = 'g.py'\n",
                           ['targets."model.py:loss"].args must be FILE.py:NAME']),
    "out not a string": (TARGET + "args = 'model.py:example'\nout = 3\n",
                         ['targets."model.py:loss"].out must be a string']),
    "unroll not a bool": (TARGET + "args = 'model.py:example'\nout = 'g.py'\nunroll = 'yes'\n",
                          ['targets."model.py:loss"].unroll must be true or false']),
    "bad transform": (TARGET + "args = 'model.py:example'\nout = 'g.py'\ntransform = 'hess'\n",
                      ['targets."model.py:loss"].transform must be one of grad, vjp']),
    "bad wrt": (TARGET + "args = 'model.py:example'\nout = 'g.py'\nwrt = [true]\n",
                ['targets."model.py:loss"].wrt must be a list of argument names']),
    "target name not FILE:FUNC": ('[tool.yota-src.targets."model.py"]\nargs = "m.py:e"\n',
                                  ["the target's name must be FILE.py:FUNC"]),
    "two targets, one out": ('[tool.yota-src.targets."model.py:loss"]\nargs = "model.py:e"\n'
                             'out = "g.py"\n[tool.yota-src.targets."model.py:other"]\n'
                             'args = "model.py:e"\nout = "./g.py"\n',
                             ['targets."model.py:other"].out is g.py, the out of '
                              '"model.py:loss" too']),
    "target not a table": ('[tool.yota-src.targets]\n"model.py:loss" = "model.py:example"\n',
                           ['targets."model.py:loss"] must be a table']),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_is_one_line_naming_the_file_and_key(case, tmp_path):
    text, fragments = BAD_CONFIGS[case]
    if text is not None:
        write(tmp_path / "pyproject.toml", text)
    result = run("check", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yota-src: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.parametrize("command", ["gen", "diff", "gen --check"])
def test_every_command_without_a_target_reports_bad_config_alike(command, tmp_path):
    write(tmp_path / "pyproject.toml", "[project]\nname = 'demo'\n")
    result = run(*command.split(), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == ("yota-src: error: pyproject.toml: no [tool.yota-src] table: add "
                             'one target as [tool.yota-src.targets."model.py:loss"] with args = '
                             '"model.py:example" and out = "grads/grad_loss.py" '
                             "(see docs/review.md)\n")


@pytest.mark.parametrize("options", [["--args", "model.py:example"], ["-o", "g.py"],
                                     ["--wrt", "W"], ["--unroll"]])
def test_options_of_one_target_without_a_target_are_refused(options, project):
    result = run("gen", *options, cwd=project)
    assert result.returncode == 2
    assert f"{options[0]} applies to one target" in result.stderr
    assert not any((project / "grads").iterdir())


def test_pre_commit_hook_runs_check_on_python_and_pyproject_changes():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert re.search(r"^- id: yota-src-check$", text, re.M)
    fields = dict(re.findall(r"^\s+(\w+): (.+)$", text, re.M))
    assert fields["entry"] == "yota-src check"
    assert fields["language"] == "python"
    assert fields["pass_filenames"] == "false"
    files = re.compile(fields["files"].strip("'\""))
    assert files.search("model.py") and files.search("sub/pyproject.toml")
    assert not files.search("README.md")


def test_review_doc_shows_every_command():
    text = (ROOT / "docs" / "review.md").read_text()
    for fragment in ("[tool.yota-src.targets.", "yota-src gen", "yota-src check",
                     "yota-src diff", "is stale: regenerate it with", "@@ ", "pre-commit"):
        assert fragment in text, fragment


def test_python_3_10_reads_toml_with_tomli():
    text = (ROOT / "pyproject.toml").read_text()
    assert "\"tomli>=1.1; python_version<'3.11'\"" in text


# Found by a hostile tester.

HELPER = """
    import numpy as np


    def act(z):
        return np.{name}(z)
"""

USES_HELPER = """
    import numpy as np
    from helpers import act


    def loss(x):
        return np.sum(act(x) ** 2)


    def example():
        return (np.ones(3),)
"""


@pytest.mark.slow
def test_each_target_is_generated_as_its_own_command_would(tmp_path):
    """Two targets whose files import a helpers.py of their own: the second
    must not get the first's (a gradient of tanh for one of sin), and what
    gen writes is what the standalone command writes, byte for byte."""
    for part, name in (("a", "tanh"), ("b", "sin")):
        write(tmp_path / part / "helpers.py", HELPER.format(name=name))
        write(tmp_path / part / "model.py", USES_HELPER)
    write(tmp_path / "pyproject.toml", """
        [tool.yota-src.targets."a/model.py:loss"]
        args = "a/model.py:example"
        out = "grads/a/grad_loss.py"

        [tool.yota-src.targets."b/model.py:loss"]
        args = "b/model.py:example"
        out = "grads/b/grad_loss.py"
    """)
    assert run("gen", cwd=tmp_path).returncode == 0  # grads/ made as needed
    together = (tmp_path / "grads/b/grad_loss.py").read_text()
    assert "np.cos(x)" in together and "tanh" not in together
    alone = run("gen", "b/model.py:loss", "--args", "b/model.py:example", cwd=tmp_path)
    assert alone.stdout == together
    assert run("check", cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_gen_writes_nothing_when_a_target_fails(project):
    model = project / "model.py"
    model.write_text(model.read_text().replace("return np.sum(W @ x)", "raise RuntimeError('no')"))
    result = run("gen", cwd=project)
    assert result.returncode == 2
    assert "model.py:predict" in result.stderr and "RuntimeError" in result.stderr
    assert not (project / "grads" / "grad_loss.py").exists()


@pytest.mark.slow
def test_a_committed_file_with_crlf_line_endings_is_stale(generated):
    path = generated / "grads" / "grad_loss.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    result = run("check", cwd=generated)
    assert result.returncode == 1 and "grads/grad_loss.py" in result.stderr


def test_two_outs_that_are_one_file_through_a_symlink_are_refused(project):
    (project / "alias").symlink_to(project / "grads")
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(
        text.replace('out = "grads/grad_predict.py"', 'out = "alias/grad_loss.py"'))
    result = run("check", cwd=project)
    assert result.returncode == 2 and "give each target its own file" in result.stderr


def test_wrt_as_one_string_of_names(project):
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text.replace('wrt = ["W", "b"]', 'wrt = "W, b"'))
    targets = config.load_targets(str(project))[1]
    assert targets[0].wrt == ("W", "b")


def test_a_pyproject_that_is_not_utf8(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.yota-src]\nx = "\xff"\n')
    result = run("check", cwd=tmp_path)
    assert result.returncode == 2
    assert re.search(r"pyproject\.toml: not UTF-8", result.stderr), result.stderr


@pytest.mark.slow
def test_check_says_every_target_when_one_fails_to_generate(generated):
    """A target that cannot be made (here its function reads a missing name)
    is said, and the others' states are said too."""
    model = generated / "model.py"
    model.write_text(model.read_text().replace("return np.sum(h * h)",
                                               "return np.sum(h * undefined_name)"))
    (generated / "grads" / "grad_predict.py").write_text("# stale\n")
    result = run("check", cwd=generated)
    assert result.returncode == 2
    assert "grads/grad_loss.py (model.py:loss) cannot be generated" in result.stderr
    assert "undefined_name" in result.stderr
    assert "grads/grad_predict.py (model.py:predict) is stale" in result.stderr
