"""The process a command runs in: under a fixed hash seed, and with stdout
kept for what the command prints.

Two runs must write the same bytes, so the program starts itself again
under PYTHONHASHSEED=0 (`own_command` is that command, also used to
generate each of several targets in a process of its own); and what the
user's code prints while yota-src runs it goes to stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

HASH_SEED = "0"


def run_under_fixed_hash_seed() -> None:
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
    command = own_command(sys.argv[1:])
    environment = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            os.execve(sys.executable, command, environment)
        sys.exit(subprocess.call(command, env=environment))
    except OSError:  # no interpreter to start: generate here, under this seed
        return


def own_command(arguments: list[str]) -> list[str]:
    """This interpreter, with this process's flags and sys.path (the same
    yota-src, the same user modules), running the command on `arguments`."""
    flags = ["-O"] * sys.flags.optimize + [f"-W{option}" for option in sys.warnoptions] + [
        f"-X{name}" if value is True else f"-X{name}={value}"
        for name, value in sys._xoptions.items()]
    path = [entry for entry in sys.path if isinstance(entry, str)]
    code = f"import sys; sys.path[:] = {path!r}; from yota_src.cli import main; " \
           "sys.exit(main())"
    return [sys.executable, *flags, "-c", code, *arguments]


def stdout_to_stderr() -> Callable[[], None]:
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
