"""Every snippet in README.md and docs/ is run, and what it shows compared
(issue 27, item 2). Each fenced block is preceded by a directive,
`<!-- doc: VERB ARGS -->`, saying what the block is:

- `file PATH`: the file's contents, written into the doc's project directory;
- `edit PATH`: a diff applied to that file (`-` lines replaced by `+` lines);
- `append PATH`: lines added at the end of that file;
- `run`: a console: each `$ command` runs in the project (bash; `yota-src` is
  this Python's `-m yota_src`), and the lines after it are its output,
  compared exactly; `run in a copy; first: SHELL` runs it in a copy of the
  project after SHELL there, leaving the project as it was;
- `excerpt PATH`: lines that appear, as shown, in that file;
- `python [NAME]`: a script, run as the file NAME (doc_snippet.py) in the
  project; `output`: lines that appear, as shown, in what the last `python`
  block printed;
- `commands`: a CI fragment whose `run:` commands run in the project and pass;
- `same-as DOC`: a block that also appears in DOC (comments aside), run there;
- `tested PATH`: what a test (or .ci/run) at PATH runs, which must exist.

A block without a directive fails: a snippet nobody runs goes stale unseen.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?:<!-- doc: (?P<directive>.*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)^```$",
                   re.S | re.M)
ENVIRONMENT = {**os.environ, "PYTHONHASHSEED": "0", "GIT_AUTHOR_NAME": "doc",
               "GIT_AUTHOR_EMAIL": "doc@example.com", "GIT_COMMITTER_NAME": "doc",
               "GIT_COMMITTER_EMAIL": "doc@example.com", "PYTHON": sys.executable}
SHELL_PRELUDE = 'yota-src() { "$PYTHON" -m yota_src "$@"; }\n'


def blocks(doc: Path) -> list[tuple[str | None, str, str, int]]:
    text = doc.read_text()
    return [(m.group("directive"), m.group("lang"), m.group("body"),
             text.count("\n", 0, m.start("body")) + 1) for m in FENCE.finditer(text)]


def test_every_block_says_how_it_is_run():
    missing = [f"{doc.name}:{line}" for doc in DOCS for directive, _, _, line in blocks(doc)
               if directive is None]
    assert missing == [], f"blocks with no `<!-- doc: ... -->` directive: {missing}"


def appears(shown: str, text: str) -> bool:
    """`shown`'s lines, as one run of consecutive lines of `text` (each line's
    trailing spaces aside)."""
    want = [line.rstrip() for line in shown.rstrip("\n").splitlines()]
    have = [line.rstrip() for line in text.splitlines()]
    return any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


class Project:
    """The directory a doc's blocks run in, one after another."""

    def __init__(self, path: Path):
        self.path = path
        self.printed = ""
        path.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=path, check=True, env=ENVIRONMENT)

    def file(self, name: str, body: str) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)

    def edit(self, name: str, body: str) -> None:
        target = self.path / name
        old = "".join(line[1:] + "\n" for line in body.splitlines() if line.startswith("-"))
        new = "".join(line[1:] + "\n" for line in body.splitlines() if line.startswith("+"))
        text = target.read_text()
        assert old in text, f"{name} does not hold the lines the diff removes"
        target.write_text(text.replace(old, new, 1))

    def run(self, body: str, where: Path | None = None) -> None:
        status = 0
        for command, expected in _commands(body):
            result = self.shell(command.replace("$?", str(status)), where)
            status = result.returncode
            got = [line.rstrip() for line in result.stdout.rstrip("\n").splitlines()]
            assert got == [line.rstrip() for line in expected], \
                f"$ {command}\n--- shown\n" + "\n".join(expected) + "\n--- got\n" + result.stdout

    def shell(self, command: str, where: Path | None = None) -> subprocess.CompletedProcess:
        """`command` run by bash in the project (or `where`), its output and
        errors as one text."""
        return subprocess.run(["bash", "-c", SHELL_PRELUDE + command], cwd=where or self.path,
                              env=ENVIRONMENT, timeout=300, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def run_in_copy(self, setup: str, body: str, tmp: Path) -> None:
        copy = tmp / "copy"
        shutil.copytree(self.path, copy)
        subprocess.run(["bash", "-c", setup], cwd=copy, check=True, env=ENVIRONMENT)
        self.run(body, where=copy)

    def python(self, body: str, name: str) -> None:
        script = self.path / (name or "doc_snippet.py")
        script.write_text(body)
        result = subprocess.run([sys.executable, script.name], cwd=self.path, env=ENVIRONMENT,
                                capture_output=True, text=True, timeout=300)
        script.unlink()
        assert result.returncode == 0, result.stderr
        self.printed = result.stdout


def _commands(body: str) -> list[tuple[str, list[str]]]:
    commands = []
    for line in body.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            commands[-1][1].append(line)
    return commands


def _without_comments(body: str) -> list[str]:
    return [re.sub(r"\s+#.*$", "", line).rstrip() for line in body.splitlines()
            if not line.lstrip().startswith("#")]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.name)
def test_every_block_runs_and_shows_what_it_gives(doc, tmp_path):
    project = Project(tmp_path / "project")
    for directive, _, body, line in blocks(doc):
        verb, _, rest = (directive or "").partition(" ")
        where = f"{doc.name}:{line}"
        if verb == "file":
            project.file(rest, body)
        elif verb == "edit":
            project.edit(rest, body)
        elif verb == "append":
            target = project.path / rest
            target.write_text(target.read_text() + "\n" + body)
        elif verb == "run" and rest.startswith("in a copy; first: "):
            project.run_in_copy(rest.removeprefix("in a copy; first: "), body, tmp_path)
        elif verb == "run":
            project.run(body)
        elif verb == "excerpt":
            text = (project.path / rest).read_text()
            assert appears(body, text), f"{where}: not in {rest}:\n{text}"
        elif verb == "python":
            project.python(body, rest)
        elif verb == "output":
            assert appears(body, project.printed), \
                f"{where}: not printed:\n{project.printed}"
        elif verb == "commands":
            for command in re.findall(r"^\s*- run: (.*)$", body, re.M):
                result = project.shell(command)
                assert result.returncode == 0, f"{where}: {command}\n{result.stdout}"
        elif verb == "same-as":
            others = [_without_comments(other) for _, _, other, _ in blocks(ROOT / rest)]
            assert _without_comments(body) in others, f"{where}: not a block of {rest}"
        elif verb == "tested":
            assert (ROOT / rest).exists(), f"{where}: {rest} does not exist"
        else:
            pytest.fail(f"{where}: unknown directive {directive!r}")
