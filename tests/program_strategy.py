"""A hypothesis strategy for random small NumPy programs, and how to run one.

A program takes 1-3 arrays of mutually broadcastable shapes and uses helper
calls, a bounded `for` loop and a static `if`, ending in `np.sum`. Every
operation is smooth on the generated inputs (denominators and logs are kept
away from zero; exponents see a tanh first), so finite differences are a fair
referee.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

UNARY = ["np.tanh({})", "np.sin({})", "np.cos({})", "-({})", "np.square({})",
         "np.exp(np.tanh({}))", "np.log(1.5 + np.square({}))", "np.sqrt(2.0 + np.sin({}))",
         "np.abs({}) + 1.0"]
BINARY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.5 + np.square({}))",
          "np.maximum({}, {})", "np.minimum({}, {})", "helper({}, {})"]
_counter = itertools.count()


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
    helper = draw(expressions(["a", "b"], depth=2, calls=False))
    start = draw(expressions(args, depth=2))
    step = draw(expressions(args + ["h"], depth=2))
    then = draw(expressions(args + ["h"], depth=1))
    other = draw(expressions(args + ["h"], depth=1))
    loops = draw(st.integers(0, 3))
    flag = draw(st.booleans())
    source = f"""import numpy as np


def helper(a, b):
    return {helper}


def program({", ".join(args)}, flag={flag}):
    h = {start}
    for i in range({loops}):
        h = 0.5 * ({step}) + 0.1 * i
    if flag:
        h = {then}
    else:
        h = {other}
    return np.sum(h * 1.0)
"""
    return source, shapes.input_shapes


def load_program(source: str):
    """Write the program to a file (yota-src reads source) and import it."""
    directory = tempfile.mkdtemp(prefix="yota_src_program_")
    name = f"generated_program_{next(_counter)}"
    path = os.path.join(directory, f"{name}.py")
    with open(path, "w") as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


def arguments(shapes, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.0, 1.0, shape) for shape in shapes]
