"""A module written for NumPy, respelled for CuPy or Dask.

The trace runs on the host and codegen writes NumPy; for CuPy arguments the
text is then respelled token by token, `np.exp` as `cp.exp`, SciPy's names
as cupyx.scipy's, `np.add.at` as `cupyx.scatter_add`, comments and strings
left as written. Each respelled name is looked up in the imported CuPy, so a
function CuPy lacks is refused when the code is generated, not when it runs.

For Dask arrays, NumPy's functions dispatch to Dask's through the array
protocols, and stay as they are; each is looked up in the imported
dask.array all the same, and one it lacks is refused (Dask would compute
the whole array into the client's memory to run it). What makes an array
from sizes alone, which no protocol can dispatch (`np.zeros((M, N))`), is
respelled `da.zeros`, as is the guards' `dask.array.Array`.
"""

from __future__ import annotations

import importlib
import io
import tokenize

import numpy as np

from yota_src.errors import UnsupportedSyntaxError
from yota_src.tracing.array_library import CUPY, DASK

# Host spellings whose device counterpart has another name, or another
# module: CuPy has no ufunc.at in older versions, and cupyx.scatter_add
# behaves as np.add.at does.
_DEVICE_SPELLINGS = {"np.add.at": "cupyx.scatter_add"}
# SciPy's modules, found on the device under cupyx.scipy.
_SCIPY = "scipy."

def respell(source: str, generated_name: str, library: str = CUPY,
            numpy_only: frozenset = frozenset()) -> str:
    """`source`, a module written for NumPy, written for CuPy: `np.` names
    become `cp.` names (`cupy.` where the module already uses the name `cp`),
    SciPy's become cupyx.scipy's, and np.add.at becomes cupyx.scatter_add.
    Each name is looked up in the imported CuPy, and one it lacks is refused.
    For Dask (`library`), as the module says; `numpy_only`, the names the
    code calls on NumPy values alone, need no Dask counterpart. Comments and
    strings (the user's source lines, messages) stay as written."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    taken = {token.string for token in tokens if token.type == tokenize.NAME}
    spelling = _Spelling(taken, generated_name) if library == CUPY \
        else _DaskSpelling(taken, generated_name, numpy_only)
    edits = []  # (start, end, text), in order
    index = 0
    while index < len(tokens):
        chain, end = _dotted(tokens, index)
        if spelling.respelled(chain) and not _after_dot(tokens, index) \
                and not _in_import(tokens, index):
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

    def respelled(self, chain: list[str]) -> bool:
        return len(chain) > 1 and chain[0] == "np" or len(chain) > 2 and chain[0] == "scipy"

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


class _DaskSpelling(_Spelling):
    """How the Dask module names each NumPy name: as it is where Dask's
    arrays dispatch it (`np.exp`, `np.outer`, `np.float64`), `da.` where
    nothing can (`da.zeros`), and `dask.array.` names under one alias."""

    def __init__(self, taken: set, generated_name: str, numpy_only: frozenset):
        self.taken, self.generated_name = set(taken), generated_name
        self.spelled, self.imports = {}, {}
        self.alias = "da" if "da" not in taken else self._alias("dask.array")
        self.numpy_only = numpy_only

    def respelled(self, chain: list[str]) -> bool:
        return super().respelled(chain) or len(chain) > 2 and chain[:2] == ["dask", "array"]

    def _spell(self, host: str) -> str:
        parts = host.split(".")
        if parts[:2] == ["dask", "array"]:
            return self._dask(parts[2:])
        value = _resolve_host(host)
        if parts[0] == "np" and (isinstance(value, (type, np.dtype, float, int))
                                 or host == "np.newaxis"):
            return host  # a type, a dtype or a constant: the same in Dask's code
        if isinstance(value, np.ufunc) and (len(parts) == 2 or parts[0] == "scipy"):
            return host  # elementwise: Dask's arrays take every ufunc
        if parts[0] == "np" and len(parts) == 2 and parts[1] in _MADE_HERE:
            return self._dask(parts[1:], host)  # (a buffer Dask's values are written into)
        if host in self.numpy_only:
            return host  # (NumPy's, on NumPy values: a weight's, a copy of one)
        if parts[0] == "np" and _resolve(".".join(["dask", "array", *parts[1:]])) is not None:
            return host  # dispatched to Dask's own through the array protocol
        raise self._lacking(host)

    def _dask(self, parts: list[str], host: str | None = None) -> str:
        if _resolve(".".join(["dask", "array", *parts])) is None:
            raise self._lacking(host or ".".join(["dask", "array", *parts]))
        self.imports["dask.array"] = self.alias
        return ".".join([self.alias, *parts])

    def _lacking(self, host: str) -> UnsupportedSyntaxError:
        scatter = " (np.add.at and other scatters write into an array in place)" \
            if host.endswith(".at") else ""
        return UnsupportedSyntaxError(
            f"{self.generated_name} needs {host}, which the Dask imported here has no "
            f"dask.array counterpart of{scatter}",
            hint="Generate the gradient for NumPy arrays (x.compute() for each argument), or "
                 "write the function with operations dask.array has.")


# NumPy's functions that make an array from sizes alone, or from values as
# they are (np.array(t), which would compute a Dask array into memory): no
# array protocol dispatches them, and Dask spells them `da.`
_MADE_HERE = frozenset({"zeros", "ones", "full", "empty", "arange", "eye", "linspace",
                        "identity", "tri", "array", "asarray", "asanyarray"})


def _resolve_host(dotted: str):
    """What `np.linalg.solve` or `scipy.special.erf` names here, or None."""
    root, *parts = dotted.split(".")
    value = np if root == "np" else _resolve(dotted)
    if root == "np":
        for part in parts:
            value = getattr(value, part, None)
    return value


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
    if DASK in "".join(imports):  # beside NumPy, which the Dask module still names
        return "\n".join(rest[:block[0]] + kept + device + rest[block[0]:])
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
