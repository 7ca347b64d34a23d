"""How a corpus model is checked: shared by tests/programs/test_models.py and
tools/run_models.py.

For each model, at example(0) and at example(1):

- `ys.grad` gives the value `loss(*args)` gives natively;
- its gradient agrees with central finite differences (`ys.check_grad`, and
  the same differences taken here on a fresh copy of the arguments for every
  evaluation, so that a random generator passed in draws the same noise each
  time; `ys.check_grad` moves such a generator on between evaluations);
- the second point reuses the gradient generated at the first one
  (`dynamic=True` where the model says control flow depends on the data).

`check_saved` also generates the module with `ys.simplegrad`, saves it,
imports the file and runs it on the examples.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import importlib.util
import pathlib
import sys
import time
import types

import numpy as np

import yota_src as ys

MODELS_DIR = pathlib.Path(__file__).resolve().parent
ROOT = MODELS_DIR.parents[1]
PACKAGE = "models"

VALUE_RTOL, VALUE_ATOL = 1e-9, 1e-12


class WrongAnswer(AssertionError):
    """yota-src answered without an error, and the answer is wrong."""


def model_names() -> list[str]:
    return sorted(p.stem for p in MODELS_DIR.glob("*.py") if not p.stem.startswith("_"))


def load(name: str):
    if str(MODELS_DIR.parent) not in sys.path:
        sys.path.insert(0, str(MODELS_DIR.parent))
    return importlib.import_module(f"{PACKAGE}.{name}")


def first_line(error: BaseException) -> str:
    """The first line of an error message, with this checkout's root taken
    off the paths it names (so the text is the same on every machine)."""
    text = str(error).replace(str(ROOT) + "/", "")
    line = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {line}"


def call(model, function, *args, **keywords):
    """`function(*args)` after the model's `reset()` (a model whose generator
    lives in a closure rewinds it there), on a deep copy of the arguments."""
    reset = getattr(model, "reset", None)
    if reset is not None:
        reset()
    return function(*copy.deepcopy(args), **keywords)


def _draws_outside_arguments(model) -> bool:
    return hasattr(model, "reset")


# --- leaves -----------------------------------------------------------------

def _is_generator(value) -> bool:
    return isinstance(value, (np.random.RandomState, np.random.Generator))


def _is_float_leaf(value) -> bool:
    if isinstance(value, np.ndarray):
        return np.issubdtype(value.dtype, np.floating)
    return isinstance(value, (float, np.floating)) and not isinstance(value, bool)


_NOT_STRUCTS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                types.ModuleType, functools.partial, np.ufunc)


def leaves(value, path=()):
    """(path, leaf) for each float array or float inside an argument, with
    paths spelled as yota-src spells them."""
    if _is_float_leaf(value):
        yield path, value
    elif isinstance(value, np.ndarray) or _is_generator(value) or value is None:
        return
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for field in value._fields:
            yield from leaves(getattr(value, field), path + (field,))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from leaves(item, path + (index,))
    elif dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            yield from leaves(getattr(value, field.name), path + (field.name,))
    elif hasattr(value, "__dict__") and not isinstance(value, _NOT_STRUCTS):
        for key, item in vars(value).items():
            yield from leaves(item, path + (key,))


def _get(value, path):
    for step in path:
        if isinstance(value, (dict, list)) or (isinstance(value, tuple)
                                                and not isinstance(step, str)):
            value = value[step]
        else:
            value = getattr(value, step)
    return value


def _with(value, path, new):
    """`value` with the leaf at `path` replaced by `new` (containers that can
    change are changed in place, tuples are rebuilt)."""
    if not path:
        return new
    step, rest = path[0], path[1:]
    child = _get(value, (step,))
    replaced = _with(child, rest, new)
    if isinstance(value, (dict, list)):
        value[step] = replaced
    elif isinstance(value, tuple) and isinstance(step, str):
        value = value._replace(**{step: replaced})
    elif isinstance(value, tuple):
        value = value[:step] + (replaced,) + value[step + 1:]
    else:
        object.__setattr__(value, step, replaced)
    return value


def gradient_of(g_arg, arg, path):
    """The gradient yota-src gave for one leaf (None: it gave none)."""
    if not path and (_is_float_leaf(arg)):
        return g_arg
    if g_arg is None:
        return None
    return g_arg.get(path)


# --- finite differences -------------------------------------------------------

def numerical_gradient(model, args, index, path):
    """Central differences for one leaf, each evaluation on a deep copy of
    the arguments (a random generator passed in draws the same noise)."""
    leaf = _get(args[index], path) if path else args[index]
    base = np.array(leaf, dtype=np.float64)
    out = np.zeros_like(base)
    scale = np.finfo(np.float64).eps ** (1 / 3)
    for position in np.ndindex(base.shape):
        step = scale * max(1.0, abs(base[position]))
        values = []
        for sign in (1, -1):
            moved = base.copy()
            moved[position] += sign * step
            new_leaf = moved if isinstance(leaf, np.ndarray) else type(leaf)(moved[()])
            fresh = list(copy.deepcopy(args))
            fresh[index] = _with(fresh[index], path, new_leaf)
            value = call(model, model.loss, *fresh)
            values.append(float(np.asarray(value, dtype=np.float64).reshape(())))
        out[position] = (values[0] - values[1]) / (2 * step)
    return out


def compare_gradients(model, args, grads, where: str) -> None:
    rtol, atol = getattr(model, "RTOL", 1e-5), getattr(model, "ATOL", 1e-7)
    problems = []
    checked = 0
    for index, arg in enumerate(args):
        for path, _ in leaves(arg):
            checked += 1
            numeric = numerical_gradient(model, args, index, path)
            analytic = gradient_of(grads[index], arg, path)
            if analytic is None:
                analytic = np.zeros_like(numeric)
            analytic = np.asarray(analytic, dtype=np.float64)
            if analytic.shape != numeric.shape:
                problems.append(f"argument {index} {path}: gradient of shape {analytic.shape}, "
                                f"the argument has shape {numeric.shape}")
                continue
            if not np.allclose(analytic, numeric, rtol=rtol, atol=atol):
                error = np.abs(analytic - numeric)
                worst = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
                problems.append(f"argument {index} {path}: max abs error {error.max():.3g} at "
                                f"{worst} (analytic {analytic[worst]!r}, numeric "
                                f"{numeric[worst]!r})")
    if problems:
        raise WrongAnswer(f"WRONG gradient at {where}\n  " + "\n  ".join(problems))
    if not checked:
        raise AssertionError(f"{model.__name__}.example() has no float leaf to check")


def compare_value(value, native, where: str) -> None:
    if not np.allclose(value, native, rtol=VALUE_RTOL, atol=VALUE_ATOL):
        raise WrongAnswer(f"WRONG value at {where}\n  yota-src {value!r}, native {native!r}")


def _same_gradients(args, ours, reference, where: str) -> None:
    problems = []
    for index, arg in enumerate(args):
        for path, _ in leaves(arg):
            a, b = gradient_of(ours[index], arg, path), gradient_of(reference[index], arg, path)
            if (a is None) != (b is None) or (a is not None and not np.allclose(
                    a, b, rtol=VALUE_RTOL, atol=VALUE_ATOL)):
                problems.append(f"argument {index} {path}: {a!r} vs {b!r}")
    if problems:
        raise WrongAnswer(f"WRONG gradient at {where}\n  " + "\n  ".join(problems))


# --- the checks ---------------------------------------------------------------

def check_grad(model, timings: dict | None = None) -> None:
    """ys.grad at example(0), then at example(1) with the gradient cached
    (and, for a model with data-dependent control flow, back at example(0)
    with both paths cached)."""
    dynamic = getattr(model, "DYNAMIC", False)
    random = _draws_outside_arguments(model)
    first = None
    for seed in (0, 1):
        where = f"example({seed})"
        args = model.example(seed)
        native = call(model, model.loss, *args)
        start = time.perf_counter()
        value, g = call(model, ys.grad, model.loss, *args, dynamic=dynamic and seed == 1)
        if timings is not None and seed == 0:
            timings["generation"] = time.perf_counter() - start
        first = first or (args, tuple(g))
        compare_value(value, native, where)
        compare_gradients(model, args, tuple(g), where)
        if random or any(_is_generator(a) for a in args):
            check_draws(model, args, where, dynamic)
        else:
            try:
                ys.check_grad(model.loss, *args, rtol=getattr(model, "RTOL", 1e-5),
                              atol=getattr(model, "ATOL", 1e-7))
            except AssertionError as error:
                raise WrongAnswer(f"WRONG gradient from ys.check_grad at {where}\n{error}") \
                    from error
    if dynamic:
        args, g = first
        where = "example(0) after example(1)"
        value, again = call(model, ys.grad, model.loss, *args, dynamic=True)
        compare_value(value, call(model, model.loss, *args), where)
        _same_gradients(args, tuple(again), g, where)


def check_draws(model, args, where: str, dynamic: bool, calls: int = 3) -> None:
    """A training loop calls ys.grad again and again with one generator: each
    call must draw what the same call of the function draws."""
    ours, theirs = copy.deepcopy(args), copy.deepcopy(args)
    reset = getattr(model, "reset", lambda: None)
    reset()
    values = [ys.grad(model.loss, *ours, dynamic=dynamic)[0] for _ in range(calls)]
    reset()
    for number, value in enumerate(values):
        compare_value(value, model.loss(*theirs),
                      f"{where}, call {number + 1} with one generator")


def check_saved(model, directory: pathlib.Path) -> None:
    """simplegrad at example(0), saved, imported, run on the examples. A model
    marked UNSAVEABLE (it draws from a generator only this process has) must
    be refused with UnsaveableError instead."""
    name = model.__name__.rpartition(".")[2]
    args = model.example(0)
    df = call(model, ys.simplegrad, model.loss, *args)
    path = directory / f"grad_{name}.py"
    if getattr(model, "UNSAVEABLE", False):
        from yota_src.errors import UnsaveableError

        try:
            df.save(path)
        except UnsaveableError:
            return
        raise WrongAnswer(f"WRONG: the gradient of {name} was saved; it draws from a "
                          "generator the saved module cannot name")
    df.save(path)
    spec = importlib.util.spec_from_file_location(f"saved_grad_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # grad_<name of f>: grad_loss, or grad_lambda for `loss = lambda ...`
    function = getattr(module, "grad_loss", None) or module.grad_lambda
    seeds = (0,) if getattr(model, "DYNAMIC", False) else (0, 1)
    for seed in seeds:
        where = f"example({seed}), saved module"
        args = model.example(seed)
        native = call(model, model.loss, *args)
        try:
            value, *grads = call(model, function, *args)
        except ValueError:
            # right only where the example is outside what the module was generated
            # for (another number of steps, say): then simplegrad writes another one
            if seed and call(model, ys.simplegrad, model.loss, *args).source != df.source:
                continue
            raise
        compare_value(value, native, where)
        _, g = call(model, ys.grad, model.loss, *args)
        _same_gradients(args, grads, tuple(g), where)
