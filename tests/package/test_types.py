"""Type checkers see the public API's signatures (issue 27, items 5 and 6):
mypy --strict, on a user's file, finds yota_src where the README's install
put it, accepts correct calls and rejects a wrong type."""

import textwrap

import pytest

CORRECT = """
    import numpy as np
    import yota_src as ys


    def loss(W: np.ndarray, x: np.ndarray) -> float:
        return float(np.sum(np.tanh(W @ x)))


    W, x = np.ones((2, 3)), np.ones(3)
    value, g = ys.grad(loss, W, x, wrt="W")
    df = ys.simplegrad(loss, W, x, wrt=[0])
    ys.check_grad(loss, W, x, rtol=1e-4)
    H = ys.hessian(lambda v: float(np.sum(v ** 3)), x, loops="unroll")
    print(value, g[0], df.source, H.shape)
"""

WRONG = {
    "wrt": 'ys.grad(loss, W, x, wrt=3.5)',
    "loops": 'ys.hessian(lambda v: float(np.sum(v ** 3)), x, loops=2)',
    "rtol": 'ys.check_grad(loss, W, x, rtol="tight")',
    "function": 'ys.simplegrad(3, W, x)',
}


def mypy(tmp_path, text: str) -> tuple[str, int]:
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (the test extra)")
    path = tmp_path / "user.py"
    path.write_text(textwrap.dedent(text).lstrip())
    stdout, stderr, status = api.run(["--strict", "--cache-dir", str(tmp_path / "cache"),
                                      str(path)])
    return stdout + stderr, status


@pytest.mark.slow
def test_mypy_strict_accepts_correct_calls_and_rejects_each_wrong_type(tmp_path):
    output, status = mypy(tmp_path, CORRECT)
    assert status == 0, output  # (also: the installed package is found, py.typed read)
    body = textwrap.dedent(CORRECT).lstrip().split("W, x = ")[0]
    body += "W, x = np.ones((2, 3)), np.ones(3)\n"
    wrong = body + "".join(f"{call}\n" for call in WRONG.values())
    output, status = mypy(tmp_path, wrong)
    assert status == 1, output
    first = len(body.splitlines())
    lines = {int(line.split(":")[1]) for line in output.splitlines() if ": error:" in line}
    assert lines == set(range(first + 1, first + 1 + len(WRONG))), output
