"""The command line stage: `yota-src gen`, `check`, `diff` and `trace`.

Bad input ends with one line on stderr and a non-zero exit, never a
traceback, and never touches an existing output file. The user's code runs
here (the files are imported, the --args callable called, the function
unrolled), so whatever it does there, exiting included, is bad input too.

Its modules, each importing only those above it in this list:

- config.py: the targets listed in pyproject.toml;
- failures.py: what goes wrong, said in one line;
- user_files.py: the user's files imported, their code run;
- process.py: the fixed hash seed, and stdout kept for the output;
- made_from.py: the files a gradient was made from;
- output_files.py: written atomically, never over an input;
- parser.py: the commands and their options, with examples;
- generation.py: the module `gen` writes for a target;
- commands.py: `gen`, `check`, `diff` and `trace` themselves.

`main` is the program (`yota-src`, `python -m yota_src.cli`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from yota_src.cli import commands
from yota_src.cli.failures import one_line
from yota_src.cli.parser import argument_parser
from yota_src.cli.process import run_under_fixed_hash_seed, stdout_to_stderr


def main(argv: Sequence[str] | None = None) -> int:
    """The command, on `argv` (or, run as the program, on sys.argv under a
    fixed hash seed); the exit status."""
    options = argument_parser().parse_args(argv)
    if argv is None:  # the program, not a call from Python
        run_under_fixed_hash_seed()
    try:
        restore_stdout = stdout_to_stderr()
        try:
            status, text = commands.run(options)
        finally:
            restore_stdout()
        sys.stdout.write(text)
        sys.stdout.flush()
        if argv is None:  # the program: what atexit handlers print goes to stderr too
            stdout_to_stderr()
        return status
    except KeyboardInterrupt:
        print("yota-src: interrupted", file=sys.stderr)
        return 130
    except BaseException as error:  # any failure of the user's input: one line, no traceback
        print(f"yota-src: error: {one_line(error)}", file=sys.stderr)
        return 2


__all__ = ["main"]
