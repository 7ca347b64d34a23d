"""Which array library the arguments live in, and values moved between them.

CuPy mirrors NumPy's namespace, so one trace and one set of templates serve
both. The trace runs on the host, on NumPy copies of the device arrays: every
rule, pass and guard is then the tested NumPy code, and what the trace reads
of values (shapes, branch outcomes, counts) does not depend on the device.
The module written from it is then respelled for CuPy (codegen/respell.py).

Dask arrays are the third library: their data may not fit in the client's
memory, so the trace runs on a small sample of them (samples.py), and the
module, which reads its sizes at run time, serves the whole arrays lazily.
NumPy arrays may sit beside them (small weights, huge data).

Neither CuPy nor Dask is imported here: an argument that is one of their
arrays means the user has imported it already, and `cupy.get_array_module`
(as CuPy advises for code serving both libraries) says which library an
array belongs to.
"""

from __future__ import annotations

import sys
import types

import numpy as np

from yota_src.core.values import flatten, is_array, path_expression, rebuild
from yota_src.errors import UnsupportedSyntaxError, YotaError
from yota_src.ir.specialisation import Dependency, describe
from yota_src.tracing.samples import DaskSample, is_dask

NUMPY, CUPY, DASK = "numpy", "cupy", "dask"
DEVICE_PACKAGES = frozenset({"cupy", "cupyx"})  # whose functions the host trace maps to NumPy's


class MixedArrayLibraries(YotaError, TypeError):
    """NumPy and CuPy arrays among the arguments of one call, or CuPy and
    Dask: no generated module runs on both. A TypeError, as a wrong argument
    type is."""


class UnknownSizes(YotaError, ValueError):
    """A Dask array whose chunk sizes are unknown (after a boolean mask, say):
    the code reads sizes, and Dask says them only once computed."""


def device_module(value) -> types.ModuleType | None:
    """CuPy, where `value` is a CuPy array; None for anything else."""
    if type(value).__module__.partition(".")[0] != CUPY:
        return None
    cupy = sys.modules.get(CUPY)
    if cupy is None:
        return None
    module = cupy.get_array_module(value)
    return None if module is np else module


def is_ndarray(value) -> bool:
    """A NumPy array or a device array (not a NumPy scalar, which NumPy 2
    gives the array API's attributes too)."""
    return isinstance(value, np.ndarray) or device_module(value) is not None


def library_of(params: list[str], args: tuple) -> str:
    """NUMPY, CUPY or DASK: where the arguments' arrays live (Dask where any
    is a Dask array: NumPy ones beside them join its graph). Arrays of NumPy
    and CuPy, or of CuPy and Dask, are refused, naming one of each: no
    generated code runs on both; so are Dask arrays of unknown sizes."""
    first: dict[str, str] = {}
    for index, arg in enumerate(args):
        for path, leaf in flatten(arg):
            if not is_array(leaf):
                continue
            library = CUPY if device_module(leaf) is not None else DASK \
                if is_dask(leaf) or isinstance(leaf, DaskSample) else NUMPY
            if library == DASK and is_dask(leaf):
                _require_dask_leaf(leaf, _named(params, index, path))
            if library not in first:  # (named once: a list of 10,000 arrays is 10,000 leaves)
                first[library] = _named(params, index, path)
    if CUPY in first and len(first) > 1:
        other = NUMPY if NUMPY in first else DASK
        raise MixedArrayLibraries(
            f"{first[CUPY]} is a CuPy array and {first[other]} a {_NAMES[other]} array: the "
            "generated code runs on one library",
            hint="Move the arrays to one of them first: cupy.asarray(a) puts a NumPy array on "
                 "the device, cupy.asnumpy(a) brings one back." if other == NUMPY else
                 "A Dask array of CuPy chunks is not supported: use Dask arrays of NumPy "
                 "chunks, or CuPy arrays alone.")
    return CUPY if CUPY in first else DASK if DASK in first else NUMPY


_NAMES = {NUMPY: "NumPy", CUPY: "CuPy", DASK: "Dask"}


def _named(params: list[str], index: int, path: tuple) -> str:
    return path_expression(params[index] if index < len(params) else f"argument {index}", path)


def _require_dask_leaf(array, name: str) -> None:
    """A Dask array the code can serve: NumPy chunks of known sizes."""
    if device_module(getattr(array, "_meta", None)) is not None:
        raise MixedArrayLibraries(
            f"{name} is a Dask array of CuPy chunks: the generated code runs on one library",
            hint="Use Dask arrays of NumPy chunks, or CuPy arrays alone.")
    if any(size != size for size in array.shape):  # NaN: a size Dask does not know yet
        raise UnknownSizes(
            f"{name} is a Dask array of unknown chunk sizes (shape {array.shape}): the "
            "gradient's code reads its sizes",
            hint=f"Call {name}.compute_chunk_sizes() first (it computes the chunks' "
                 "lengths), or give the sizes when the array is made.")


def on_host(args: tuple) -> tuple:
    """The arguments with every device array copied to a NumPy array, and
    every Dask array's sample (samples.py, made by build) a plain NumPy
    array (the structs around them mirrored), for the trace."""
    return tuple(rebuild(arg, lambda _path, leaf: to_host(leaf)) for arg in args)


def to_host(value):
    """A device array's NumPy copy, a Dask sample as the NumPy array it is;
    anything else as it is."""
    if isinstance(value, DaskSample):
        return value.view(np.ndarray)
    module = device_module(value)
    return value if module is None else module.asnumpy(value)


def in_library(value, library: str):
    """The NumPy arrays in `value` (a structure of them) put in `library`:
    what the trace computed on the host, given back as a call on the
    device would give it. (Dask's are traced on samples, and a value traced
    on them is no part of the whole arrays': see samples.marking.)"""
    if library in (NUMPY, DASK):
        return value
    module = sys.modules[library]
    return rebuild(value, lambda _path, leaf: module.asarray(leaf)
                   if isinstance(leaf, np.ndarray) else leaf)


def device_constants(constants: dict, library: str) -> tuple[dict, tuple]:
    """The arrays an in-process module binds (its globals' arrays, written
    into it too), copied to the device, and a Dependency on each one's
    contents: the NumPy code reads the live array, and the device code a
    copy, so a change made in place must make that copy stale."""
    if library in (NUMPY, DASK):  # (a Dask graph takes NumPy arrays as they are)
        return constants, ()
    copied = tuple(_contents(name, value) for name, value in constants.items()
                   if isinstance(value, np.ndarray))
    return {name: in_library(value, library) for name, value in constants.items()}, copied


def _contents(name: str, array: np.ndarray) -> Dependency:
    frozen = array.copy()
    return Dependency(f"the array {name} (copied to the device)", lambda: array,
                      ("contents", frozen.tobytes()), describe(frozen), listed=False,
                      same=lambda current: np.array_equal(current, frozen))


def like(reference, value):
    """`value`, computed on the host, in `reference`'s library: on the device
    where `reference` is a device array."""
    module = device_module(reference)
    return value if module is None else module.asarray(value)


def refuse_dask(what: str, *values) -> None:
    """What yota-src writes for Dask arrays is a gradient (ys.grad,
    ys.simplegrad): anything else given them refuses, naming itself."""
    if any(is_dask(leaf) for value in values for _, leaf in flatten(value)):
        raise UnsupportedSyntaxError(
            f"{what} over Dask arrays: yota-src writes gradients for Dask arrays (ys.grad, "
            "ys.simplegrad), and nothing else",
            hint="Compute the arrays (x.compute()) to use it on NumPy arrays.")


def refuse_device_value(value, name: str | None, loc) -> None:
    """A CuPy or Dask array read from outside the arguments cannot be traced
    on the host nor frozen into the code: it is refused, naming it."""
    library = CUPY if device_module(value) is not None else DASK if is_dask(value) else None
    if library is None:
        return
    raise UnsupportedSyntaxError(
        f"{name or 'an array'} is a {_NAMES[library]} array read from outside the arguments (a "
        "global, a closure variable, a default or an attribute)", loc,
        hint="Pass it to the function as an argument (or a field of a struct argument), "
             "which the generated code then reads " + (
                 "on the device." if library == CUPY else "lazily, as Dask's."))


def is_device_function(fn) -> bool:
    """A function (or ufunc) of CuPy or cupyx, by its module or its type's."""
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(fn), "__module__", "")
    return module.partition(".")[0] in DEVICE_PACKAGES


def host_function(fn, loc):
    """The NumPy (or SciPy) function a CuPy function of the user's code
    stands for, which the host trace calls and the templates know."""
    found = _device_name(fn)
    if found is None:
        raise UnsupportedSyntaxError(
            f"{getattr(fn, '__qualname__', fn)!s} of CuPy, which no public CuPy module exports "
            "under a NumPy name", loc,
            hint="yota-src traces on the host with NumPy's functions: call the cupy.<name> "
                 "function whose NumPy namesake does the same.")
    module, name = found
    if (module, name) == ("cupyx", "scatter_add"):
        return np.add.at
    if module.partition(".")[0] == "cupyx" and module != "cupyx.scipy" \
            and not module.startswith("cupyx.scipy."):
        raise UnsupportedSyntaxError(
            f"{module}.{name}, a CuPy extension NumPy has no counterpart of", loc,
            hint="yota-src traces on the host with NumPy's functions: write the computation "
                 "with functions NumPy has (np.add.at for cupyx.scatter_add).")
    if module.startswith("cupy.random"):
        raise UnsupportedSyntaxError(
            f"{module}.{name} draws random numbers on the device", loc,
            hint="Draw them outside the function and pass them in as an argument.")
    if name == "get_array_module":
        return host_array_module
    if name == "asnumpy":
        return np.asarray
    host = "scipy" + module[len("cupyx.scipy"):] if module.startswith("cupyx.") \
        else "numpy" + module[len(CUPY):]
    target = sys.modules.get(host)
    value = getattr(target, name, None) if target is not None else None
    if value is None:
        raise UnsupportedSyntaxError(
            f"{module}.{name} has no counterpart in {host}", loc,
            hint=f"yota-src traces on the host with {host}'s functions: use one {host} has.")
    return value


def host_array_module(*_arrays):
    """`cupy.get_array_module` in the host trace, whose arrays are NumPy's:
    the unroller answers NumPy without recording a call."""
    return np


_FOUND: dict = {}  # a CuPy function -> (module, name): each call of it in a trace asks


def _device_name(fn) -> tuple[str, str] | None:
    """(module, name) under which CuPy's public modules export `fn`: found
    once by a scan of those modules, then remembered."""
    if id(fn) in _FOUND:
        return _FOUND[id(fn)][1]
    for module_name, module in sorted(sys.modules.items()):
        if module_name.partition(".")[0] not in DEVICE_PACKAGES or module is None \
                or any(part.startswith("_") for part in module_name.split(".")):
            continue
        for name, value in vars(module).items():
            if value is fn and not name.startswith("_"):
                _FOUND[id(fn)] = (fn, (module_name, name))  # fn kept: its id stays its own
                return module_name, name
    return None
