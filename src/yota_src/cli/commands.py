"""The commands: `gen` writes each target's module, `check` and `diff`
compare it with the committed file, `trace` prints the tape.

Every target is checked and generated before any file is written, and an
output file that names an input is refused before any work.
"""

from __future__ import annotations

import difflib
import sys

from yota_src import api
from yota_src.cli import config, generation
from yota_src.cli.failures import UsageError, one_line
from yota_src.cli.output_files import committed, refuse_overwriting_inputs, write
from yota_src.cli.user_files import load_inputs, user_code


def run(options) -> tuple[int, str]:
    """(exit status, what to print on stdout): the command the parser named
    (parser.py), one of COMMANDS."""
    return COMMANDS[options.command](options)


def _checked_targets(options) -> list[config.Target]:
    """The targets, refused before any work where an output is an input:
    never replace the user's source."""
    targets = _targets(options)
    for target in targets:
        if target.out:
            refuse_overwriting_inputs(target.out, target.function, target.args)
    return targets


def _gen(options) -> tuple[int, str]:
    """Each target's module, written to its file (or printed: one target, no -o)."""
    targets = _checked_targets(options)
    if options.check:
        return _compared(targets)
    sources = generation.sources(targets)  # all, before writing any
    if len(targets) == 1 and not targets[0].out:
        return 0, sources[0]
    for target, source in zip(targets, sources):
        write(target.out, source)
    if options.target is not None:
        return 0, ""
    return 0, "".join(f"wrote {target.out}\n" for target in targets)


def _targets(options) -> list[config.Target]:
    """The target named on the command line, or else every one in pyproject.toml."""
    command = options.command
    if getattr(options, "target", None) is None:
        given = [flag for flag, value in (
            ("--args", getattr(options, "args", None)),
            ("-o", getattr(options, "output", None)), ("--wrt", getattr(options, "wrt", None)),
            ("--unroll", getattr(options, "unroll", False)),
            ("--has-aux", getattr(options, "has_aux", False)),
            ("--transform", getattr(options, "transform", None))) if value]
        if given:
            raise UsageError(f"{given[0]} applies to one target, named before it: `yota-src "
                             f"{command} FILE.py:FUNC --args FILE.py:NAME ...`; without "
                             "FILE.py:FUNC, the targets of pyproject.toml are used as listed")
        return config.load_targets()[1]
    if options.args is None:
        raise UsageError(f"yota-src {command} {options.target} needs --args FILE.py:NAME, "
                         "the example arguments")
    if not options.output and (command == "diff" or getattr(options, "check", False)):
        flag = "diff" if command == "diff" else "--check"
        raise UsageError(f"{flag} needs -o OUT.py, the file to compare")
    wrt = _wrt_list(options.wrt)
    return [config.Target(options.target, options.args, options.output,
                          wrt=None if wrt is None else tuple(wrt), unroll=options.unroll,
                          has_aux=options.has_aux, transform=options.transform or "grad")]


def _wrt_list(text: str | None) -> list | None:
    """`W,b` or `0,1` (or a mix): names stay names, digits are positions."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UsageError(f"--wrt {text!r} is not a comma-separated list of argument names or "
                         "positions (e.g. W,b or 0,1)")
    return [int(item) if item.isdigit() else item for item in items]


def _check(options) -> tuple[int, str]:
    return _compared(_checked_targets(options))


def _compared(targets: list[config.Target]) -> tuple[int, str]:
    """Exit 1 naming each target whose file is not what gen would write now,
    with the command that fixes it; writes nothing."""
    stale = failed = 0
    for target in targets:  # each said, even after one that fails to generate
        try:
            source = generation.source_of(target, apart=len(targets) > 1)
        except Exception as error:  # noqa: BLE001 - said as gen would say it, then the next
            if len(targets) == 1:
                raise  # (one target: its error is the command's)
            failed += 1
            print(f"yota-src: {target.out} ({target.function}) cannot be generated: "
                  f"{one_line(error)}", file=sys.stderr)
            continue
        current = committed(target.out)
        if current == source:
            continue
        stale += 1
        state = "is missing: generate" if current is None else "is stale: regenerate"
        print(f"yota-src: {target.out} ({target.function}) {state} it with "
              f"`{target.command()}`", file=sys.stderr)
    if failed:
        return 2, ""
    if stale:
        return 1, ""
    return 0, f"{len(targets)} target{'' if len(targets) == 1 else 's'} up to date\n"


def _diff(options) -> tuple[int, str]:
    """A unified diff per target from its committed file to what gen would
    write now; exit 1 when there is one, as `git diff --exit-code`."""
    targets = _checked_targets(options)
    text = ""
    for target, source in zip(targets, generation.sources(targets)):
        text += unified_diff(target.out, committed(target.out), source)
    return (1 if text else 0), text


def unified_diff(path: str, before: str | None, after: str) -> str:
    """`diff -u` of `path` from `before` (None: no file) to `after`, with the
    `\\ No newline at end of file` marker patch(1) and git expect."""
    if before == after:
        return ""
    old = [] if before is None else _diff_lines(before)
    lines = difflib.unified_diff(old, _diff_lines(after),
                                 "/dev/null" if before is None else path, path,
                                 "" if before is None else "committed", "generated now")
    return "".join(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
                   for line in lines)


def _diff_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _trace(options) -> tuple[int, str]:
    """The tape (or the gradient's tape) as a listing or a DOT graph."""
    fn, args = load_inputs(options.target, options.args)
    with user_code(f"tracing {options.target}", options.target.rpartition(":")[0],
                   "the function must return its value, not exit"):
        tape = api.simplegrad(fn, *args).gradient_tape if options.grad else api.trace(fn, *args)[1]
    return 0, tape.to_dot() if options.dot else f"{tape}\n"


COMMANDS = {"gen": _gen, "check": _check, "diff": _diff, "trace": _trace}
