"""Struct-like arguments as leaves with paths, and back.

A path is a tuple of steps `(ATTR, name)` or `(ITEM, key)`; users see only
the keys (`('layers', 0, 'W')`). Leaves are classified once:

* DIFF: float arrays and floats, the values gradients are taken for;
* DATA: integer and boolean arrays (indices, masks): traced, no gradient;
* STATIC: everything else (ints, strings, None, functions): folded into the
  unrolled code and guarded.
"""

from __future__ import annotations

import dataclasses
import enum
import keyword
import re
import types
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from yota_src.errors import place

ATTR, ITEM = "attr", "item"
DIFF, DATA, STATIC, GENERATOR = "diff", "data", "static", "generator"

_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, np.dtype, np.ufunc, str, bytes)


def is_array(value) -> bool:
    """An array of NumPy or of a library following its interface (CuPy, Dask).
    Asked of the type, so a class (np.float32) or an object whose attribute
    lookup raises something else (a dict with `__getattr__ = dict.__getitem__`)
    is no array."""
    if isinstance(value, np.ndarray):
        return True
    kind = type(value)
    if kind is type or not hasattr(kind, "shape"):
        return False
    return hasattr(kind, "__array_namespace__") or kind.__module__.partition(".")[0] == "cupy" \
        or is_dask(value)


def is_dask(value) -> bool:
    """A dask.array.Array (Dask is imported by whoever made one)."""
    kind = type(value)
    return kind.__name__ == "Array" and kind.__module__.startswith("dask.array")


def kind_of(value) -> str:
    """DIFF, DATA, STATIC, GENERATOR, or 'struct' for containers to recurse into."""
    if isinstance(value, Rows):
        return kind_of(value.array)
    if isinstance(value, (np.random.Generator, np.random.RandomState)):
        return GENERATOR  # drawn from by the generated code, whichever one is passed
    if is_array(value):
        return DIFF if np.issubdtype(value.dtype, np.inexact) else DATA
    if isinstance(value, (float, complex, np.inexact)):
        return DIFF
    if value is None or isinstance(value, (bool, int, np.integer, np.bool_, enum.Enum) + _OPAQUE):
        return STATIC
    if isinstance(value, (dict, list, tuple)) or dataclasses.is_dataclass(value):
        return "struct"
    if type(value).__module__.split(".")[0] in ("builtins", "numpy", "functools", _OWN):
        return STATIC  # (yota-src's own: a gradient function is called, never walked)
    if (hasattr(value, "__dict__") or hasattr(type(value), "__slots__")) \
            and _defined_in_python(type(value)):
        return "struct"
    return STATIC


_OWN = __name__.partition(".")[0]  # this package's objects
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: made by a class statement


def _defined_in_python(cls: type) -> bool:
    """Only objects of Python classes are mirrored field by field: one built on
    a C type (an open file, a lock) cannot be copied without its constructor."""
    return all(klass.__flags__ & _HEAP_TYPE for klass in cls.__mro__[:-1])


def children(value) -> list[tuple[tuple[str, Any], Any]]:
    """The (step, child) pairs of a struct-like value, in a stable order."""
    if isinstance(value, dict):
        return [((ITEM, key), item) for key, item in value.items()]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return [((ATTR, name), getattr(value, name)) for name in value._fields]
    if isinstance(value, (list, tuple)):
        return [((ITEM, i), item) for i, item in enumerate(value)]
    names = list(getattr(value, "__dict__", {}))
    for klass in type(value).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [s for s in slots if s != "__dict__"]
    return [((ATTR, name), getattr(value, name)) for name in names if hasattr(value, name)]


class Rows:
    """A list of arrays of one type, shape and dtype, read as the rows of one
    array: one argument leaf, whose length is a size like any other, so that
    the generated code serves lists of any length (it stacks the list):
    `array` is the stack of the caller's arrays."""

    __slots__ = ("array",)

    def __init__(self, items: list):
        self.array = np.stack(items)


def stackable(value) -> bool:
    """A list of two or more NumPy arrays of numbers, alike in shape and dtype,
    each there once (an array twice is one object, not two rows)."""
    if type(value) is not list or len(value) < 2 or type(value[0]) is not np.ndarray \
            or not value[0].ndim:
        return False
    first = value[0]  # (not masks: a count each selects differs from row to row)
    return first.dtype.kind in "iuf" and first.dtype.isnative and all(
        type(item) is np.ndarray and item.shape == first.shape and item.dtype == first.dtype
        for item in value) and len({id(item) for item in value}) == len(value)


def containers_in(value):
    """`value` and every struct in it, parents first (where stackable lists may be)."""
    if kind_of(value) == "struct":
        yield value
        for _, child in children(value):
            yield from containers_in(child)


def with_rows(value):
    """`value` with each stackable list in it (itself, or a struct's part) a Rows."""
    if stackable(value):
        return Rows(value)
    if kind_of(value) != "struct":
        return value
    return _rebuilt(value, children(value), [with_rows(child) for _, child in children(value)])


def flatten(value, path: tuple = ()) -> list[tuple[tuple, Any]]:
    """All (path, leaf) pairs below `value`; a leaf itself gives [((), value)]."""
    if kind_of(value) != "struct":
        return [(path, value)]
    out = []
    for step, child in children(value):
        out += flatten(child, path + (step,))
    return out


def rebuild(value, replace: Callable[[tuple, Any], Any], path: tuple = ()):
    """A copy of `value` whose leaves are `replace(path, leaf)`.

    Objects are copied without running their constructors, so any class with
    plain attributes can be mirrored for unrolling. A part in which no leaf
    was replaced is the object itself, so identity (`mode is Mode.TRAIN`,
    `opt is DEFAULT`) and equality defined by identity hold as in a call.
    """
    if kind_of(value) != "struct":
        return replace(path, value)
    steps = children(value)
    return _rebuilt(value, steps, [rebuild(child, replace, path + (step,))
                                   for step, child in steps])


def _rebuilt(value, steps: list, new: list):
    """`value` with its children (`steps`) replaced by `new`: itself where none changed."""
    new_children = list(zip((step for step, _ in steps), new))
    if all(new is old for (_, new), (_, old) in zip(new_children, steps)):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)._make(child for _, child in new_children)
    if isinstance(value, (list, tuple)):
        items = [child for _, child in new_children]
        return type(value)(items) if type(value) in (list, tuple) else _copy_with(value, items)
    if isinstance(value, dict):
        mirror = _empty_like(value, dict)
        dict.update(mirror, value)
        dict.update(mirror, {step[1]: child for step, child in new_children})
        return mirror
    mirror = object.__new__(type(value))
    if hasattr(value, "__dict__"):
        mirror.__dict__.update(value.__dict__)
    for (_, name), child in new_children:
        object.__setattr__(mirror, name, child)
    return mirror


def _copy_with(value, items):
    if isinstance(value, tuple):
        mirror = tuple.__new__(type(value), items)
        _copy_attributes(value, mirror)
        return mirror
    mirror = _empty_like(value, list)
    list.extend(mirror, items)
    return mirror


def _empty_like(value, base: type):
    """An empty `base` of value's own subclass with its instance attributes,
    made without the copy protocol (which a `__getattr__` that raises KeyError,
    as `__getattr__ = dict.__getitem__` does, breaks before Python 3.11)."""
    mirror = base.__new__(type(value))
    _copy_attributes(value, mirror)
    return mirror


def _copy_attributes(value, mirror) -> None:
    try:
        vars(mirror).update(vars(value))
    except TypeError:  # no instance dictionary
        pass


def get_path(value, path: tuple):
    for kind, key in path:
        value = getattr(value, key) if kind == ATTR else value[key]
    return value


def set_path(root, path: tuple, new):
    """Store `new` at `path`, in place where the container allows it.

    Returns the root, rebuilt where an immutable container (tuple,
    namedtuple, frozen dataclass) was on the way.
    """
    if not path:
        return new
    (kind, key), rest = path[0], path[1:]
    child = getattr(root, key) if kind == ATTR else root[key]
    new_child = set_path(child, rest, new)
    if rest and new_child is child:
        return root
    if isinstance(root, tuple):
        if hasattr(root, "_fields"):
            return root._replace(**{key: new_child})
        return root[:key] + (new_child,) + root[key + 1:]
    if kind == ITEM:
        root[key] = new_child
    elif dataclasses.is_dataclass(root) and root.__dataclass_params__.frozen:
        return dataclasses.replace(root, **{key: new_child})
    else:
        setattr(root, key, new_child)
    return root


def user_path(path: tuple) -> tuple:
    """The path as users see it: keys only."""
    return tuple(key for _, key in path)


def path_expression(base: str, path: tuple) -> str:
    """The leaf's path as text for messages and docstrings: `m.layers[0].W`
    (codegen spells paths as code itself, keys as literals)."""
    text = base
    for kind, key in path:
        if kind == ITEM:
            text += f"[{describe_value(key)}]"
        elif is_attribute_name(key):
            text += f".{key}"
        else:
            text = f"getattr({text}, {key!r})"
    return text


def is_attribute_name(name) -> bool:
    """Whether `obj.name` reads the attribute `name`: an identifier, no
    keyword, unchanged by the NFKC normalisation Python applies to names."""
    return (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
            and unicodedata.normalize("NFKC", name) == name)


def describe_dtype(dtype) -> str:
    """`float64`; the exact string where the name would hide something
    (`>f8` for a big-endian array, `<U5` for strings)."""
    dtype = np.dtype(dtype)
    try:
        if np.dtype(dtype.name) == dtype and dtype.isnative:
            return dtype.name
    except TypeError:
        pass
    return str(dtype)


def path_name(base: str, path: tuple) -> str:
    """A name for the leaf: `m_layers_0_W`, `d_C_data` for `d['C:\\data']`
    (each run of other characters one `_`; codegen makes it an identifier)."""
    parts = [base] + [key if isinstance(key, str) else describe_value(key) for _, key in path]
    return re.sub(r"\W+", "_", "_".join(parts)).strip("_") or base


# --- what a tape is specialised to ---------------------------------------

@dataclass(frozen=True)
class Leaf:
    path: tuple
    kind: str  # DIFF | DATA | STATIC
    shape: tuple | None = None
    dtype: Any = None
    scalar: bool = False  # a Python/NumPy scalar rather than an array
    value: Any = None  # STATIC leaves only
    type: Any = None  # the array or scalar type, which the traced code was run with

    def describe(self) -> str:
        if self.kind == STATIC:
            value = self.value
            by_identity = value is None or isinstance(value, bool) \
                or qualified_name(value) is not None or type(value).__eq__ is object.__eq__
            return f"{'is' if by_identity else '=='} {describe_value(value)}"
        if self.kind == GENERATOR:
            return f"a {self.type.__name__}"
        if self.scalar:
            return "float" if self.type in (float, np.float64) else self.type.__name__
        return f"{describe_dtype(self.dtype)} {self.shape}"

    def describe_rows(self) -> str:
        """An array whose length a trip count is read from: any number of rows."""
        rest = ", ".join(str(size) for size in self.shape[1:])
        return f"{describe_dtype(self.dtype)} (any,{' ' + rest if rest else ''})"


class DaskSample(np.ndarray):
    """A NumPy array cut from a Dask array, standing for it in the trace
    (tracing/samples.py): its leaf's type, so the code takes a Dask array there."""


def describe_leaf(path: tuple, value) -> Leaf:
    kind = kind_of(value)
    if kind == STATIC:
        return Leaf(path, STATIC, value=value)
    if kind == GENERATOR:
        return Leaf(path, GENERATOR, type=type(value))
    if isinstance(value, Rows):
        return Leaf(path, kind, value.array.shape, value.array.dtype, type=Rows)
    scalar = not is_array(value)
    return Leaf(path, kind, np.shape(value) if not scalar else (),
                np.asarray(value).dtype if scalar else value.dtype, scalar, type=type(value))


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def describe_value(value) -> str:
    """A static value as text that is the same in every run: sets sorted,
    functions and classes by qualified name, never a memory address (which
    would make two runs of `yota-src gen` write different files)."""
    if isinstance(value, (set, frozenset)):
        items = ", ".join(sorted(describe_value(item) for item in value))
        if isinstance(value, frozenset):
            return f"frozenset({{{items}}})" if value else "frozenset()"
        return f"{{{items}}}" if value else "set()"
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        items = [describe_value(item) for item in value]
        if isinstance(value, list):
            return f"[{', '.join(items)}]"
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    if isinstance(value, dict) and type(value) is dict:
        return "{" + ", ".join(f"{describe_value(k)}: {describe_value(v)}"
                               for k, v in value.items()) + "}"
    name = qualified_name(value)
    if name is not None and "<" in name and hasattr(value, "__code__"):
        code = value.__code__  # a lambda or local function: say where it was defined
        return f"{name} ({place(code.co_filename, code.co_firstlineno)})"
    if name is not None:
        return name
    if type(value).__repr__ is object.__repr__:
        return f"<{qualified_name(type(value))} object>"
    return _ADDRESS.sub("", repr(value))


def qualified_name(value) -> str | None:
    """`module.qualname` of a function, class, ufunc or module; None for other values."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, np.ufunc):
        return f"numpy.{value.__name__}"
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        return None
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if qualname is None:
        return None
    module = getattr(value, "__module__", None)
    owner = getattr(value, "__self__", None)
    if module is None and owner is not None and not isinstance(owner, types.ModuleType):
        return None  # a bound builtin method: its owner is an object, described by repr
    return f"{module}.{qualname}" if module and module != "builtins" else qualname
