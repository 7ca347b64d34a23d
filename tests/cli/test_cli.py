"""`yota-src gen` and `yota-src trace`, run as a user runs them."""

import importlib.metadata
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import pytest
from conftest import EXAMPLES

import yota_src


def run(*args, cwd=None, env=None):
    """`python -m yota_src ARGS`; `env` adds to the environment (None removes).
    Under PYTHONHASHSEED=0 unless `env` says otherwise, so the command does
    not start itself again (half the time; the tests of that set the seed)."""
    environment = {name: value for name, value in
                   {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}.items()
                   if value is not None}
    return subprocess.run([sys.executable, "-m", "yota_src", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env=environment)


def affine(*extra):
    return run("gen", f"{EXAMPLES}/affine.py:loss", "--args", f"{EXAMPLES}/affine.py:example",
               *extra)


def test_gen_writes_an_importable_module(tmp_path):
    out = tmp_path / "grad_loss.py"
    result = affine("-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "def grad_loss(W, b, x):" in text
    compile(text, str(out), "exec")


def test_gen_without_output_prints_the_module():
    result = affine()
    assert result.returncode == 0 and "def grad_loss(W, b, x):" in result.stdout


@pytest.mark.slow
def test_check_fresh_and_stale(tmp_path):
    out = tmp_path / "grad_loss.py"
    affine("-o", str(out))
    assert affine("-o", str(out), "--check").returncode == 0
    out.write_text(out.read_text().replace("x.sum(axis=1)", "x.sum(axis=0)"))
    stale = affine("-o", str(out), "--check")
    assert stale.returncode == 1 and "stale" in stale.stderr


def test_check_detects_an_edit_of_the_function(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(textwrap.dedent("""
        import numpy as np
        def loss(x):
            return np.sum(x ** 2)
        def example():
            return (np.ones(3),)
    """))
    out = tmp_path / "grad_loss.py"
    command = ("gen", f"{source}:loss", "--args", f"{source}:example", "-o", str(out))
    assert run(*command).returncode == 0
    source.write_text(source.read_text().replace("x ** 2", "x ** 3"))
    result = run(*command, "--check")
    assert result.returncode == 1


def test_trace_prints_the_tape():
    result = run("trace", f"{EXAMPLES}/affine.py:loss", "--args", f"{EXAMPLES}/affine.py:example")
    assert result.returncode == 0
    assert "input W  :: float64 (128, 784)" in result.stdout


BAD = {
    "missing_file": ("gen", "nowhere.py:loss", "--args", "nowhere.py:example"),
    "missing_function": ("gen", f"{EXAMPLES}/affine.py:nothing", "--args",
                         f"{EXAMPLES}/affine.py:example"),
}


def write_bad_modules(tmp_path):
    syntax = tmp_path / "broken.py"
    syntax.write_text("def loss(x):\n    return x +\n")
    norule = tmp_path / "norule.py"
    norule.write_text(textwrap.dedent("""
        import numpy as np
        def loss(x):
            return np.sum(np.i0(x))
        def example():
            return (np.ones(3),)
    """))
    return {
        "syntax_error": ("gen", f"{syntax}:loss", "--args", f"{syntax}:loss"),
        "no_rule": ("gen", f"{norule}:loss", "--args", f"{norule}:example"),
        "not_a_function": ("gen", f"{norule}:np", "--args", f"{norule}:example"),
    }


@pytest.mark.parametrize("case", ["missing_file", "missing_function", "syntax_error", "no_rule",
                                  "not_a_function"])
def test_bad_input_is_one_clear_line_and_leaves_output_untouched(case, tmp_path):
    cases = {**BAD, **write_bad_modules(tmp_path)}
    out = tmp_path / "grad_loss.py"
    out.write_text("# precious\n")
    result = run(*cases[case], "-o", str(out))
    assert result.returncode not in (0, 1)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yota-src: error: ")
    assert out.read_text() == "# precious\n"
    expected = {"missing_file": "no such file", "missing_function": "has no 'nothing'",
                "syntax_error": "syntax error", "no_rule": "no gradient rule for np.i0",
                "not_a_function": "norule.py:np is not a function (it is module"}[case]
    assert expected in lines[0]
    if case == "no_rule":
        assert "norule.py:4" in lines[0]


def write(path, text):
    path.write_text(textwrap.dedent(text))
    return path


SQUARES = """
    import numpy as np
    def loss(x):
        return np.sum(x * x)
    def example():
        return (np.ones(3),)
"""


def assert_one_error_line(result, *fragments):
    assert result.returncode not in (0, 1), result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yota-src: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


RAISING_ARGS = {
    "ZeroDivisionError in a helper": ("def helper():\n    return 1 / 0\n"
                                      "def example():\n    return (helper(),)\n", 6),
    "custom exception": ("class Oops(Exception):\n    pass\n"
                         "def example():\n    raise Oops('no example')\n", 8),
    "RuntimeError": ("def example():\n    raise RuntimeError('no example')\n", 6),
}


@pytest.mark.parametrize("case", sorted(RAISING_ARGS))
def test_args_callable_that_raises_is_one_line_naming_the_users_line(case, tmp_path):
    text, line = RAISING_ARGS[case]
    model = tmp_path / "model.py"
    model.write_text("import numpy as np\ndef loss(x):\n    return np.sum(x)\n\n" + text)
    out = write(tmp_path / "grad_loss.py", "# precious\n")
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    assert_one_error_line(result, f"model.py:{line}:")
    assert out.read_text() == "# precious\n"


def test_file_that_raises_on_import_is_one_line_naming_its_line(tmp_path):
    model = write(tmp_path / "model.py", """
        import numpy as np
        SCALE = {}["missing"]
    """)
    result = run("gen", f"{model}:loss", "--args", f"{model}:example")
    assert_one_error_line(result, "model.py:3:", "KeyError")


def test_error_raised_while_unrolling_names_the_users_line(tmp_path):
    model = write(tmp_path / "model.py", """
        import numpy as np
        def loss(x):
            raise RuntimeError("not differentiable today")
        def example():
            return (np.ones(3),)
    """)
    for command in ("gen", "trace"):
        result = run(command, f"{model}:loss", "--args", f"{model}:example")
        assert_one_error_line(result, "model.py:4:", "not differentiable today")


@pytest.mark.parametrize("which", ["function file", "args file"])
def test_output_naming_an_input_file_is_refused_and_leaves_it_untouched(which, tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    examples = write(tmp_path / "examples.py", "import numpy as np\nARGS = (np.ones(3),)\n")
    before = {path: path.read_text() for path in (model, examples)}
    output = model if which == "function file" else examples
    result = run("gen", f"{model}:loss", "--args", f"{examples}:ARGS", "-o", str(output))
    assert_one_error_line(result, "input file")
    assert {path: path.read_text() for path in before} == before


def test_symlinked_output_replaces_its_target_and_stays_a_link(tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    target = write(tmp_path / "generated.py", "# old\n")
    link = tmp_path / "grad_loss.py"
    link.symlink_to(target.name)
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and "def grad_loss(x):" in target.read_text()


def test_new_output_file_gets_the_mode_a_plain_write_gives(tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    out = tmp_path / "grad_loss.py"
    umask = os.umask(0o027)
    try:
        result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    finally:
        os.umask(umask)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_existing_output_file_keeps_its_mode(tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    out = write(tmp_path / "grad_loss.py", "# old\n")
    out.chmod(0o755)
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o755


@pytest.mark.parametrize("where", ["parent is a file", "directory"])
def test_write_error_names_the_users_path_not_a_temporary_file(where, tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    (tmp_path / "out").mkdir()
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "grad_loss.py" if where == "parent is a file" \
        else tmp_path / "out"
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    line = assert_one_error_line(result, str(out))
    assert ".tmp" not in line
    assert [path.name for path in tmp_path.rglob("*.tmp")] == []


@pytest.mark.parametrize("name", ["operator", "math", "numpy", "functools"])
def test_user_module_named_like_a_library_module_is_differentiated(name, tmp_path):
    model = write(tmp_path / f"{name}.py", SQUARES)
    result = run("gen", f"{model}:loss", "--args", f"{model}:example")
    assert result.returncode == 0, result.stderr
    assert "def grad_loss(x):" in result.stdout


@pytest.mark.slow
def test_gen_is_byte_identical_under_any_hash_seed_and_check_passes(tmp_path):
    model = write(tmp_path / "model.py", """
        import numpy as np
        def loss(x, names):
            return np.sum(x) * len(names)
        def example():
            return (np.ones(3), frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}))
    """)
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"grad_{seed}.py"
        command = ("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
        assert run(*command, env={"PYTHONHASHSEED": seed}).returncode == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert run(*command, "--check", env={"PYTHONHASHSEED": "3"}).returncode == 0


HASH_ORDERED = {  # functions whose unrolled code follows the iteration order of a set of str
    "a loop over a set of names": """
        import numpy as np
        def loss(x, names):
            total = 0.0
            for name in names:
                print(name)
                total = total * 2.0 + np.sum(x) * len(name)
            return total
        def example():
            return (np.ones(3), {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"})
    """,
    "a dict from a set, and hash buckets": """
        import numpy as np
        NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"}
        def loss(x):
            scale = {name: i + 1.0 for i, name in enumerate(NAMES)}
            bucket = hash("alpha") % 3
            return np.sum(x[bucket:]) * scale["alpha"] + np.sum(x) * scale["zeta"]
        def example():
            return (np.ones(3),)
    """,
}


@pytest.mark.parametrize("case", sorted(HASH_ORDERED))
@pytest.mark.slow
def test_gen_of_code_iterating_a_set_of_strings_is_the_same_under_any_hash_seed(case, tmp_path):
    model = write(tmp_path / "model.py", HASH_ORDERED[case])
    command = ("gen", f"{model}:loss", "--args", f"{model}:example")
    outputs = {seed: run(*command, env={"PYTHONHASHSEED": seed})
               for seed in ("0", "1", "2", "3", "4", None)}
    assert all(result.returncode == 0 for result in outputs.values())
    assert len({result.stdout for result in outputs.values()}) == 1
    out = write(tmp_path / "grad_loss.py", outputs["1"].stdout)
    check = run(*command, "-o", str(out), "--check", env={"PYTHONHASHSEED": "5"})
    assert check.returncode == 0, check.stderr


def test_the_restarted_command_imports_the_same_yota_src_whatever_the_directory_holds(tmp_path):
    script = shutil.which("yota-src", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("yota-src is not installed beside this interpreter")
    decoy = tmp_path / "yota_src"
    decoy.mkdir()
    (decoy / "__init__.py").write_text("raise ImportError('the decoy was imported')\n")
    (decoy / "cli.py").write_text("")
    write(tmp_path / "model.py", SQUARES)
    result = subprocess.run([script, "gen", "model.py:loss", "--args", "model.py:example"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "PYTHONHASHSEED": "7"})
    assert result.returncode == 0, result.stderr
    assert "def grad_loss(x):" in result.stdout


def test_gen_refuses_a_module_that_compares_an_argument_with_a_live_object(tmp_path):
    model = write(tmp_path / "model.py", """
        import numpy as np
        def loss(x, activation):
            return np.sum(activation(x))
        def example():
            return (np.ones(3), lambda v: v * 2.0)
    """)
    out = write(tmp_path / "grad_loss.py", "# precious\n")
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    assert_one_error_line(result, "model.py:6:", "cannot be saved")
    assert out.read_text() == "# precious\n"


EXITS = {  # text of model.py, the line that exits, what yota-src was doing
    "sys.exit(0) on import": ("""
        import sys
        import numpy as np
        sys.exit(0)
        def loss(x):
            return np.sum(x)
        def example():
            return (np.ones(3),)
    """, 4, "importing"),
    "exit() in the args callable": ("""
        import numpy as np
        def loss(x):
            return np.sum(x)
        def example():
            exit()
    """, 6, "calling"),
    "raise SystemExit in a helper of the args callable": ("""
        import numpy as np
        def loss(x):
            return np.sum(x)
        def parse_options():
            raise SystemExit("usage: train.py --size N")
        def example():
            return (np.ones(parse_options()),)
    """, 6, "calling"),
    "sys.exit(0) in the function": ("""
        import sys
        import numpy as np
        def loss(x):
            if x.shape[0] == 3:
                sys.exit(0)
            return np.sum(x)
        def example():
            return (np.ones(3),)
    """, 6, "differentiating"),
    "sys.exit(1) in a helper the function calls": ("""
        import sys
        import numpy as np
        def check(x):
            sys.exit(1)
        def loss(x):
            check(x)
            return np.sum(x)
        def example():
            return (np.ones(3),)
    """, 5, "differentiating"),
}


@pytest.mark.parametrize("case", sorted(EXITS))
def test_user_code_that_exits_fails_check_at_its_line(case, tmp_path):
    text, line, doing = EXITS[case]
    model = write(tmp_path / "model.py", text)
    out = write(tmp_path / "grad_loss.py", "# precious\n")
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out), "--check")
    assert_one_error_line(result, f"model.py:{line}:", "SystemExit", doing)
    assert out.read_text() == "# precious\n"


@pytest.mark.parametrize("command", ["gen", "trace"])
def test_function_that_exits_is_an_error_at_its_line(command, tmp_path):
    model = write(tmp_path / "model.py", EXITS["sys.exit(0) in the function"][0])
    result = run(command, f"{model}:loss", "--args", f"{model}:example")
    assert_one_error_line(result, "model.py:6:", "SystemExit(0)", "must return")
    assert result.stdout == ""


def test_base_exception_raised_on_import_is_one_line_at_its_line(tmp_path):
    model = write(tmp_path / "model.py", """
        import numpy as np
        class Stop(BaseException):
            pass
        raise Stop("not today")
    """)
    result = run("gen", f"{model}:loss", "--args", f"{model}:example")
    assert_one_error_line(result, "model.py:5:", "Stop: not today")


NOISY = {
    "print on import": ("print('loading model')", "", "loading model"),
    "print in the args callable": ("", "print('making examples')", "making examples"),
    "sys.stdout.write in the args callable": ("", "sys.stdout.write('step 1\\n')", "step 1"),
    "a subprocess writing to the stdout descriptor": (
        "subprocess.run(['{python}', '-c', 'print(42)'])", "", "42"),
    "an atexit handler that prints": ("atexit.register(print, 'goodbye')", "", "goodbye"),
}


def noisy_model(directory, on_import, in_args):
    directory.mkdir()
    return write(directory / "model.py", f"""
        import atexit, subprocess, sys
        import numpy as np
        {on_import}
        def loss(x):
            return np.sum(x * x)
        def example():
            {in_args}
            return (np.ones(3),)
    """)


@pytest.mark.parametrize("case, command", [(case, "gen") for case in sorted(NOISY)]
                         + [("print on import", "trace")])
@pytest.mark.slow
def test_output_of_user_code_goes_to_stderr_and_stdout_is_only_the_result(case, command,
                                                                          tmp_path):
    on_import, in_args, printed = NOISY[case]
    model = noisy_model(tmp_path / "noisy", on_import.format(python=sys.executable),
                        in_args or "pass")
    quiet = noisy_model(tmp_path / "quiet", "pass", "pass")
    result = run(command, f"{model}:loss", "--args", f"{model}:example")
    expected = run(command, f"{quiet}:loss", "--args", f"{quiet}:example")
    assert result.returncode == 0, result.stderr
    assert printed in result.stderr
    assert result.stdout == expected.stdout


@pytest.mark.parametrize("program", ["python -m yota_src", "python -m yota_src.cli", "yota-src"])
def test_version_is_printed_by_every_way_of_running_the_command(program):
    if program == "yota-src":
        script = shutil.which("yota-src", path=os.path.dirname(sys.executable))
        if script is None:
            pytest.skip("yota-src is not installed beside this interpreter")
        command = [script]
    else:
        command = [sys.executable, "-m", program.split()[-1]]
    result = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"yota-src {yota_src.__version__}\n"


def test_version_is_the_installed_distributions():
    try:
        installed = importlib.metadata.version("yota-src")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("yota-src is not installed")
    assert yota_src.__version__ == installed


@pytest.mark.slow
def test_python_m_yota_src_generates_like_the_yota_src_command(tmp_path):
    script = shutil.which("yota-src", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("yota-src is not installed beside this interpreter")
    model = write(tmp_path / "model.py", SQUARES)
    command = ("gen", f"{model}:loss", "--args", f"{model}:example")
    installed = subprocess.run([script, *command], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    assert run(*command).stdout == installed.stdout


CONSTS = "K = 2.0\n"
READ_MODULES = {  # case: (files beside model.py, model.py, the file -o names)
    "import consts": ({"consts.py": CONSTS}, """
        import numpy as np
        import consts
        def loss(x):
            return np.sum(x) * consts.K
    """, "consts.py"),
    "from consts import K": ({"consts.py": CONSTS}, """
        import numpy as np
        from consts import K
        def loss(x):
            return np.sum(x) * K
    """, "consts.py"),
    "from consts import K as SCALE": ({"consts.py": CONSTS}, """
        import numpy as np
        from consts import K as SCALE
        def loss(x):
            return np.sum(x) * SCALE
    """, "consts.py"),
    "from consts import *": ({"consts.py": CONSTS}, """
        import numpy as np
        from consts import *
        def loss(x):
            return np.sum(x) * K
    """, "consts.py"),
    "K re-exported by another module": (
        {"consts.py": CONSTS, "settings.py": "from consts import K\n"}, """
        import numpy as np
        from settings import K
        def loss(x):
            return np.sum(x) * K
    """, "consts.py"),
    "import consts in the function": ({"consts.py": CONSTS}, """
        import numpy as np
        def loss(x):
            from consts import K
            return np.sum(x) * K
    """, "consts.py"),
    "a helper the function calls": ({"helpers.py": "def scale(v):\n    return v * 2.0\n"}, """
        import numpy as np
        from helpers import scale
        def loss(x):
            return np.sum(scale(x))
    """, "helpers.py"),
    "the module the function was imported from": (
        {"lib.py": "import numpy as np\ndef loss(x):\n    return np.sum(x * x)\n"}, """
        from lib import loss
    """, "lib.py"),
}


@pytest.mark.parametrize("case", sorted(READ_MODULES))
def test_output_naming_a_module_the_gradient_was_made_from_is_refused(case, tmp_path):
    files, text, output = READ_MODULES[case]
    for name, content in files.items():
        write(tmp_path / name, content)
    model = write(tmp_path / "model.py", text)
    write(tmp_path / "examples.py", "import numpy as np\nARGS = (np.ones(3),)\n")
    before = {path: path.read_text() for path in tmp_path.iterdir()}
    result = run("gen", f"{model}:loss", "--args", f"{tmp_path}/examples.py:ARGS",
                 "-o", str(tmp_path / output))
    assert_one_error_line(result, f"-o {tmp_path / output}", "made from")
    assert {path: path.read_text() for path in tmp_path.iterdir()} == before


@pytest.mark.slow
def test_output_naming_a_module_imported_but_not_read_is_written(tmp_path):
    """A file may import its own generated gradient: regenerating it is allowed."""
    model = write(tmp_path / "model.py", """
        import numpy as np
        try:
            from grad_loss import grad_loss
        except ImportError:
            grad_loss = None
        def loss(x):
            return np.sum(x * x)
        def example():
            return (np.ones(3),)
    """)
    out = tmp_path / "grad_loss.py"
    command = ("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    for _ in range(2):  # the second run imports the first one's output
        result = run(*command)
        assert result.returncode == 0, result.stderr
    assert run(*command, "--check").returncode == 0


@pytest.mark.parametrize("wrt", ["W,b", "0,1", "W,1"])
@pytest.mark.slow
def test_wrt_limits_the_gradient_code(wrt, tmp_path):
    out = tmp_path / "grad_loss.py"
    result = affine("--wrt", wrt, "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "dW = " in text and "db = " in text and "dx = " not in text
    assert "    return out, dW, db, None\n" in text
    assert affine("--wrt", wrt, "-o", str(out), "--check").returncode == 0
    stale = affine("-o", str(out), "--check")  # all arguments: another module
    assert stale.returncode == 1


@pytest.mark.parametrize("wrt, says", [("q", "no argument named 'q'"), ("W,,b", "comma-separated"),
                                       ("7", "out of range")])
def test_a_bad_wrt_is_one_line(wrt, says):
    result = affine("--wrt", wrt)
    assert result.returncode != 0 and says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_gen_unroll_writes_straight_line_code():
    rolled = run("gen", f"{EXAMPLES / 'iterative.py'}:double", "--args",
                 f"{EXAMPLES / 'iterative.py'}:example")
    unrolled = run("gen", f"{EXAMPLES / 'iterative.py'}:double", "--args",
                   f"{EXAMPLES / 'iterative.py'}:example", "--unroll")
    assert rolled.returncode == unrolled.returncode == 0, rolled.stderr + unrolled.stderr
    assert "    for _ in range(n):" in rolled.stdout
    assert "    for " not in unrolled.stdout and "x_4 = x_3 * 2.0" in unrolled.stdout


COMMANDS = ("gen", "check", "diff", "trace")  # as SPEC.md lists them


def test_each_command_the_parser_knows_has_its_own_body():
    """A command added to the parser alone would have run as another one."""
    from yota_src.cli import commands
    from yota_src.cli.parser import argument_parser
    parser = argument_parser()
    known = next(action for action in parser._actions if action.dest == "command")
    assert sorted(known.choices) == sorted(commands.COMMANDS) == sorted(COMMANDS)


def test_top_level_help_lists_each_command_in_one_line_with_examples():
    result = run("--help")
    assert result.returncode == 0, result.stderr
    for command in COMMANDS:
        lines = [line for line in result.stdout.splitlines()
                 if line.strip().startswith(f"{command} ")]
        assert len(lines) == 1, (command, result.stdout)
    examples = result.stdout.split("examples:\n", 1)[1]
    for command in COMMANDS:
        assert f"yota-src {command}" in examples


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_a_description_and_examples(command):
    result = run(command, "--help")
    assert result.returncode == 0, result.stderr
    usage, description = result.stdout.split("\n\n")[:2]
    assert usage.startswith(f"usage: yota-src {command}") and len(description) > 40
    examples = result.stdout.split("examples:\n", 1)[1]
    assert f"  yota-src {command}" in examples


def test_every_argument_of_every_command_has_help_text():
    from yota_src.cli.parser import argument_parser
    parser = argument_parser()
    commands = next(action for action in parser._actions if action.dest == "command")
    assert sorted(commands.choices) == sorted(COMMANDS)
    for name, command in [("yota-src", parser), *commands.choices.items()]:
        for action in command._actions:
            assert action.help, (name, action.dest)


@pytest.mark.slow
def test_trace_dot_prints_a_graph_the_same_every_run(tmp_path):
    from helpers_dot import parse_dot
    model = write(tmp_path / "model.py", SQUARES)
    command = ("trace", f"{model}:loss", "--args", f"{model}:example", "--dot", "--grad")
    first, second = run(*command), run(*command)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    graph = parse_dot(first.stdout)
    assert "cluster_forward" in graph["subgraphs"] and "cluster_backward" in graph["subgraphs"]
    labels = [node["label"] for node in graph["nodes"].values()]
    assert "mul  float64 (3,)\nmodel.py:4  return np.sum(x * x)" in labels


def test_trace_grad_lists_the_reverse_pass_after_the_forward_ops(tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    forward = run("trace", f"{model}:loss", "--args", f"{model}:example")
    gradient = run("trace", f"{model}:loss", "--args", f"{model}:example", "--grad")
    assert forward.returncode == gradient.returncode == 0, forward.stderr + gradient.stderr
    assert gradient.stdout.startswith(forward.stdout.rsplit("\nreturn", 1)[0])
    assert len(gradient.stdout.splitlines()) > len(forward.stdout.splitlines())


@pytest.mark.parametrize("command, says", [
    (("gen", "model.py:loss"), "needs --args FILE.py:NAME"),
    (("diff", "model.py:loss", "--args", "model.py:example"), "diff needs -o OUT.py"),
    (("gen", "model.py:loss", "--args", "model.py:example", "--check"),
     "--check needs -o OUT.py")])
def test_a_target_without_what_it_needs_is_one_line(command, says, tmp_path):
    write(tmp_path / "model.py", SQUARES)
    result = run(*command, cwd=tmp_path)
    assert_one_error_line(result, says)


def test_gen_makes_the_directories_of_the_output(tmp_path):
    model = write(tmp_path / "model.py", SQUARES)
    out = tmp_path / "grads" / "deeper" / "grad_loss.py"
    result = run("gen", f"{model}:loss", "--args", f"{model}:example", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text().startswith('# fmt: off\n"""Gradient of')


def test_no_file_of_yota_src_is_taken_for_the_users_line():
    """A one-line error names the innermost frame of the user's code: every
    stage's files are yota-src's own, wherever the package lies."""
    from yota_src import errors
    from yota_src.cli.failures import _is_user_file
    from yota_src.codegen import module
    from yota_src.templates import elementwise
    from yota_src.tracing import interpreter

    for own in (interpreter, module, errors, elementwise):
        assert not _is_user_file(own.__file__), own.__name__
    assert _is_user_file(__file__)
