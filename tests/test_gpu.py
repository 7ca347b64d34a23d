"""The CuPy examples on a real GPU, compared with the NumPy code's results.

Skipped, with the reason shown in pytest's summary, where CuPy is not
installed (`pip install -e ".[cuda]"`) or finds no GPU. test_cupy.py runs the
same path everywhere through a NumPy-backed stand-in.
"""

import golden_programs
import numpy as np
import pytest
from conftest import load_example

import yota_src as ys
from yota_src.structs import flatten, rebuild


def _real_cupy():
    """(cupy, "") with a GPU to run on, else (None, why not)."""
    try:
        import cupy
    except ImportError:
        return None, "CuPy is not installed (pip install -e \".[cuda]\" on a machine with a GPU)"
    if getattr(cupy, "STANDIN", False):
        return None, "only the CPU stand-in of CuPy is importable here"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDA driver or runtime missing
        return None, f"CuPy finds no GPU: {type(error).__name__}: {error}"
    if count == 0:
        return None, "CuPy finds no GPU"
    return cupy, ""


cp, WHY = _real_cupy()
pytestmark = pytest.mark.skipif(cp is None, reason=f"GPU tests skipped: {WHY}")


def on_device(args: tuple) -> tuple:
    return tuple(rebuild(arg, lambda _path, leaf: cp.asarray(leaf)
                         if isinstance(leaf, np.ndarray) else leaf) for arg in args)


def gpu_example():
    rng = np.random.default_rng(0)
    return (0.5 * rng.standard_normal((16, 8)), np.zeros(16), 0.5 * rng.standard_normal((3, 16)),
            rng.standard_normal((8, 32)), rng.integers(0, 3, size=32))


CASES = {name: (lambda name=name: golden_programs.case(name)) for name in golden_programs.NAMES}
CASES.update({
    "mlp": lambda: (load_example("mlp").loss, load_example("mlp").example(), None),
    "affine": lambda: (load_example("affine").loss, load_example("affine").example(), None),
    "gpu": lambda: (load_example("gpu").loss, gpu_example(), None),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_gradients_match_numpy(name):
    fn, args, wrt = CASES[name]()
    expected = ys.simplegrad(fn, *args, wrt=wrt)(*args)
    device_args = on_device(args)
    df = ys.simplegrad(fn, *device_args, wrt=wrt)
    got = df(*device_args)
    for mine, theirs in zip(got, expected):
        if theirs is None:
            assert mine is None
            continue
        mine_leaves = flatten(mine) if isinstance(mine, dict) else [((), mine)]
        their_leaves = flatten(theirs) if isinstance(theirs, dict) else [((), theirs)]
        for (_, a), (_, b) in zip(mine_leaves, their_leaves):
            host = cp.asnumpy(a) if isinstance(a, cp.ndarray) else a
            np.testing.assert_allclose(host, b, rtol=1e-10, atol=1e-12)


def test_gpu_training_loop_stays_on_the_device():
    module = load_example("mlp")
    params, x, labels = on_device(module.example())
    first = None
    for _ in range(50):
        value, g = ys.grad(module.loss, params, x, labels)
        params = ys.update(params, g[0], lambda p, gp: p - 0.5 * gp)
        first = float(value) if first is None else first
    assert isinstance(params.W1, cp.ndarray)
    assert float(value) < first


def scatter(x, index):
    xp = cp.get_array_module(x)
    y = xp.zeros(4)
    np.add.at(y, index, x * x)
    return xp.sum(xp.tanh(y))


def test_gpu_scatter_add_and_finite_differences():
    x = cp.asarray([0.3, -0.7, 1.1, 0.2])
    index = cp.asarray(np.array([0, 2, 2, 3]))
    ys.check_grad(golden_programs.huber, cp.asarray([0.2, -2.0, 1.5, 0.7]),
                  cp.asarray([0.0, 0.5, -0.5, 0.9]))
    _, g = ys.grad(scatter, x, index)
    host = ys.grad(scatter, cp.asnumpy(x), cp.asnumpy(index))[1]
    np.testing.assert_allclose(cp.asnumpy(g[0]), host[0], rtol=1e-12)
