"""The CuPy examples on a real GPU, compared with the NumPy code's results.

Skipped, with the reason shown in pytest's summary, where CuPy is not
installed (`pip install -e ".[cuda]"`) or finds no GPU. test_cupy.py runs the
same path everywhere through a NumPy-backed stand-in.
"""

import golden_programs
import numpy as np
import pytest
from conftest import load_example
from device_cases import CASES, assert_same_gradients, on_device

import yota_src as ys


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


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_gradients_match_numpy(name):
    fn, args, wrt = CASES[name]()
    expected = ys.simplegrad(fn, *args, wrt=wrt)(*args)
    device_args = on_device(cp, args)
    assert_same_gradients(cp, ys.simplegrad(fn, *device_args, wrt=wrt)(*device_args), expected,
                          rtol=1e-10)


def test_gpu_training_loop_stays_on_the_device():
    module = load_example("mlp")
    params, x, labels = on_device(cp, module.example())
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
