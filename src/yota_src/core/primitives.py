"""Primitives that are not plain NumPy functions, and naming of primitives.

Generated code cannot import yota-src, so each pseudo-primitive here is
printed by codegen as the NumPy expression it stands for (`a.T`,
`a.astype(float)`, `buffer[index] += values`). They exist so that the tape can
record those expressions as ordinary calls, with ordinary adjoint templates.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import math
import operator
import random
import sys
import warnings
from collections.abc import Iterator

import numpy as np

from yota_src.core import distributions, nested, operators
from yota_src.core.fused import Fused


def T(a):
    """`a.T`"""
    return a.T


def astype(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """`a.astype(dtype, ...)`"""
    return a.astype(dtype, order=order, casting=casting, subok=subok, copy=copy)


def item(a):
    """`a.item()`: the one element of an array as a Python number."""
    return a.item()


def element(a, *index):
    """`a.item(i, j)`: one element of an array as a Python number (passes/scalars.py)."""
    return a.item(*index)


def work_array(slot: int):
    """`work[slot]`: an array the generated code of `ys.grad` keeps from call
    to call and writes temporaries into (passes/work_arrays.py). Never run:
    codegen writes it as an index into the call's set of work arrays."""
    raise AssertionError("work_array is written by codegen, never called")


def tolist(a):
    """`a.tolist()`, for guarding an integer or boolean array read as a list."""
    return a.tolist()


def store_in_argument(index: int, path: tuple, value):
    """`bn_param["running_mean"] = value` (an item or attribute of positional
    argument `index`, reached by `path`): a write the primal makes into an
    object passed in, which generated code makes too. Never run: codegen
    writes it as an assignment."""
    raise AssertionError("store_in_argument is written by codegen, never called")


store_in_argument.effectful = lambda: True  # kept, in order, like a print


def dimension(size):
    """A dimension (ir/dims.py) used as a number, as in `1 / x.shape[0]`:
    codegen writes the expression of the arguments' dimensions it stands for."""
    return int(size)


def joined(value, before=None):
    """The value a name holds after an `if` decided by the data, inside a
    loop (`before`: the one it held before): one op per name, whichever arm
    ran (tracing/branches.py), so that iterations that took other arms still
    line up op for op. The roll pass makes the arms of such iterations one
    branch op and drops the rest."""
    return value


def stop_gradient(value):
    """`value`, through which no gradient flows: an argument of a function
    that is unrolled, declared piecewise constant in that parameter with
    `ys.nodiff` (tracing/calls.py). Codegen writes the value itself."""
    return value


# Pseudo-primitives printed as a method of their first argument: `a.astype(float)`.
METHODS = {astype: "astype", item: "item", element: "item", tolist: "tolist"}


def index_add(buffer, index, values):
    """A copy of `buffer` with `values` added at `index`; repeated indices
    accumulate. Printed in place (`np.add.at` or `+=`) when the buffer is
    fresh and used once, which is how the adjoint of indexing is written."""
    out = np.array(buffer, copy=True)
    if is_basic_index(index):
        out[index] += values
    else:
        np.add.at(out, index, values)
    return out


def index_update(buffer, index, values):
    """A copy of `buffer` with `values` stored at `index`: the functional form
    of `x[index] = values`, printed in place when the buffer is fresh."""
    out = np.array(buffer, copy=True)
    out[index] = values
    return out


# Allocations the adjoint of indexing writes into in place: never shared by
# CSE, and written in place by codegen when their one user is an index store.
FRESH_BUFFERS = (np.zeros, np.zeros_like)
INDEX_STORES = (index_add, index_update)


def returns_new_array(fn) -> bool:
    """Calls of `fn` give an array nothing else refers to, safe to write into."""
    return fn in FRESH_BUFFERS or fn in INDEX_STORES or isinstance(fn, (np.ufunc, Fused)) or (
        fn in operators.SYMBOLS or fn in (np.ones, np.full, np.empty, np.copy, np.array))


def filled(shape: tuple, value, dtype) -> tuple:
    """(function, arguments) that make an array of `shape` and `dtype` holding
    `value` everywhere, as a person writes it: `np.ones(shape)`,
    `np.zeros(shape)`, `np.full(shape, value)`, the dtype named unless float64."""
    value = value.item() if isinstance(value, np.generic) else value
    if value == 1:
        fn, args = np.ones, (shape,)
    elif value == 0 and not math.copysign(1, value) < 0:  # -0.0 stays np.full's
        fn, args = np.zeros, (shape,)
    else:
        fn, args = np.full, (shape, value)
    return fn, args if np.dtype(dtype) == np.float64 else args + (dtype,)


GENERATORS = (np.random.Generator, np.random.RandomState)


def draw(generator, method: str, *args, **kwargs):
    """`generator.method(*args, **kwargs)`: a draw from a generator object
    (an argument, one made in the function, a global), printed as that call."""
    return getattr(generator, method)(*args, **kwargs)


def random_source(fn):
    """The generator a random draw consumes (np.random.normal draws from the
    global RandomState), or None when `fn` draws nothing. np.random.seed
    counts: it changes the state later draws read, so it is kept like one."""
    if isinstance(fn, type) or fn is np.random.default_rng:  # makes a generator, draws nothing
        return None
    if fn is draw:  # the generator is its first argument: is_random_draw says so
        return draw
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.random.RandomState, np.random.Generator, random.Random)):
        return owner
    if getattr(fn, "__name__", None) == "rvs" and distributions.is_distribution(owner):
        return owner.random_state  # scipy.stats.norm.rvs draws from the global RandomState
    module = getattr(fn, "__module__", None)
    if isinstance(module, str) and module.startswith("numpy.random"):
        return np.random.mtrand._rand
    return None


def fstring(*pieces) -> str:
    """`f"..."` holding traced values, printed by codegen as the f-string it
    was: each piece is a literal string or (value, conversion, spec)."""
    parts = []
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece)
        else:
            value, conversion, spec = piece
            converted = {"s": str, "r": repr, "a": ascii}.get(conversion, lambda v: v)(value)
            parts.append(format(converted, spec))
    return "".join(parts)


class StandardStream:
    """`sys.stdout` or `sys.stderr` as a print's `file=`: generated code names
    the stream, which is looked up at each call, as the primal's `sys.stderr` is."""

    def __init__(self, name: str):
        self.name = name

    def write(self, text: str):
        return getattr(sys, self.name).write(text)

    def flush(self):
        return getattr(sys, self.name).flush()

    def __eq__(self, other):
        return isinstance(other, StandardStream) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"sys.{self.name}"


_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}


def is_output(fn) -> bool:
    """print, warnings.warn and logging: what the user sees, so generated code
    repeats it, in order, at every call (and tracing does not)."""
    if fn is print or fn is warnings.warn:
        return True
    name = getattr(fn, "__name__", None)
    if name not in _LOG_METHODS:
        return False
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, logging.Logger):
        return True
    return getattr(logging, name, None) is fn


def has_effect(fn) -> bool:
    """Calls that are never folded, merged or dropped: random draws (each
    advances a generator) and output; a rolled loop whose body has one, or
    checks its data."""
    if callable(getattr(fn, "effectful", None)):
        return fn.effectful()
    return is_output(fn) or is_random_draw(fn)


def is_random_draw(fn) -> bool:
    """Each call gives new values and advances a generator: never folded,
    merged or dropped."""
    return random_source(fn) is not None


def is_ufunc_at(fn) -> bool:
    """`np.add.at` and its kind: the method `at` of a ufunc, which writes in place."""
    return isinstance(getattr(fn, "__self__", None), np.ufunc) and fn.__name__ == "at"


@contextlib.contextmanager
def arguments_read_only(structure) -> Iterator[bool]:
    """Make the writeable arrays in a nested argument structure read-only while
    a primitive runs; yields whether there were any. Flags are restored after,
    owners before views (a view cannot be made writeable over a read-only base).
    An array over memory that no array owns (a C extension's result, such as
    scipy.linalg.sqrtm's) could not be made writeable again, so it is left as it is."""
    arrays = [a for a in arrays_in(structure) if a.flags.writeable and _restorable(a)]
    for array in arrays:
        array.flags.writeable = False
    try:
        yield bool(arrays)
    finally:
        for array in sorted(arrays, key=lambda a: a.base is not None):
            array.flags.writeable = True


def _restorable(array: np.ndarray) -> bool:
    """Can `array` be made writeable again once it is read-only? NumPy allows
    it where the memory belongs to an array, or to an object offering a
    writeable buffer."""
    while isinstance(array.base, np.ndarray) and not array.flags.owndata:
        array = array.base
    if array.flags.owndata or array.base is None:
        return True
    try:
        return not memoryview(array.base).readonly
    except TypeError:
        return False


def arrays_in(structure) -> Iterator[np.ndarray]:
    """The arrays inside a nested structure of tuples, lists and dicts."""
    return nested.leaves(structure, lambda value: isinstance(value, np.ndarray))


def is_basic_index(index) -> bool:
    """Basic indexing (ints, slices, None, ...) selects each element at most once."""
    items = index if isinstance(index, tuple) else (index,)
    return all(item is None or item is Ellipsis or isinstance(item, (int, np.integer, slice))
               or _integer_scalar(item) for item in items)


def _integer_scalar(item) -> bool:
    """A 0-d integer value or op (a rolled loop's counter): one position."""
    dtype = getattr(item, "dtype", None)
    return getattr(item, "shape", None) == () and dtype is not None \
        and np.issubdtype(dtype, np.integer)


_MODULES = (("np", np), ("np.linalg", np.linalg), ("np.fft", np.fft), ("np.random", np.random),
            ("np.lib.stride_tricks", np.lib.stride_tricks), ("math", math))

# SciPy's modules with rules, named where the user's code has imported them
# (yota-src itself never imports SciPy). Generated code imports each one it
# names: `import scipy.special`.
SCIPY_MODULES = ("scipy.special", "scipy.stats", "scipy.signal", "scipy.linalg",
                 "scipy.integrate")
# A function SciPy exports under two names is written under the common one.
PREFERRED_NAMES = {"psi": "digamma"}


def function_path(fn) -> str | None:
    """How generated code names `fn` (`np.sum`, `np.add.at`, `math.exp`,
    `scipy.special.gammaln`, `scipy.stats.norm.logpdf`), or None."""
    name = getattr(fn, "__name__", None)
    if name is None:
        return None
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, np.ufunc):
        return f"np.{owner.__name__}.{name}"
    with warnings.catch_warnings():  # np.bytes and friends warn when looked up
        warnings.simplefilter("ignore")
        for prefix, module in _MODULES:
            if getattr(module, name, None) is fn:
                return f"{prefix}.{name}"
        if getattr(builtins, name, None) is fn:
            return name
        return _scipy_path(fn, name, owner)


def _scipy_path(fn, name: str, owner) -> str | None:
    """`scipy.special.gammaln`, or `scipy.stats.norm.logpdf` for a method of
    a distribution SciPy exports (not `rv_continuous.logpdf`)."""
    if owner is not None and not isinstance(owner, type(sys)):
        distribution = distributions.public_name(owner)
        if distribution is not None and getattr(owner, name, None) == fn:
            return f"scipy.stats.{distribution}.{name}"
        return None
    for module_name in SCIPY_MODULES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for alias in (PREFERRED_NAMES.get(name), name):
            if alias is not None and getattr(module, alias, None) is fn:
                return f"{module_name}.{alias}"
    return None


def display_name(fn) -> str:
    """A short name for tape listings."""
    if fn in operators.SYMBOLS or fn is operator.getitem:
        return fn.__name__.strip("_")
    if fn is T:
        return "T"
    return function_path(fn) or getattr(fn, "__qualname__", None) or repr(fn)
