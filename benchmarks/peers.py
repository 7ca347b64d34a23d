"""The peers bench_workloads.py measures beside yota-src, where installed
(`pip install -e ".[bench]"`): HIPS autograd and `jax.jit(jax.value_and_grad)`
take each workload as written, from a copy of workloads.py whose `np` is
their NumPy; PyTorch (CPU) gets each workload written with torch below.

Each contender returns `(value, gradient per positional argument)` with NumPy
arrays, a struct's gradient as a dict of fields, None where an argument gets
none, so that the benchmark checks it against the hand-written gradient.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import numpy as np
import workloads

_FILE = Path(workloads.__file__)


def peers(work, args) -> dict:
    """{name: zero-argument callable} for every peer installed."""
    found = {}
    differentiable = [i for i, a in enumerate(args) if _differentiable(a)]
    for name, make in (("autograd", _autograd), ("jax.jit", _jax), ("torch", _torch)):
        try:
            call = make(work, args, differentiable)
        except ImportError:
            continue
        if call is not None:
            found[name] = call
    return found


def _differentiable(value) -> bool:
    return isinstance(value, workloads.Linear) or (
        isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating))


def _library_copy(name: str, numpy_module):
    """workloads.py loaded again with `np` bound to another NumPy."""
    spec = importlib.util.spec_from_file_location(f"workloads_{name}", _FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    module.np = numpy_module
    return module


def _in_order(value, grads, positions, n_args) -> tuple:
    out = [None] * n_args
    for position, grad in zip(positions, grads):
        out[position] = _plain(grad)
    return (np.asarray(value), *out)


def _plain(grad):
    if isinstance(grad, workloads.Linear):
        return {"W": np.asarray(grad.W), "b": np.asarray(grad.b)}
    return grad if isinstance(grad, dict) else np.asarray(grad)


def _autograd(work, args, positions):
    if any(isinstance(a, workloads.Linear) for a in args):
        return None  # autograd differentiates arrays, lists, tuples and dicts only
    autograd = importlib.import_module("autograd")
    module = _library_copy("autograd", importlib.import_module("autograd.numpy"))
    vg = autograd.value_and_grad(getattr(module, work.loss.__name__), tuple(positions))
    return lambda: _in_order(*vg(*args), positions, len(args))


def _jax(work, args, positions):
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    _register_linear(jax)
    module = _library_copy("jax", importlib.import_module("jax.numpy"))
    static = tuple(i for i in range(len(args)) if i not in positions)
    jitted = jax.jit(jax.value_and_grad(getattr(module, work.loss.__name__), tuple(positions)),
                     static_argnums=static)
    return lambda: _in_order(*jax.block_until_ready(jitted(*args)), positions, len(args))


_registered = []


def _register_linear(jax) -> None:
    if not _registered:
        jax.tree_util.register_pytree_node(
            workloads.Linear, lambda m: ((m.W, m.b), None),
            lambda _, children: workloads.Linear(*children))
        _registered.append(True)


def _torch(work, args, positions):
    torch = importlib.import_module("torch")
    fn = TORCH.get(work.loss.__name__)
    if fn is None:
        return None
    inputs, leaves = [], []
    for i, arg in enumerate(args):
        if isinstance(arg, workloads.Linear):
            fields = [torch.tensor(arg.W, requires_grad=True),
                      torch.tensor(arg.b, requires_grad=True)]
            inputs.append(workloads.Linear(*fields))
            leaves.append(fields)
        elif i in positions:
            inputs.append(torch.tensor(arg, requires_grad=True))
            leaves.append([inputs[-1]])
        else:
            inputs.append(torch.tensor(arg) if isinstance(arg, np.ndarray) else arg)
    flat = [leaf for group in leaves for leaf in group]

    def call():
        value = fn(torch, *inputs)
        grads = iter(torch.autograd.grad(value, flat))
        out = []
        for group in leaves:
            parts = [next(grads).numpy() for _ in group]
            out.append(dict(zip("Wb", parts)) if len(group) == 2 else parts[0])
        return _in_order(value.detach().numpy(), out, positions, len(args))
    return call


# --- the workloads, written with torch ------------------------------------------

def _affine(torch, W, b, x):
    return (W @ x + b[:, None]).sum()


def _mlp(torch, W1, b1, W2, b2, X, Y):
    h = torch.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - logits.max(dim=1, keepdim=True).values
    log_p = shifted - torch.log(torch.exp(shifted).sum(dim=1, keepdim=True))
    return -(Y * log_p).sum() / X.shape[0]


def _logistic(torch, w, X, y):
    p = 1 / (1 + torch.exp(-(X @ w)))
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()


def _polynomial(torch, x):
    a, b, c = x[0], x[1], x[2]
    return (a * b + b * c + c * a + a * a * b - b * b * c + 3.0 * a * c * c
            + (a - b) * (b - c) * (c - a) + a * b * c + 0.5 * a * a + 2.0 * b * b * b)


def _rnn(torch, Wx, Wh, xs):
    h = torch.zeros(Wh.shape[0], dtype=xs.dtype)
    for t in range(xs.shape[0]):
        h = torch.tanh(Wx @ xs[t] + Wh @ h)
    return (h ** 2).sum()


def _iterative(torch, x, n):
    for _ in range(n):
        x = x * 2.0
    return x.sum()


def _logistic_sum(torch, x):
    return (1 / (1 + torch.exp(-x))).sum()


def _linear(torch, m, X):
    return (m.W @ X + m.b[:, None]).sum()


TORCH = {"affine": _affine, "mlp": _mlp, "logistic": _logistic, "polynomial": _polynomial,
         "rnn": _rnn, "iterative": _iterative, "logistic_sum": _logistic_sum,
         "linear": _linear}
