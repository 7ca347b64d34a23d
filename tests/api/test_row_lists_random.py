"""Random functions of a list of arrays alike (issue 25): each reads the list
in several of the ways a list is read, the module is made at one length and
called at another, and what it gives is right (finite differences) or a
refusal, never another number."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from program_strategy import load_program
from test_row_lists import assert_right

import yota_src as ys
from yota_src.errors import ControlFlowChanged, SignatureMismatch

READS = [  # each adds to `total`; xs is the list, w a weight, h a carried state
    "for x in xs:\n        h = np.tanh(W @ h + x)\n    total = total + np.sum(h ** 2)",
    "for t, x in enumerate(xs):\n        total = total + np.sum(x * xs[t]) * 0.5",
    "for x, y in zip(xs, xs[1:]):\n        total = total + np.sum((x - y) ** 2)",
    "total = total + np.sum(np.stack(xs) @ w)",
    "total = total + np.sum(np.stack(xs, axis=1) ** 2) * 0.1",
    "total = total + np.sum(xs[-1] * w) + np.sum(xs[0])",
    "total = total + np.sum(np.mean(xs, axis=0) * w)",
    "total = total + np.sum(sum(xs) ** 2) * 0.1",
    "total = total + np.sum(np.array(xs)[:, 0]) / len(xs)",
    "total = total + (np.sum(xs[1]) if len(xs) > 3 else np.sum(xs[0]))",
    "total = total + sum(np.sum(x * w) for x in xs[::-1])",
    "total = total + np.sum(np.concatenate(xs) ** 2) * 0.1",
    "for t in range(len(xs) - 1):\n        total = total + np.sum(xs[t + 1] * xs[t])",
    "total = total + np.sum(list(xs)[-1] ** 2)",
]


@st.composite
def list_programs(draw):
    reads = draw(st.lists(st.sampled_from(READS), min_size=1, max_size=4, unique=True))
    body = "\n    ".join(reads)
    source = (f"import numpy as np\n\n\ndef program(W, xs, w, h):\n    total = 0.0\n"
              f"    {body}\n    return total\n")
    made_at = draw(st.integers(2, 6))
    return source, made_at, made_at + draw(st.sampled_from([-1, 1, 3])), draw(st.integers(2, 4))


def arguments(rng, length: int, width: int):
    return (rng.normal(size=(width, width)) * 0.4, [rng.normal(size=width) for _ in range(length)],
            rng.normal(size=width), rng.normal(size=width))


@settings(max_examples=25, deadline=None)
@given(program=list_programs(), seed=st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_a_module_made_at_one_length_is_right_or_refused_at_another(program, seed):
    source, made_at, called_at, width = program
    f = load_program(source).program
    rng = np.random.default_rng(seed)
    df = ys.simplegrad(f, *arguments(rng, made_at, width))
    args = arguments(rng, called_at, width)
    try:
        value, *grads = df(*args)
    except (SignatureMismatch, ControlFlowChanged):
        return
    assert np.isclose(value, f(*args), rtol=1e-9, atol=1e-12)
    assert_right(f, grads, args, atol=1e-6)
