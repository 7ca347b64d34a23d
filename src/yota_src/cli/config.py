"""The gradients a project keeps, listed in its pyproject.toml.

    [tool.yota-src.targets."model.py:loss"]
    args = "model.py:example"
    out = "grads/grad_loss.py"
    wrt = ["W", "b"]          # optional, as `gen --wrt`
    unroll = false            # optional, as `gen --unroll`
    has-aux = false           # optional, as `gen --has-aux`
    transform = "grad"        # optional, as `gen --transform`

`yota-src gen`, `check` and `diff` without a target work on every one, so a
project regenerates, checks and reviews its generated gradients with one
command each. Paths are relative to the directory of the pyproject.toml,
found by walking up from the working directory, as git finds its repository.
A mistake in the table is reported naming the file and the key: a typo must
never silently skip a target in CI.
"""

from __future__ import annotations

import difflib
import os
import shlex
import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

TRANSFORMS = ("grad", "vjp", "jvp", "hvp")
KEYS = ("args", "out", "wrt", "unroll", "has-aux", "transform")
TABLE = "tool.yota-src"


class ConfigError(Exception):
    """A pyproject.toml whose [tool.yota-src] cannot be used, said in one line."""


@dataclass(frozen=True)
class Target:
    """One generated module: what `gen` takes on its command line. Paths are
    as a command run from the working directory would spell them."""

    function: str  # FILE.py:FUNC
    args: str  # FILE.py:NAME
    out: str | None  # OUT.py; None: stdout
    wrt: tuple | None = None  # names and positions, as `--wrt`
    unroll: bool = False
    has_aux: bool = False
    transform: str = "grad"

    def arguments(self) -> list[str]:
        """`gen`'s arguments for this target, but its output file."""
        parts = [self.function, "--args", self.args]
        if self.wrt is not None:
            parts += ["--wrt", ",".join(str(item) for item in self.wrt)]
        parts += ["--unroll"] if self.unroll else []
        parts += ["--has-aux"] if self.has_aux else []
        parts += ["--transform", self.transform] if self.transform != "grad" else []
        return parts

    def command(self) -> str:
        """The `yota-src gen` command that writes this target's module."""
        parts = self.arguments() + (["-o", self.out] if self.out else [])
        return " ".join(["yota-src gen", *(_shell_word(part) for part in parts)])


def find_pyproject(start: str) -> str:
    """The nearest pyproject.toml in `start` or a directory above it."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            raise ConfigError(
                f"no pyproject.toml in {os.path.abspath(start)} or any directory above it: "
                f"list the targets under [{TABLE}.targets] in your project's pyproject.toml "
                "(see docs/review.md), or name one: yota-src gen FILE.py:FUNC --args "
                "FILE.py:NAME -o OUT.py")
        directory = parent


def load_targets(start: str | None = None) -> tuple[str, list[Target]]:
    """(the pyproject.toml used, its targets in the order listed), paths made
    relative to `start` (the working directory by default)."""
    start = os.getcwd() if start is None else start
    path = find_pyproject(start)
    shown = os.path.relpath(path, start)
    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{shown}: not valid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{shown}: not UTF-8 text, as TOML must be ({error.reason} at "
                          f"byte {error.start})") from None
    except OSError as error:
        raise ConfigError(f"{shown}: cannot be read: {error.strerror}") from None
    table = document.get("tool", {}).get("yota-src") if isinstance(document.get("tool"),
                                                                     dict) else None
    if table is None:
        raise ConfigError(f"{shown}: no [{TABLE}] table: add one target as "
                          f'[{TABLE}.targets."model.py:loss"] with args = "model.py:example" '
                          'and out = "grads/grad_loss.py" (see docs/review.md)')
    if not isinstance(table, dict):
        raise ConfigError(f"{shown}: [{TABLE}] must be a table, not {_kind(table)}")
    for key in table:
        if key != "targets":
            raise ConfigError(f"{shown}: [{TABLE}] has an unknown key {key!r}"
                              f"{_suggestion(key, ('targets',))}; targets go under "
                              f"[{TABLE}.targets]")
    targets = table.get("targets")
    if not isinstance(targets, dict) or not targets:
        what = "no targets" if not targets else f"targets as {_kind(targets)}"
        raise ConfigError(f"{shown}: [{TABLE}] has {what}: list each one as "
                          f'[{TABLE}.targets."model.py:loss"] with args and out')
    root = os.path.dirname(path)
    found = [_target(shown, root, start, name, entry) for name, entry in targets.items()]
    writers: dict[str, str] = {}
    for name, target in zip(targets, found):
        out = os.path.normcase(os.path.realpath(target.out))  # a symlinked directory too
        if out in writers:  # one would always be stale
            raise ConfigError(f'{shown}: [{TABLE}.targets."{name}"].out is {target.out}, the '
                              f'out of "{writers[out]}" too: give each target its own file')
        writers[out] = name
    return path, found


def _target(shown: str, root: str, start: str, name: str, entry) -> Target:
    """One entry of [tool.yota-src.targets], checked key by key."""
    where = f'{shown}: [{TABLE}.targets."{name}"]'
    path, sep, function = name.rpartition(":")
    if not sep or not path or not function:
        raise ConfigError(f"{where}: the target's name must be FILE.py:FUNC, "
                          f"e.g. \"model.py:loss\"")
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with args and out, not {_kind(entry)}")
    for key in entry:
        if key not in KEYS:
            raise ConfigError(f"{where} has an unknown key {key!r}{_suggestion(key, KEYS)}; "
                              f"the keys are {', '.join(KEYS)}")
    for key, what in (("args", "the FILE.py:NAME giving example arguments"),
                      ("out", "the OUT.py file the module is written to")):
        if key not in entry:
            raise ConfigError(f"{where} has no {key!r}: add {key} = \"...\", {what}")
        if not isinstance(entry[key], str) or not entry[key]:
            raise ConfigError(f"{where}.{key} must be a string, {what}; "
                              f"not {_kind(entry[key])}")
    args_path, sep, args_name = entry["args"].rpartition(":")
    if not sep or not args_path or not args_name:
        raise ConfigError(f"{where}.args must be FILE.py:NAME, e.g. \"model.py:example\"; "
                          f"not {entry['args']!r}")
    for key in ("unroll", "has-aux"):
        if not isinstance(entry.get(key, False), bool):
            raise ConfigError(f"{where}.{key} must be true or false, not {_kind(entry[key])}")
    transform = entry.get("transform", "grad")
    if transform not in TRANSFORMS:
        raise ConfigError(f"{where}.transform must be one of {', '.join(TRANSFORMS)}; "
                          f"not {transform!r}")
    wrt = entry.get("wrt")
    if wrt is not None:
        if isinstance(wrt, str):  # "W,b", as --wrt takes it
            wrt = [item.strip() for item in wrt.split(",")]
        wrt = [wrt] if isinstance(wrt, int) and not isinstance(wrt, bool) else wrt
        if not isinstance(wrt, list) or not wrt or not all(
                isinstance(item, str) and item or type(item) is int and item >= 0
                for item in wrt):
            raise ConfigError(f"{where}.wrt must be a list of argument names or positions, "
                              f"e.g. [\"W\", \"b\"] or [0, 1]; not {_kind(wrt)}")
        wrt = tuple(wrt)

    def local(relative: str) -> str:
        return os.path.relpath(os.path.join(root, relative), start)
    return Target(function=f"{local(path)}:{function}", args=f"{local(args_path)}:{args_name}",
                  out=local(entry["out"]), wrt=wrt, unroll=entry.get("unroll", False),
                  has_aux=entry.get("has-aux", False), transform=transform)


def _suggestion(key: str, known) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _kind(value) -> str:
    """A TOML value as a message names it: `"yes"`, `a table`, `[1, 2]`."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _shell_word(text: str) -> str:
    """Quoted for a POSIX shell only where it must be, so commands stay readable."""
    return shlex.quote(text)
