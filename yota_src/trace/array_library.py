"""Which array library the arguments live in, and code spelled for it.

CuPy mirrors NumPy's namespace, so one trace and one set of templates serve
both. The trace runs on the host, on NumPy copies of the device arrays: every
rule, pass and guard is then the tested NumPy code, and what the trace reads
of values (shapes, branch outcomes, counts) does not depend on the device.
The module written from it is then respelled for CuPy, `np.exp` as `cp.exp`,
and each name it uses is looked up in the CuPy that is imported, so a
function CuPy lacks is refused when the code is generated, not when it runs.

CuPy is never imported here: an argument that is a CuPy array means the
user has imported it already, and `cupy.get_array_module` (as CuPy advises
for code serving both libraries) says which library an array belongs to.
"""

from __future__ import annotations

import importlib
import io
import sys
import tokenize
import types

import numpy as np

from yota_src.core.values import flatten, is_array, path_expression, rebuild
from yota_src.errors import UnsupportedSyntaxError, YotaError
from yota_src.ir.specialisation import Dependency, describe

NUMPY, CUPY = "numpy", "cupy"
DEVICE_PACKAGES = frozenset({"cupy", "cupyx"})  # whose functions the host trace maps to NumPy's

# Host spellings whose device counterpart has another name, or another
# module: CuPy has no ufunc.at in older versions, and cupyx.scatter_add
# behaves as np.add.at does.
_DEVICE_SPELLINGS = {"np.add.at": "cupyx.scatter_add"}
# SciPy's modules, found on the device under cupyx.scipy.
_SCIPY = "scipy."


class MixedArrayLibraries(YotaError, TypeError):
    """NumPy and CuPy arrays among the arguments of one call: no generated
    module runs on both. A TypeError, as a wrong argument type is."""


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
    """NUMPY or CUPY: where the arguments' arrays live. Arrays of both are
    refused, naming one of each: no generated code can run on both."""
    first: dict[str, str] = {}
    for index, arg in enumerate(args):
        for path, leaf in flatten(arg):
            if not is_array(leaf):
                continue
            library = CUPY if device_module(leaf) is not None else NUMPY
            name = params[index] if index < len(params) else f"argument {index}"
            first.setdefault(library, path_expression(name, path))
    if len(first) > 1:
        raise MixedArrayLibraries(
            f"{first[CUPY]} is a CuPy array and {first[NUMPY]} a NumPy array: the generated "
            "code runs on one library",
            hint="Move the arrays to one of them first: cupy.asarray(a) puts a NumPy array on "
                 "the device, cupy.asnumpy(a) brings one back.")
    return CUPY if CUPY in first else NUMPY


def on_host(args: tuple) -> tuple:
    """The arguments with every device array copied to a NumPy array (the
    structs around them mirrored), for the trace."""
    return tuple(rebuild(arg, lambda _path, leaf: to_host(leaf)) for arg in args)


def to_host(value):
    """A device array's NumPy copy; anything else as it is."""
    module = device_module(value)
    return value if module is None else module.asnumpy(value)


def in_library(value, library: str):
    """The NumPy arrays in `value` (a structure of them) put in `library`:
    what the trace computed on the host, given back as a call on the
    device would give it."""
    if library == NUMPY:
        return value
    module = sys.modules[library]
    return rebuild(value, lambda _path, leaf: module.asarray(leaf)
                   if isinstance(leaf, np.ndarray) else leaf)


def device_constants(constants: dict, library: str) -> tuple[dict, tuple]:
    """The arrays an in-process module binds (its globals' arrays, written
    into it too), copied to the device, and a Dependency on each one's
    contents: the NumPy code reads the live array, and the device code a
    copy, so a change made in place must make that copy stale."""
    if library == NUMPY:
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


def refuse_device_value(value, name: str | None, loc) -> None:
    """A CuPy array read from outside the arguments cannot be traced on the
    host nor frozen into the code: it is refused, naming it."""
    if device_module(value) is None:
        return
    raise UnsupportedSyntaxError(
        f"{name or 'an array'} is a CuPy array read from outside the arguments (a global, a "
        "closure variable, a default or an attribute)", loc,
        hint="Pass it to the function as an argument (or a field of a struct argument), "
             "which the generated code then reads on the device.")


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


# -- the generated module, respelled ---------------------------------------

def respell(source: str, generated_name: str) -> str:
    """`source`, a module written for NumPy, written for CuPy: `np.` names
    become `cp.` names (`cupy.` where the module already uses the name `cp`),
    SciPy's become cupyx.scipy's, and np.add.at becomes cupyx.scatter_add.
    Each name is looked up in the imported CuPy, and one it lacks is refused.
    Comments and strings (the user's source lines, messages) stay as written."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    spelling = _Spelling({token.string for token in tokens if token.type == tokenize.NAME},
                         generated_name)
    edits = []  # (start, end, text), in order
    index = 0
    while index < len(tokens):
        chain, end = _dotted(tokens, index)
        if _respelled(chain) and not _after_dot(tokens, index) and not _in_import(tokens, index):
            edits.append((tokens[index].start, tokens[end - 1].end,
                          spelling.of(".".join(chain))))
            index = end
        else:
            index += 1
    return _with_imports(_edited(source, edits), spelling.imports)


class _Spelling:
    """How the device module names each host name, and what it imports for
    that: `cp.exp` (import cupy as cp), `cupyx.scatter_add` (import cupyx);
    a module whose name the code already uses for something else (a
    parameter called cupyx) is imported under another."""

    def __init__(self, taken: set, generated_name: str):
        self.taken, self.generated_name = set(taken), generated_name
        self.spelled: dict[str, str] = {}
        self.imports: dict[str, str | None] = {}  # module -> alias, None for its own name
        self.cupy = next((each for each in ("cp", CUPY) if each not in taken), None)
        if self.cupy is None:
            raise UnsupportedSyntaxError(
                f"{generated_name} uses both `cp` and `cupy` as names, which its CuPy module "
                "needs", hint="Rename the parameter or variable called cp or cupy.")

    def of(self, host: str) -> str:
        if host not in self.spelled:
            self.spelled[host] = self._spell(host)
        return self.spelled[host]

    def _spell(self, host: str) -> str:
        full = _DEVICE_SPELLINGS.get(host) or (
            f"cupyx.{host}" if host.startswith(_SCIPY) else f"{CUPY}{host[2:]}")
        if _resolve(full) is None:
            raise UnsupportedSyntaxError(
                f"{self.generated_name} needs {host}, and the CuPy imported here has no {full}",
                hint="Generate the gradient for NumPy arrays (cupy.asnumpy(a) for each "
                     "argument), or write the function with operations CuPy has.")
        if full.startswith(f"{CUPY}."):
            self.imports[CUPY] = self.cupy if self.cupy != CUPY else None
            return self.cupy + full[len(CUPY):]
        module, name = full.rsplit(".", 1)
        if module not in self.imports:
            self.imports[module] = None if "cupyx" not in self.taken else self._alias(module)
        alias = self.imports[module]
        return full if alias is None else f"{alias}.{name}"

    def _alias(self, module: str) -> str:
        alias = module.replace(".", "_")
        while alias in self.taken:
            alias += "_"
        self.taken.add(alias)
        return alias


def _dotted(tokens: list, index: int) -> tuple[list[str], int]:
    """The dotted name starting at `index` (`np.linalg.solve`) and the index
    after it; a token that is no name gives an empty chain."""
    if tokens[index].type != tokenize.NAME:
        return [], index + 1
    chain, end = [tokens[index].string], index + 1
    while end + 1 < len(tokens) and tokens[end].string == "." \
            and tokens[end + 1].type == tokenize.NAME:
        chain.append(tokens[end + 1].string)
        end += 2
    return chain, end


def _respelled(chain: list[str]) -> bool:
    return len(chain) > 1 and chain[0] == "np" or len(chain) > 2 and chain[0] == "scipy"


def _after_dot(tokens: list, index: int) -> bool:
    return index > 0 and tokens[index - 1].string == "."


def _in_import(tokens: list, index: int) -> bool:
    return index > 0 and tokens[index - 1].string in ("import", "from")


def _resolve(dotted: str):
    """What `dotted` names in CuPy's tree, importing its modules (cupyx.scipy
    .special) as needed; None where it names nothing."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            value = getattr(value, part, None)
            if value is None:
                return None
        return value
    return None


def _edited(source: str, edits: list) -> str:
    """`source` with each (start, end, text) edit made: positions are
    tokenize's (row from 1, column), and a chain never spans lines."""
    lines = source.splitlines(keepends=True)
    for (row, start), (_, end), text in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + text + line[end:]
    return "".join(lines)


def _with_imports(source: str, imports: dict) -> str:
    """The import block for the respelled names: cupy (and the cupyx modules
    used) in place of numpy, and SciPy's modules only where still named."""
    lines = source.split("\n")
    block = [i for i, line in enumerate(lines) if line.startswith("import ")]
    if not block:
        return source
    rest = [line for i, line in enumerate(lines) if i not in block]
    used = _module_names("\n".join(rest))
    kept = [lines[i] for i in block if _still_used(lines[i], used)]
    device = [f"import {module}" + (f" as {alias}" if alias else "")
              for module, alias in sorted(imports.items(), key=lambda item: item[0] != CUPY)]
    return "\n".join(rest[:block[0]] + device + kept + rest[block[0]:])


def _module_names(body: str) -> set[str]:
    """The names `body` reads that are not attributes (`scipy` in
    `scipy.special.erf`, not in `cupyx.scipy.special.erf`)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(body).readline))
    return {token.string for index, token in enumerate(tokens)
            if token.type == tokenize.NAME and not _after_dot(tokens, index)}


def _still_used(line: str, used: set) -> bool:
    """Whether an `import` line of the NumPy module is still needed: numpy
    and SciPy's modules only where the respelled code still names them."""
    words = line.split()
    if words[1] != "numpy" and not words[1].startswith(_SCIPY):
        return True
    return (words[-1] if "as" in words else words[1].split(".")[0]) in used
