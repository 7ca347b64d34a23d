"""The command line's grammar (argparse): the commands, their arguments and
options, and the examples each `--help` shows.
"""

from __future__ import annotations

import argparse

from yota_src.cli import config
from yota_src.version import __version__


def argument_parser() -> argparse.ArgumentParser:
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
