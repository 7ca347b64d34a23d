"""YOTA_SRC_DUMP=1 prints what each stage of the pipeline made, in order, on
stderr: the tape after the trace, the forward passes, the reverse sweep and
the backward passes, then the module codegen wrote. Nothing else changes."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numpy as np
    import yota_src as ys

    def loss(x):
        return np.sum(np.tanh(x) ** 2)

    print(ys.simplegrad(loss, np.ones(3))(np.ones(3))[1])
""")


def run(tmp_path, dump: str) -> subprocess.CompletedProcess:
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "YOTA_SRC_DUMP": dump}, timeout=120)


def test_dump_prints_each_stage_in_the_order_of_the_pipeline(tmp_path):
    result = run(tmp_path, "1")
    assert result.returncode == 0, result.stderr
    headings = [line for line in result.stderr.splitlines() if line.startswith("---")]
    assert headings == [f"--- yota-src: loss after {stage} ---" for stage in (
        "trace", "forward passes", "differentiate", "backward passes", "codegen")]
    trace, _, differentiated, optimised, module = result.stderr.split("--- yota-src: ")[1:]
    assert "np.tanh(%1)" in trace and "return %4" in trace
    assert len(differentiated.splitlines()) > len(trace.splitlines())  # the reverse sweep
    assert "return (%4, %" in optimised
    assert "def grad_loss(x):" in module
    assert result.stdout == run(tmp_path, "0").stdout


def test_no_dump_without_the_variable(tmp_path):
    result = run(tmp_path, "0")
    assert result.returncode == 0 and result.stderr == "", result.stderr
