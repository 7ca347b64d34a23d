"""The CuPy path, on the CPU, through the NumPy-backed stand-in in
tests/cupy_standin (a `cupy.ndarray` of its own, CuPy's refusal of NumPy
operands, 0-d results, no `ufunc.at`). The same examples run on a real GPU in
test_gpu.py, which skips where there is none.

What is checked here: which library the generated module imports and spells
(golden file), that it runs on device arrays alone and agrees with the NumPy
code, mixed arguments refused, and what cannot run on the device refused when
the code is generated.
"""

import io
import os
import subprocess
import sys
import textwrap
import tokenize

import golden_programs
import numpy as np
import pytest
from conftest import ROOT, STANDIN, TESTS, cupy_standin, load_example, run_without_yota_src
from device_cases import CASES, assert_same_gradients, gpu_example, holds_arrays, on_device

import yota_src as ys
from yota_src.errors import UnsupportedSyntaxError

GOLDEN = TESTS / "golden"


@pytest.fixture(scope="module")
def cp():
    """The stand-in as `cupy`, for this module's tests only."""
    with cupy_standin() as cupy:
        yield cupy


def to_host(value):
    return np.asarray(value.get()) if hasattr(value, "get") and not isinstance(value, dict) \
        else value


def code_names(source: str) -> set[str]:
    """The dotted names the code reads (`np.sum`), leaving comments and strings out."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    names, index = set(), 0
    while index < len(tokens):
        if tokens[index].type == tokenize.NAME:
            chain = [tokens[index].string]
            while index + 2 < len(tokens) and tokens[index + 1].string == "." \
                    and tokens[index + 2].type == tokenize.NAME:
                chain.append(tokens[index + 2].string)
                index += 2
            names.add(".".join(chain))
        index += 1
    return names


def assert_device_code(source: str) -> None:
    names = code_names(source)
    assert "import cupy as cp" in source
    assert "numpy" not in names and not any(name.split(".")[0] == "np" for name in names), \
        sorted(name for name in names if name.startswith(("np", "numpy")))
    assert "yota_src" not in source


@pytest.mark.parametrize("name", sorted(CASES))
def test_device_code_agrees_with_numpy_code(cp, name):
    fn, args, wrt = CASES[name]()
    expected = ys.simplegrad(fn, *args, wrt=wrt)(*args)
    device_args = on_device(cp, args)
    df = ys.simplegrad(fn, *device_args, wrt=wrt)
    if not holds_arrays(args):
        assert "cupy" not in df.source  # floats alone: NumPy's code
        return
    assert_device_code(df.source)
    assert_same_gradients(cp, df(*device_args), expected, rtol=1e-12)


def test_golden_file_of_a_cupy_specialisation(cp):
    """The MLP example on the device: the text a reviewer reads for CuPy."""
    module = load_example("gpu")
    source = ys.simplegrad(module.loss, *on_device(cp, gpu_example())).source
    path = GOLDEN / "grad_gpu_cupy.py"
    if os.environ.get("YOTA_SRC_UPDATE_GOLDEN"):
        path.write_text(source)
    assert source == path.read_text(), "grad_gpu_cupy.py changed; review and update deliberately"


def test_numpy_arguments_give_numpy_code_and_never_import_cupy():
    """Choosing the library imports no CuPy: run where none was imported."""
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(STANDIN)!r}, {str(ROOT / 'examples')!r}]
        import numpy as np, yota_src as ys
        import affine
        df = ys.simplegrad(affine.loss, *affine.example())
        assert "import numpy as np" in df.source and "cupy" not in df.source
        assert not [m for m in sys.modules if m.startswith(("cupy", "cupyx"))], "imported"
    """)
    subprocess.run([sys.executable, "-c", script], check=True)


def test_mixed_numpy_and_cupy_arguments_are_refused(cp):
    module = load_example("mlp")
    params, x, labels = module.example()
    with pytest.raises(TypeError, match=r"x is a CuPy array and params\.W1 a NumPy array(.|\n)*"
                                        r"cupy\.asarray"):
        ys.grad(module.loss, params, cp.asarray(x), labels)
    params.W2 = cp.asarray(params.W2)
    with pytest.raises(TypeError, match=r"params\.W2 is a CuPy array and params\.W1 a NumPy"):
        ys.simplegrad(module.loss, params, x, labels)


def scatter(x, index):
    y = np.zeros(4)
    np.add.at(y, index, x * x)
    return np.sum(np.tanh(y))


def test_add_at_becomes_cupyx_scatter_add(cp):
    x, index = cp.asarray([0.3, -0.7, 1.1, 0.2]), cp.asarray(np.array([0, 2, 2, 3]))
    df = ys.simplegrad(scatter, x, index)
    assert "cupyx.scatter_add(y, index, " in df.source and "import cupyx" in df.source
    value, dx, _ = df(x, index)
    host = ys.simplegrad(scatter, x.get(), index.get())(x.get(), index.get())
    np.testing.assert_allclose(dx.get(), host[1], rtol=1e-14)
    ys.check_grad(scatter, x.get(), index.get())  # scatter itself adds into a host array


def test_struct_fields_on_the_device_and_update(cp):
    module = load_example("mlp")
    params, x, labels = on_device(cp, module.example())
    value, g = ys.grad(module.loss, params, x, labels)
    assert set(g[0]) == {("W1",), ("b1",), ("W2",), ("b2",)}
    assert all(isinstance(each, cp.ndarray) for each in g[0].values())
    before = float(value)
    for _ in range(20):
        value, g = ys.grad(module.loss, params, x, labels)
        params = ys.update(params, g[0], lambda p, gp: p - 0.5 * gp)
    assert isinstance(params.W1, cp.ndarray) and float(value) < before


def written_for_cupy(W, x):
    import cupy

    xp = cupy.get_array_module(W)
    h = cupy.tanh(W @ x)
    return xp.sum(h * h) + cupy.linalg.norm(x)


def test_code_written_with_cupy_functions(cp, rng):
    W, x = rng.normal(size=(3, 4)), rng.normal(size=4)
    value, g = ys.grad(written_for_cupy, cp.asarray(W), cp.asarray(x))
    expected = np.sum(np.tanh(W @ x) ** 2) + np.linalg.norm(x)
    assert float(value) == pytest.approx(expected, rel=1e-13)
    ys.check_grad(written_for_cupy, cp.asarray(W), cp.asarray(x))


def draws_on_the_device(x):
    import cupy

    return np.sum(x * cupy.random.normal(size=x.shape))


def test_device_random_draws_are_refused(cp):
    with pytest.raises(UnsupportedSyntaxError, match="draws random numbers on the device"):
        ys.grad(draws_on_the_device, cp.ones(3))


def test_numpy_and_cupy_arguments_are_cached_apart(cp, rng):
    x = rng.normal(size=5)
    value, g = ys.grad(golden_programs.huber, x, -x)
    device_value, device_g = ys.grad(golden_programs.huber, cp.asarray(x), cp.asarray(-x))
    assert isinstance(g[0], np.ndarray) and isinstance(device_g[0], cp.ndarray)
    np.testing.assert_allclose(device_g[0].get(), g[0], rtol=1e-14)
    again = ys.grad(golden_programs.huber, x, -x)[1]
    assert isinstance(again[0], np.ndarray)


SMALL = np.array([1.0, 2.0, 3.0])
LARGE = np.linspace(0.0, 1.0, 1000)


def reads_small(x):
    return np.sum(x * SMALL)


def reads_large(x):
    return np.sum(x * LARGE[:3])


def test_arrays_read_from_outside(cp):
    """Small NumPy arrays are written into the module (then on the device); a
    large one would be read from the host at each call, and a device array
    read from outside cannot be traced: both are refused, naming them."""
    df = ys.simplegrad(reads_small, cp.ones(3))
    assert "SMALL = cp.array([1.0, 2.0, 3.0])" in df.source
    np.testing.assert_array_equal(df(cp.ones(3))[1].get(), SMALL)
    with pytest.raises(UnsupportedSyntaxError, match="LARGE, a NumPy float64 array"):
        ys.simplegrad(reads_large, cp.ones(3))
    global DEVICE
    DEVICE = cp.ones(3)
    with pytest.raises(UnsupportedSyntaxError, match="DEVICE is a CuPy array read from outside"):
        ys.simplegrad(reads_device, cp.ones(3))


def reads_device(x):
    return np.sum(x * DEVICE)


def quiet_log(x):
    with np.errstate(divide="ignore"):
        return np.sum(np.log(x))


def test_a_function_cupy_lacks_is_refused_when_generating(cp):
    with pytest.raises(UnsupportedSyntaxError, match=r"needs np\.errstate, and the CuPy "
                                                     r"imported here has no cupy\.errstate"):
        ys.simplegrad(quiet_log, cp.ones(3))


def uses_cp_as_a_name(cp, x):
    return np.sum(x * cp)


def test_a_parameter_called_cp(cp):
    df = ys.simplegrad(uses_cp_as_a_name, 2.0, cp.ones(3))
    assert "import cupy\n" in df.source and "cupy.ndarray" in df.source
    assert float(df(2.0, cp.ones(3))[0]) == 6.0


def vector(x):
    return np.sin(x) * x


def scalar(x):
    return np.sum(np.sin(x) * x)


def test_transforms_on_the_device(cp, rng):
    x = rng.normal(size=4)
    d = cp.asarray(x)
    value, pullback = ys.vjp(vector, d)
    assert isinstance(value, cp.ndarray)
    np.testing.assert_allclose(pullback(cp.ones(4))[0].get(), ys.vjp(vector, x)[1](np.ones(4))[0])
    for mode in ("rev", "fwd"):
        jac = ys.jacobian(vector, d, mode=mode)
        assert isinstance(jac, cp.ndarray)
        np.testing.assert_allclose(jac.get(), ys.jacobian(vector, x), rtol=1e-13)
    hess = ys.hessian(scalar, d)
    np.testing.assert_allclose(hess.get(), ys.hessian(scalar, x), rtol=1e-13)
    np.testing.assert_allclose(ys.hvp(scalar, d, d).get(), ys.hvp(scalar, x, x), rtol=1e-13)
    _, tangent = ys.jvp(vector, (d,), (d,))
    np.testing.assert_allclose(tangent.get(), ys.jvp(vector, (x,), (x,))[1], rtol=1e-13)


def test_float32_on_the_device(cp, rng):
    x = rng.normal(size=5).astype(np.float32)
    _, g = ys.grad(golden_programs.huber, cp.asarray(x), cp.asarray(-x))
    assert g[0].dtype == np.float32
    np.testing.assert_allclose(g[0].get(), ys.grad(golden_programs.huber, x, -x)[1][0], rtol=1e-6)


def test_saved_module_runs_with_cupy_alone(cp, tmp_path):
    """No yota_src, and no NumPy spelling: the module imports only cupy."""
    module = load_example("gpu")
    args = on_device(cp, gpu_example())
    df = ys.simplegrad(module.loss, *args)
    df.save(tmp_path / "grad_loss_gpu.py")
    expected = df(*args)[0]
    out = run_without_yota_src("""
        import numpy as np, cupy
        from grad_loss_gpu import grad_loss
        rng = np.random.default_rng(0)
        host = (0.5 * rng.standard_normal((16, 8)), np.zeros(16),
                0.5 * rng.standard_normal((3, 16)), rng.standard_normal((8, 32)),
                rng.integers(0, 3, size=32))
        value, *grads = grad_loss(*(cupy.asarray(a) for a in host))
        assert all(type(g) is cupy.ndarray for g in grads[:4]), [type(g) for g in grads]
        print(repr(float(value)))
    """, STANDIN, tmp_path)
    assert float(out) == pytest.approx(float(expected), rel=1e-14)


@pytest.mark.slow
def test_cli_writes_cupy_code(cp, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(STANDIN), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "grad_loss_gpu.py"
    subprocess.run([sys.executable, "-m", "yota_src", "gen", "examples/gpu.py:loss",
                    "--args", "examples/gpu.py:example", "-o", str(out)],
                   check=True, cwd=ROOT, env=env)
    assert_device_code(out.read_text())


def scatters_with_cupyx(x, index):
    import cupy
    import cupyx

    y = cupy.zeros(4)
    cupyx.scatter_add(y, index, x * x)
    return cupy.sum(cupy.tanh(y))


def test_cupyx_scatter_add_in_the_primal_is_np_add_at(cp):
    x, index = cp.asarray([0.3, -0.7, 1.1, 0.2]), cp.asarray(np.array([0, 2, 2, 3]))
    _, g = ys.grad(scatters_with_cupyx, x, index)
    _, expected = ys.grad(scatter, x.get(), index.get())
    np.testing.assert_allclose(g[0].get(), expected[0], rtol=1e-14)


# Found by a hostile tester: code that CuPy refuses where NumPy is lenient.

def weight_decay(W, lam):
    return lam * np.sum(W ** 2)


def log_determinant(A):
    return np.linalg.slogdet(A)[1]


def matrix_trace(A):
    return np.trace(A)


def accumulates(xs):
    acc = 0.0
    for row in xs:
        acc = acc + np.sum(np.sin(row))
    return acc


def stacks_elements(x):
    return np.sum(np.stack([x[0], x[2] * 3.0]) ** 2) + np.sum(np.array([x[1], x[3]]) ** 3)


LENIENT = {
    "weight_decay": (weight_decay, lambda rng: (rng.normal(size=(3, 3)), 0.1)),
    "slogdet": (log_determinant, lambda rng: (rng.normal(size=(3, 3)) + 3 * np.eye(3),)),
    "trace": (matrix_trace, lambda rng: (rng.normal(size=(3, 3)),)),
    "float_accumulator": (accumulates, lambda rng: (rng.normal(size=(4, 3)),)),
    "stacked_elements": (stacks_elements, lambda rng: (rng.normal(size=5),)),
}


@pytest.mark.parametrize("name", sorted(LENIENT))
def test_numbers_where_cupy_takes_arrays(cp, rng, name):
    """A Python float reaches cp.broadcast_to / expand_dims (a scalar gradient),
    or an array literal of gathered elements mixes them with zeros: the device
    code wraps the float, and builds such gradients by index updates."""
    fn, example = LENIENT[name]
    args = example(rng)
    expected = ys.simplegrad(fn, *args)(*args)
    got = ys.simplegrad(fn, *on_device(cp, args))(*on_device(cp, args))
    for mine, theirs in zip(got, expected):
        np.testing.assert_allclose(to_host(mine), theirs, rtol=1e-12)


def test_a_global_changed_in_place_is_not_stale_on_the_device(cp):
    """The NumPy code reads the live array; the device code a copy, which a
    change in place makes stale: ys.grad retraces, simplegrad's code refuses."""
    global SMALL
    saved = SMALL.copy()
    try:
        df = ys.simplegrad(reads_small, cp.ones(3))
        assert ys.grad(reads_small, cp.ones(3))[1][0].get().tolist() == [1.0, 2.0, 3.0]
        SMALL *= 10.0
        assert ys.grad(reads_small, cp.ones(3))[1][0].get().tolist() == [10.0, 20.0, 30.0]
        with pytest.raises(ValueError, match=r"the array SMALL \(copied to the device\)"):
            df(cp.ones(3))
    finally:
        SMALL[...] = saved


def names_cupyx(x, index):
    cupyx = x * 2.0
    out = np.zeros(5)
    np.add.at(out, index, cupyx)
    return np.sum(out ** 2)


def test_a_variable_called_cupyx(cp):
    x, index = cp.ones(4), cp.asarray(np.array([0, 2, 2, 4]))
    df = ys.simplegrad(names_cupyx, x, index)
    assert "import cupyx as cupyx_" in df.source
    np.testing.assert_allclose(df(x, index)[1].get(),
                               ys.simplegrad(names_cupyx, x.get(), index.get())(
                                   x.get(), index.get())[1])


def uses_scipy_special(x):
    import scipy.special

    return np.sum(scipy.special.gammaln(x))


def test_scipy_becomes_cupyx_scipy_without_importing_scipy(cp):
    pytest.importorskip("scipy")
    x = cp.asarray([0.5, 1.5, 2.5])
    df = ys.simplegrad(uses_scipy_special, x)
    assert "import cupyx.scipy.special" in df.source
    assert "import scipy" not in df.source
    np.testing.assert_allclose(df(x)[1].get(), ys.grad(uses_scipy_special, x.get())[1][0])


def test_the_guard_says_which_library(cp):
    df = ys.simplegrad(vector_sum, cp.ones(3))
    expected = r"x float64 \(N,\), a cupy.ndarray, got numpy.ndarray float64 \(3,\)"
    with pytest.raises(ValueError, match=expected):
        df(np.ones(3))


def vector_sum(x):
    return np.sum(x * x)
