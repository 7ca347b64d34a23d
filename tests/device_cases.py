"""The programs run on the device (test_cupy.py through the stand-in,
test_gpu.py on a real GPU), and how their gradients are compared with the
NumPy code's."""

import golden_programs
import numpy as np
from conftest import load_example

from yota_src.core.values import flatten, rebuild


def gpu_example():
    """examples/gpu.py's arguments, on the host."""
    rng = np.random.default_rng(0)
    return (0.5 * rng.standard_normal((16, 8)), np.zeros(16), 0.5 * rng.standard_normal((3, 16)),
            rng.standard_normal((8, 32)), rng.integers(0, 3, size=32))


CASES = {name: (lambda name=name: golden_programs.case(name)) for name in golden_programs.NAMES}
CASES.update({
    "mlp": lambda: (load_example("mlp").loss, load_example("mlp").example(), None),
    "affine": lambda: (load_example("affine").loss, load_example("affine").example(), None),
    "gpu": lambda: (load_example("gpu").loss, gpu_example(), None),
})


def on_device(cupy, args: tuple) -> tuple:
    """The arguments with every NumPy array put on the device."""
    return tuple(rebuild(arg, lambda _path, leaf: cupy.asarray(leaf)
                         if isinstance(leaf, np.ndarray) else leaf) for arg in args)


def holds_arrays(args: tuple) -> bool:
    return any(isinstance(leaf, np.ndarray) for arg in args for _, leaf in flatten(arg))


def assert_same_gradients(cupy, got: tuple, expected: tuple, rtol: float) -> None:
    """`got` (device code's) is `expected` (NumPy code's): each array on the
    device, and equal to `rtol` once brought back."""
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected):
        if theirs is None:
            assert mine is None
            continue
        mine_leaves = flatten(mine) if isinstance(mine, dict) else [((), mine)]
        their_leaves = flatten(theirs) if isinstance(theirs, dict) else [((), theirs)]
        for (_, a), (_, b) in zip(mine_leaves, their_leaves):
            if isinstance(b, np.ndarray):
                assert isinstance(a, cupy.ndarray), f"{type(a)} is not on the device"
            host = cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a
            np.testing.assert_allclose(host, b, rtol=rtol, atol=rtol * 1e-2)
