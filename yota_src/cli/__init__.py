"""`yota-src gen`, `check`, `diff` and `trace`: the command line.

Bad input ends with one line on stderr and a non-zero exit, never a
traceback, and never touches an existing output file. The user's code runs
here (the files are imported, the --args callable called, the function
unrolled), so whatever it does there, exiting included, is bad input too.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import difflib
import importlib.util
import inspect
import os
import subprocess
import sys
import sysconfig
import tokenize
import traceback
import types
from collections.abc import Sequence

from yota_src import api
from yota_src.cli import config
from yota_src.codegen import loader
from yota_src.differentiate import cotangents
from yota_src.errors import YotaError
from yota_src.version import __version__


class UsageError(Exception):
    """Bad command-line input, reported as one line."""


class UserExit(Exception):
    """The user's code exited (`sys.exit()`, `exit()`, `raise SystemExit`)
    while yota-src ran it: a failure of the input, not the end of the run."""

    def __init__(self, exit: SystemExit, doing: str, path: str, hint: str):
        super().__init__(f"exited with SystemExit({exit.code!r}) while yota-src was {doing}")
        self.exit, self.doing, self.path, self.hint = exit, doing, path, hint


@contextlib.contextmanager
def _user_code(doing: str, path: str, hint: str):
    """The user's code runs in this block: an exit from it is reported at its
    line (or else as `path`), with `hint` saying what to do instead."""
    try:
        yield
    except SystemExit as exit:
        raise UserExit(exit, doing, path, hint) from None


def main(argv: Sequence[str] | None = None) -> int:
    """The command, on `argv` (or, run as the program, on sys.argv under a
    fixed hash seed); the exit status."""
    options = _parser().parse_args(argv)
    if argv is None:  # the program, not a call from Python
        _run_under_fixed_hash_seed()
    try:
        restore_stdout = _stdout_to_stderr()
        try:
            status, text = _run(options)
        finally:
            restore_stdout()
        sys.stdout.write(text)
        sys.stdout.flush()
        if argv is None:  # the program: what atexit handlers print goes to stderr too
            _stdout_to_stderr()
        return status
    except KeyboardInterrupt:
        print("yota-src: interrupted", file=sys.stderr)
        return 130
    except BaseException as error:  # any failure of the user's input: one line, no traceback
        print(f"yota-src: error: {_one_line(error)}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per step of keeping generated
    gradients, each with examples, since `--help` is where people look first."""
    parser = argparse.ArgumentParser(
        prog="yota-src", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Reverse-mode automatic differentiation of NumPy code by source "
                    "transformation:\nwrites gradients as plain NumPy modules you can read, "
                    "review and ship.",
        epilog=_examples(
            "yota-src gen model.py:loss --args model.py:example -o grads/grad_loss.py",
            "yota-src gen          # every target in [tool.yota-src] of pyproject.toml",
            "yota-src check        # exit 1 naming each stale target (CI, pre-commit)",
            "yota-src diff         # what regenerating would change, as a unified diff",
            "yota-src trace model.py:loss --args model.py:example --dot | dot -Tsvg > loss.svg",
            "",
            "`yota-src COMMAND --help` describes each command."))
    parser.add_argument("--version", action="version", version=f"yota-src {__version__}",
                        help="print yota-src's version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     title="commands", help="one of:")
    gen = _command(
        commands, "gen", "write the gradient module of FILE.py:FUNC (or of every target)",
        "Write the gradient module of FILE.py:FUNC, specialised to the example arguments\n"
        "that --args gives, to OUT.py (or stdout). Without FILE.py:FUNC, write every\n"
        "target listed under [tool.yota-src.targets] in pyproject.toml, found by walking\n"
        "up from the working directory.",
        "yota-src gen model.py:loss --args model.py:example -o grads/grad_loss.py",
        "yota-src gen model.py:loss --args model.py:example --wrt W,b      # print it",
        "yota-src gen model.py:loss --args model.py:example -o grads/grad_loss.py --check",
        "yota-src gen                # every target in pyproject.toml",
        "yota-src gen --check        # the same as `yota-src check`")
    _target_arguments(gen, optional=True)
    gen.add_argument("-o", "--output", metavar="OUT.py",
                     help="write the module here, atomically (default: stdout)")
    _generation_options(gen)
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if OUT.py is not what gen would write now "
                          "(without FILE.py:FUNC: as `yota-src check`)")
    _command(
        commands, "check", "exit 1 naming each stale target in pyproject.toml",
        "Generate every target listed under [tool.yota-src.targets] in pyproject.toml\n"
        "and compare it with its committed file, writing nothing. Each stale or missing\n"
        "file is named on stderr with the `yota-src gen` command that fixes it, and the\n"
        "exit status is 1; when all are up to date it says so and exits 0. Bad\n"
        "configuration or input exits 2. Meant for CI and pre-commit.",
        "yota-src check",
        "yota-src check || yota-src diff     # in CI: fail, and show what changed")
    diff = _command(
        commands, "diff", "print what regenerating would change, as a unified diff",
        "Print a unified diff from the committed OUT.py to what `yota-src gen` would\n"
        "write now, for FILE.py:FUNC or, without it, for every target in pyproject.toml.\n"
        "Writes nothing. Exit status as `git diff --exit-code` and diff(1): 0 when\n"
        "nothing would change, 1 when something would, 2 on bad input.",
        "yota-src diff model.py:loss --args model.py:example -o grads/grad_loss.py",
        "yota-src diff                       # every target in pyproject.toml",
        "yota-src diff | less                # review before regenerating")
    _target_arguments(diff, optional=True)
    diff.add_argument("-o", "--output", metavar="OUT.py",
                      help="the committed module to compare with (needed with FILE.py:FUNC)")
    _generation_options(diff)
    trace = _command(
        commands, "trace", "print the tape of FILE.py:FUNC (--dot: as a Graphviz graph)",
        "Print the tape of FILE.py:FUNC run on the example arguments: one primitive\n"
        "operation per line, with its inputs, shape, dtype and source line. --dot prints\n"
        "it as a Graphviz graph instead; --grad shows the gradient's tape, the forward\n"
        "ops and then the reverse pass's.",
        "yota-src trace model.py:loss --args model.py:example",
        "yota-src trace model.py:loss --args model.py:example --grad",
        "yota-src trace model.py:loss --args model.py:example --dot --grad | dot -Tsvg > loss.svg")
    _target_arguments(trace, optional=False)
    trace.add_argument("--dot", action="store_true",
                       help="print a Graphviz DOT graph: arguments, ops and outputs as nodes, "
                            "data flow as edges, each op labelled with its source line")
    trace.add_argument("--grad", action="store_true",
                       help="the gradient's tape: the forward ops, then the reverse pass's "
                            "(drawn apart with --dot)")
    return parser


def _examples(*lines: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" if line else "" for line in lines)


def _command(commands, name: str, summary: str, description: str,
             *examples: str) -> argparse.ArgumentParser:
    return commands.add_parser(name, help=summary, description=description,
                               epilog=_examples(*examples),
                               formatter_class=argparse.RawDescriptionHelpFormatter)


def _target_arguments(command: argparse.ArgumentParser, optional: bool) -> None:
    """FILE.py:FUNC and --args, the two halves of a target."""
    command.add_argument("target", metavar="FILE.py:FUNC", nargs="?" if optional else None,
                         help="the function: a Python file and a function defined in it"
                              + (" (default: every target in pyproject.toml)" if optional
                                 else ""))
    command.add_argument("--args", required=not optional, metavar="FILE.py:NAME",
                         help="a zero-argument callable (or a tuple) in a Python file giving "
                              "the example arguments" + (" (needed with FILE.py:FUNC)"
                                                         if optional else ""))


def _generation_options(command: argparse.ArgumentParser) -> None:
    """What `gen` and `diff` take to choose the module, as a target's keys do."""
    command.add_argument("--wrt", metavar="A,B",
                         help="the arguments to differentiate, by name or position (default: "
                              "all with float values); the others get no gradient code")
    command.add_argument("--unroll", action="store_true",
                         help="write straight-line code: no loop of the function stays a loop "
                              "(by default, iterations that do the same work stay one)")
    command.add_argument("--has-aux", action="store_true",
                         help="FUNC returns (loss, aux): differentiate the loss, and return "
                              "((loss, aux), gradients...)")
    command.add_argument("--transform", choices=config.TRANSFORMS, default=None,
                         help="what to write: the gradient (grad, the default); the "
                              "vector-Jacobian product vjp_FUNC(..., dout); the Jacobian-vector "
                              "product jvp_FUNC(..., tangents...); the Hessian-vector product "
                              "hvp_FUNC(x, v)")


def _generated(fn, args: tuple, target: config.Target) -> api.GradFunction:
    """The module `gen` writes: the gradient, or the --transform asked for,
    its extra arguments (v, the tangents, dout) made like the example's."""
    loops = "unroll" if target.unroll else "roll"
    transform = target.transform
    wrt = None if target.wrt is None else list(target.wrt)
    if transform != "grad" and (wrt is not None or target.has_aux):
        raise UsageError(f"--transform {transform} takes neither --wrt nor --has-aux")
    if transform == "grad":
        return api.simplegrad(fn, *args, wrt=wrt, has_aux=target.has_aux, loops=loops)
    if transform == "vjp":
        return api.vjp(fn, *args, loops=loops)[1]
    if transform == "hvp":
        if len(args) != 1:
            raise UsageError(f"--transform hvp differentiates a function of one argument; "
                             f"--args gives {len(args)}")
        return api.derivative(fn, args[0], copy.deepcopy(args[0]), transform="hvp",
                              loops=loops)
    tangents = [copy.deepcopy(arg) for arg in args if cotangents.is_float(arg)]
    return api.derivative(fn, *args, *tangents, transform="jvp", loops=loops)


def _wrt_list(text: str | None) -> list | None:
    """`W,b` or `0,1` (or a mix): names stay names, digits are positions."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise UsageError(f"--wrt {text!r} is not a comma-separated list of argument names or "
                         "positions (e.g. W,b or 0,1)")
    return [int(item) if item.isdigit() else item for item in items]


HASH_SEED = "0"


def _run_under_fixed_hash_seed() -> None:
    """Start the command again under PYTHONHASHSEED=0 unless it runs so already.

    Generated code follows the order in which the function iterated sets (and
    anything else ordered by string hashes), and hash randomization changes
    that order from run to run; two runs must write the same bytes. The new
    process gets this one's sys.path, so it imports the same yota-src and the
    same user modules whatever the working directory holds.
    """
    if not sys.flags.hash_randomization or not sys.executable:
        return
    if os.environ.get("PYTHONHASHSEED") == HASH_SEED:
        return  # the interpreter ignores the environment (-E, -I): nothing to gain
    command = _own_command(sys.argv[1:])
    environment = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            os.execve(sys.executable, command, environment)
        sys.exit(subprocess.call(command, env=environment))
    except OSError:  # no interpreter to start: generate here, under this seed
        return


def _own_command(arguments: list[str]) -> list[str]:
    """This interpreter, with this process's flags and sys.path (the same
    yota-src, the same user modules), running the command on `arguments`."""
    flags = ["-O"] * sys.flags.optimize + [f"-W{option}" for option in sys.warnoptions] + [
        f"-X{name}" if value is True else f"-X{name}={value}"
        for name, value in sys._xoptions.items()]
    path = [entry for entry in sys.path if isinstance(entry, str)]
    code = f"import sys; sys.path[:] = {path!r}; from yota_src.cli import main; " \
           "sys.exit(main())"
    return [sys.executable, *flags, "-c", code, *arguments]


def _run(options) -> tuple[int, str]:
    """(exit status, what to print on stdout)."""
    if options.command == "trace":
        return _trace(options)
    targets = _targets(options)
    for target in targets:  # before any work: never replace the user's source
        if target.out:
            _refuse_overwriting_inputs(target.out, target.function, target.args)
    if options.command == "check" or getattr(options, "check", False):
        return _check(targets)
    if options.command == "diff":
        return _diff(targets)
    sources = _sources(targets)  # all, before writing any
    if len(targets) == 1 and not targets[0].out:
        return 0, sources[0]
    for target, source in zip(targets, sources):
        _write(target.out, source)
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


def _source(target: config.Target) -> str:
    """The module `yota-src gen` writes for `target` now."""
    fn, args = _load_inputs(target.function, target.args)
    with _user_code(f"differentiating {target.function}", target.function.rpartition(":")[0],
                    "the function must return its value, not exit"):
        gradient = _generated(fn, args, target)
    if target.out:
        _refuse_overwriting_what_was_read(target.out, fn, gradient._dependencies)
    loader.require_saveable(gradient._function)  # the module is meant to be saved
    return gradient.source


def _write(path: str, text: str) -> None:
    """Write the module, making its directory first (`-o grads/grad_loss.py`
    in a new project)."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise UsageError(f"{path}: cannot make its directory {directory}: "
                         f"{error.strerror or error}") from None
    loader.write_atomic(path, text)


def _sources(targets: list[config.Target]) -> list[str]:
    """What gen writes for each target. Of several, each is generated in a
    process of its own, as its own command would be: a module one target's
    files import (a helpers.py beside it) or a rule one registers must not
    stand in for another's, nor the bytes depend on what ran before."""
    if len(targets) == 1:
        return [_source(targets[0])]
    return [_source_apart(target) for target in targets]


def _source_apart(target: config.Target) -> str:
    """`_source(target)`, computed by `yota-src gen` in a new process; what
    the user's code prints there goes to stderr, as here."""
    environment = {**os.environ, "PYTHONHASHSEED": HASH_SEED, "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run(_own_command(["gen", *target.arguments()]), capture_output=True,
                            encoding="utf-8", errors="replace", env=environment)
    lines = result.stderr.splitlines(keepends=True)
    failed = result.returncode != 0 and lines and lines[-1].startswith("yota-src: ")
    sys.stderr.write("".join(lines[:-1] if failed else lines))
    if result.returncode != 0:
        message = lines[-1].removeprefix("yota-src: ").removeprefix("error: ").strip() \
            if failed else f"exit status {result.returncode}"
        raise UsageError(f"{target.function} (for {target.out}): {message}")
    return result.stdout


def _committed(path: str) -> str | None:
    """The file's text as it is now (None: there is none), line endings as
    they are (a CRLF file is not what gen writes). Bytes that are not UTF-8
    make it differ, not fail: it is stale, whatever it holds."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as file:
            return file.read()
    except FileNotFoundError:
        return None


def _check(targets: list[config.Target]) -> tuple[int, str]:
    """Exit 1 naming each target whose file is not what gen would write now,
    with the command that fixes it; writes nothing."""
    stale = 0
    for target, source in zip(targets, _sources(targets)):
        current = _committed(target.out)
        if current == source:
            continue
        stale += 1
        state = "is missing: generate" if current is None else "is stale: regenerate"
        print(f"yota-src: {target.out} ({target.function}) {state} it with "
              f"`{target.command()}`", file=sys.stderr)
    if stale:
        return 1, ""
    return 0, f"{len(targets)} target{'' if len(targets) == 1 else 's'} up to date\n"


def _diff(targets: list[config.Target]) -> tuple[int, str]:
    """A unified diff per target from its committed file to what gen would
    write now; exit 1 when there is one, as `git diff --exit-code`."""
    text = ""
    for target, source in zip(targets, _sources(targets)):
        text += unified_diff(target.out, _committed(target.out), source)
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
    fn, args = _load_inputs(options.target, options.args)
    with _user_code(f"tracing {options.target}", options.target.rpartition(":")[0],
                    "the function must return its value, not exit"):
        tape = api.simplegrad(fn, *args).gradient_tape if options.grad else api.trace(fn, *args)[1]
    return 0, tape.to_dot() if options.dot else f"{tape}\n"


def _stdout_to_stderr():
    """Send what is written to stdout to stderr, until the function this
    returns is called: stdout carries only the module (or the tape), and what
    the user's code prints while yota-src runs it (on import, in the --args
    callable) shows on stderr, where someone debugging it looks. Both Python's
    sys.stdout and the file descriptor under it (C code, subprocesses) move."""
    saved_stream = sys.stdout
    saved_fd = None
    if sys.stdout is not None and sys.stderr is not None:
        sys.stdout.flush()
        try:
            stdout_fd, stderr_fd = sys.stdout.fileno(), sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):  # no file under it (captured)
            pass
        else:
            saved_fd = os.dup(stdout_fd)
            os.dup2(stderr_fd, stdout_fd)
        sys.stdout = sys.stderr

    def restore() -> None:
        if sys.stderr is not None:
            sys.stderr.flush()
        if saved_fd is not None:
            os.dup2(saved_fd, stdout_fd)
            os.close(saved_fd)
        sys.stdout = saved_stream
    return restore


def _load_inputs(target: str, example: str) -> tuple:
    """The function and its example arguments, from the user's files."""
    importing = "put the script's own work under `if __name__ == \"__main__\":`"
    target_path, example_path = target.rpartition(":")[0], example.rpartition(":")[0]
    with _user_code(f"importing {target_path}", target_path, importing):
        fn = _load_object(target)
    with _user_code(f"importing {example_path}", example_path, importing):
        args = _load_object(example)
    if callable(args):
        with _user_code(f"calling {example}", example_path,
                        "the --args callable must return the example arguments, not exit"):
            args = args()
    if not isinstance(args, tuple):
        raise UsageError(f"{example} must be a tuple of arguments or return one, "
                         f"not {type(args).__name__}")
    return fn, args


def _refuse_overwriting_inputs(output: str, *specs: str) -> None:
    """`-o` naming the file being differentiated (or the --args file) would
    replace the user's source with generated code: refuse before any work."""
    for spec in specs:
        path = spec.rpartition(":")[0]
        if path and _same_file(output, path):
            raise UsageError(f"-o {output} names the input file {path}: "
                             "choose another output file")


def _refuse_overwriting_what_was_read(output: str, fn, dependencies) -> None:
    """`-o` naming a file the gradient was made from (the function's source, a
    module whose globals or attributes the trace read, one a name read was
    imported from, a helper's source) would replace what the gradient froze
    with the gradient: the next run would import generated code. Refuse."""
    for path, what in _files_read(fn, dependencies):
        if _same_file(output, path):
            raise UsageError(f"-o {output} names {path}, which the gradient was made from "
                             f"({what}): choose another output file")


def _files_read(fn, dependencies):
    """(file, what was read from it) for each file behind the gradient."""
    source = _defined_in(fn)
    if source:
        yield source, f"the source of {getattr(fn, '__qualname__', fn)}"
    imports = _Imports()
    for dependency in dependencies:
        if dependency.origin is not None:
            module_file, name = dependency.origin
            yield module_file, dependency.what
            for imported in imports.origins(module_file, name, set()):
                yield imported, f"{dependency.what}, imported from there"
        try:
            value = dependency.read()
        except Exception:  # gone since: it was read, but names no file now
            continue
        defined = _defined_in(value)
        if defined:
            yield defined, dependency.what


def _defined_in(value) -> str | None:
    """The file a module, function, method or class comes from, if any."""
    if isinstance(value, types.ModuleType):
        file = getattr(value, "__file__", None)
        return file if isinstance(file, str) else None
    value = getattr(value, "__func__", value)  # a bound method
    code = getattr(value, "__code__", None)
    if isinstance(code, types.CodeType):
        return code.co_filename
    if isinstance(value, type):
        try:
            return inspect.getfile(value)
        except (TypeError, OSError):  # a builtin class
            return None
    return None


class _Imports:
    """Where a module's names were imported from, read off its `from`
    statements; the imported modules and parsed files are looked up once."""

    def __init__(self):
        self.modules = {}  # a module's __file__ -> the module (files come from __file__)
        for module in [*list(sys.modules.values()), *_modules.values()]:
            file = _defined_in(module)
            if file:
                self.modules[file] = module
        self.statements: dict[str, list] = {}

    def origins(self, filename: str, name: str, seen: set) -> list[str]:
        """The files whose `name` the module at `filename` imported as its
        own, by `from M import name [as alias]` or `from M import *`,
        followed back through re-exports to where it is defined."""
        module = self.modules.get(filename)
        if module is None or (filename, name) in seen:
            return []
        seen.add((filename, name))
        found = []
        for node in self.from_imports(filename):
            for alias in node.names:
                if alias.name != "*" and (alias.asname or alias.name) != name:
                    continue
                original = name if alias.name == "*" else alias.name
                try:
                    source = sys.modules.get(importlib.util.resolve_name(
                        "." * node.level + (node.module or ""), module.__package__))
                except (ImportError, ValueError):  # a relative import outside a package
                    continue
                source_file = _defined_in(source)
                if source_file and hasattr(source, original):
                    found += [source_file, *self.origins(source_file, original, seen)]
        return found

    def from_imports(self, filename: str) -> list:
        if filename not in self.statements:
            try:
                with tokenize.open(filename) as file:
                    tree = ast.parse(file.read(), filename)
            except (OSError, SyntaxError, ValueError):
                tree = ast.Module(body=[], type_ignores=[])
            self.statements[filename] = [node for node in ast.walk(tree)
                                         if isinstance(node, ast.ImportFrom)]
        return self.statements[filename]


def _same_file(first: str, second: str) -> bool:
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)  # hard links
    except OSError:
        return False


def _load_object(spec: str):
    """`path/to/file.py:NAME` -> the object, importing the file as a module."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:NAME, got {spec!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module = _import_file(path)
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    return obj


_modules: dict[str, types.ModuleType] = {}


def _import_file(path: str) -> types.ModuleType:
    """Run the user's file as a module named after it.

    Its directory goes to the end of sys.path (its sibling modules import,
    but never in place of the standard library or installed packages), and
    it is registered in sys.modules under its name only where that name is
    free: a user's operator.py must not replace the `operator` that yota-src
    and NumPy import, nor pass for it. Otherwise it is named `<operator.py>`,
    which no import reaches: generated code that would need to import it is
    refused by codegen with a clear message.
    """
    path = os.path.abspath(path)
    if path in _modules:
        return _modules[path]
    directory, filename = os.path.split(path)
    module_name = os.path.splitext(filename)[0]
    register = _name_is_free(module_name, path)
    if not register:  # a name that is not importable, so nothing mistakes it for the other
        module_name = f"<{filename}>"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python file")
    if directory not in sys.path:
        sys.path.append(directory)
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if register:
            del sys.modules[module_name]
        raise
    _modules[path] = module
    return module


def _name_is_free(module_name: str, path: str) -> bool:
    """Whether `import module_name` could only ever mean the file at `path`."""
    if not module_name.isidentifier() or module_name in sys.modules:
        return False
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return False
    return found is None or (found.origin is not None and _same_file(found.origin, path))


def _one_line(error: BaseException) -> str:
    """The error as one line, led by the user's file:line where there is one."""
    if isinstance(error, (UsageError, config.ConfigError)):
        return _first_line(error)
    if isinstance(error, UserExit):
        where = _user_location(error.exit) or error.path
        return f"{where}: {error}: {error.hint}"
    if isinstance(error, YotaError):
        first = _first_line(error)
        return f"{first} ({error.hint})" if error.hint else first
    if isinstance(error, SyntaxError):
        where = f"{error.filename}:{error.lineno}: " if error.filename else ""
        return f"{where}syntax error: {error.msg}"
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    where = _user_location(error)
    return f"{where + ': ' if where else ''}{type(error).__name__}: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _user_location(error: BaseException) -> str | None:
    """`file.py:12`: where the unroller was in the user's code, or else the
    innermost frame of the traceback that is in a file of the user's."""
    location = getattr(error, "yota_location", None)
    if location is not None:
        return f"{location.filename}:{location.lineno}"
    frames = [(frame.f_code.co_filename, lineno)
              for frame, lineno in traceback.walk_tb(error.__traceback__)]
    for filename, lineno in reversed(frames):
        if _is_user_file(filename):
            return f"{filename}:{lineno}"
    return None


_LIBRARY_DIRS = tuple(
    os.path.join(os.path.realpath(directory), "")
    for directory in {*(sysconfig.get_paths()[key] for key in
                        ("stdlib", "platstdlib", "purelib", "platlib")),
                      os.path.dirname(os.path.abspath(__file__))})


def _is_user_file(filename: str) -> bool:
    """Not yota-src, the standard library or an installed package, nor code
    without a file (`<frozen ...>`, generated modules)."""
    if filename.startswith("<"):
        return False
    return not os.path.join(os.path.realpath(filename), "").startswith(_LIBRARY_DIRS)


if __name__ == "__main__":
    sys.exit(main())
