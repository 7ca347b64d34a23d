"""A hypothesis strategy for random small NumPy programs, and how to run one.

A program takes 1-3 arrays of mutually broadcastable shapes and uses helper
calls, a bounded `for` loop, a loop carrying a value from one iteration to
the next and reading a sequence at `t` and `t - 1` with an `if` decided by
the data in it (rolled into a loop op with both arms where its iterations
took both, and checked against its unrolled gradient), a scatter into a buffer (`np.add.at`,
`np.subtract.at`, indexed `+=` and stores), Python deciding from traced values
(`in`, `sorted`, `set`, dict keys, `max(key=)`), an `if` decided by an argument
and by a global, and one decided by text made from a traced value (an
f-string), ending in `np.sum`. It also reads a module global (`SCALE`) and a
closure variable (`factor`) that `rebind` changes between calls, so every
program is checked again after the state it folded has changed. Every
operation is smooth on the generated inputs (denominators and logs are kept
away from zero; exponents see a tanh first), so finite differences are a fair
referee.
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import shutil
import tempfile

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

UNARY = ["np.tanh({})", "np.sin({})", "np.cos({})", "-({})", "np.square({})",
         "np.exp(np.tanh({}))", "np.log(1.5 + np.square({}))", "np.sqrt(2.0 + np.sin({}))",
         "np.abs({}) + 1.0"]
BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.5 + np.square({}))",
          "np.maximum({}, {})", "np.minimum({}, {})", "helper({}, {})"]
SCATTERS = ["np.add.at(acc, [0, 2, 0], np.sum(h) * np.array([1.0, 0.5, 2.0]))",
            "np.subtract.at(acc, [1, 1], np.sum(h * h))",
            "acc[[0, 2]] += np.sum(h) * np.array([2.0, -1.0])",
            "acc[1:] = np.sum(np.tanh(h))",
            "np.add.at(acc, np.array([2, 2]), np.sin(np.sum(h)) * np.ones(2))"]
# Python deciding from traced values: `in`, sorted, set, dict keys, max(key=),
# each computed on values and guarded.
DECISIONS = ["h = h * (2.0 if np.round(np.sum(h), 1) in (0.0, 0.5, -0.5) else 1.0)",
             "ranked = sorted([np.sum(h), np.sum(h * h), 0.25]); h = h + ranked[0] - ranked[-1]",
             "h = h * len({round(float(np.sum(h)), 1), 0.5, -0.5})",
             "h = h * {'pos': 1.5, 'neg': 0.5}['pos' if np.sum(h) > 0 else 'neg']",
             "h = h * max([np.sum(h), 0.3, np.mean(h) * 2.0], key=lambda v: abs(v))",
             "h = h + (1.0 if np.max(h) in np.ravel(h) else 0.0) + sorted({np.min(h), 0.5})[0]",
             "counts = {}\n        for v in [np.round(np.sum(h)), 1.0, np.round(np.mean(h))]:"
             "\n            counts[v] = counts.get(v, 0) + 1\n        h = h * len(counts)"]
_counter = itertools.count()
_directory = tempfile.mkdtemp(prefix="yota_src_programs_")
atexit.register(shutil.rmtree, _directory, ignore_errors=True)


@st.composite
def expressions(draw, names, depth=3, calls=True):
    """An expression over `names`; `calls=False` inside the helper itself."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(names + ["0.5", "2.0"]))
    if draw(st.booleans()):
        inner = draw(expressions(names, depth - 1, calls))
        return draw(st.sampled_from(UNARY)).format(inner)
    template = draw(st.sampled_from(BINARY if calls else BINARY[:-1]))
    left = draw(expressions(names, depth - 1, calls))
    right = draw(expressions(names, depth - 1, calls))
    return template.format(left, right)


@st.composite
def programs(draw):
    """(source text, argument shapes)."""
    n_args = draw(st.integers(1, 3))
    shapes = draw(mutually_broadcastable_shapes(num_shapes=n_args, min_dims=0, max_dims=2,
                                                max_side=3))
    args = [f"x{i}" for i in range(n_args)]
    names = args + ["SCALE", "factor"]
    helper = draw(expressions(["a", "b"], depth=2, calls=False))
    start = draw(expressions(names, depth=2))
    step = draw(expressions(names + ["h"], depth=2))
    then = draw(expressions(names + ["h"], depth=1))
    other = draw(expressions(names + ["h"], depth=1))
    loops = draw(st.integers(0, 3))
    steps = draw(st.integers(0, 9))
    carried = draw(expressions(names + ["g", "seq[t]", "seq[t - 1]"], depth=2))
    above = draw(expressions(names + ["g", "seq[t]"], depth=1))
    below = draw(expressions(names + ["g", "seq[t]"], depth=1))
    cut = draw(st.sampled_from([-0.5, 0.0, 0.5]))
    scatter = draw(st.sampled_from(SCATTERS))
    decision = draw(st.sampled_from(DECISIONS))
    digits = draw(st.integers(0, 1))
    flag = draw(st.booleans())
    scale, factor = draw(st.sampled_from([-1.5, -0.5, 0.5, 2.0])), draw(st.floats(-2, 2))
    source = f"""import numpy as np

SCALE = {scale!r}


def helper(a, b):
    return {helper}


def make():
    factor = {factor!r}

    def program({", ".join(args)}, flag={flag}):
        h = {start}
        for i in range({loops}):
            h = 0.5 * ({step}) + 0.1 * i
        seq = np.sin(np.arange({steps + 1.0}).reshape((-1,) + (1,) * np.ndim(h)) + h)
        g = np.tanh(h)
        for t in range({steps}):
            g = np.tanh(0.5 * ({carried}) + 0.25 * g)
            if np.sum(seq[t] + 0.5 * g) > {cut!r}:
                g = g + 0.1 * ({above})
            else:
                g = 0.5 * g - 0.1 * ({below})
        h = h + 0.1 * np.sum(g)
        acc = np.zeros(3)
        {scatter}
        h = h + 0.1 * np.sum(acc * acc)
        {decision}
        if f"{{np.sum(h):.{digits}f}}".startswith("-"):
            h = h * 1.5
        if flag and SCALE > 0:
            h = {then}
        else:
            h = {other}
        return np.sum(h * factor)

    def rebind(scale, new_factor):
        global SCALE
        nonlocal factor
        SCALE, factor = scale, new_factor

    return program, rebind


program, rebind = make()
"""
    return source, shapes.input_shapes


def load_program(source: str):
    """Write the program to a file (yota-src reads source) and import it; the
    module (`program` and `rebind`). Files live until the process exits."""
    name = f"generated_program_{next(_counter)}"
    path = os.path.join(_directory, f"{name}.py")
    with open(path, "w") as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_program(source: str, shapes, seed: int) -> None:
    """Gradients against finite differences, before and after `rebind`
    changes the global and the closure variable the program folded, and on
    other data with the gradients already cached: right or refused (a
    cached variant whose guards pass must give f's value and gradient)."""
    import yota_src as ys
    from yota_src.errors import ControlFlowChanged

    module = load_program(source)
    args = arguments(shapes, seed)
    ys.check_grad(module.program, *args, rtol=1e-4, atol=1e-6)
    rolled = ys.simplegrad(module.program, *args)(*args)
    unrolled = ys.simplegrad(module.program, *args, loops="unroll")(*args)
    for a, b in zip(rolled, unrolled):  # loops rolled or written out: the same numbers
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    other = arguments(shapes, seed + 1)
    try:
        value, _ = ys.grad(module.program, *other)
        np.testing.assert_allclose(value, module.program(*other), rtol=1e-9, atol=1e-12)
    except ControlFlowChanged:
        pass  # refused: the data decides another way
    ys.check_grad(module.program, *other, rtol=1e-4, atol=1e-6)
    check_other_sizes(module.program, args)
    rng = np.random.default_rng(seed)
    module.rebind(float(rng.choice([-1.5, 0.5, 3.0])), float(rng.uniform(-2, 2)))
    ys.check_grad(module.program, *args, rtol=1e-4, atol=1e-6)


def check_other_sizes(program, args) -> None:
    """The module made at the example's sizes, called at others (each size of
    2 or more grown by 2, equal sizes alike): refused, or the value and the
    gradients of the gradient traced at those sizes."""
    import yota_src as ys
    from yota_src.errors import ControlFlowChanged, SignatureMismatch

    df = ys.simplegrad(program, *args)
    other = [_grown(a) for a in args]
    try:
        expected = program(*other)
    except Exception:  # noqa: BLE001 - the program itself does not run at these sizes
        return
    try:
        value, *grads = df(*other)
    except (SignatureMismatch, ControlFlowChanged):
        return  # refused
    np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-12)
    _, reference = ys.grad(program, *other, dynamic=True)
    for got, want in zip(grads, reference):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def check_fast_code(source: str, shapes, seed: int, setup, same) -> None:
    """ys.grad's code for the program, made under `setup(patch)` (a
    pytest.MonkeyPatch: rewrites forced at every size), against simplegrad's
    plain code, `same(got, want)` for each result; and the first call's
    results neither changed nor shared by a later call on other data."""
    import pytest

    import yota_src as ys
    from yota_src.errors import ControlFlowChanged

    module = load_program(source)
    args, other = arguments(shapes, seed), arguments(shapes, seed + 1)
    with pytest.MonkeyPatch.context() as patch:
        setup(patch)
        expected = ys.simplegrad(module.program, *args)(*args)
        value, first = ys.grad(module.program, *args)
        kept = [np.copy(g) for g in first]
        try:
            _, later = ys.grad(module.program, *other)
        except ControlFlowChanged:
            _, later = ys.grad(module.program, *other, dynamic=True)
    for got, want in zip((value, *first), expected):
        same(got, want)
    for g, k in zip(first, kept):
        np.testing.assert_array_equal(g, k)
        assert not any(np.shares_memory(g, each) for each in later)


def arguments(shapes, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, shape) for shape in shapes]


def _grown(a):
    """`a` with each axis of 2 or more grown by 2, its data repeated."""
    for axis in range(np.ndim(a)):
        n = a.shape[axis]
        if n >= 2:
            a = np.take(a, np.arange(n + 2) % n, axis=axis)
    return a
