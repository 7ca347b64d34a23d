"""What a compiled gradient is specialised to in its arguments: their
parameter names, leaves and struct layouts (`Signature`), and the hashable
key a cache finds a compiled gradient by (`signature_key`).

Values and paths themselves are core.values; what the trace read from
outside the arguments is specialisation.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from yota_src.core.values import (
    DIFF,
    GENERATOR,
    STATIC,
    DaskSample,
    Leaf,
    Rows,
    children,
    describe_dtype,
    describe_leaf,
    flatten,
    is_array,
    kind_of,
    path_expression,
)
from yota_src.ir.specialisation import snapshot


@dataclass
class Signature:
    """Parameter names of the primal and the leaves of each positional argument."""

    function_name: str
    params: list[str]
    leaves: list[list[Leaf]]
    structs: list[bool]
    module: str = ""
    qualname: str = ""
    source_hash: str = ""
    outside: tuple = ()  # what was read from outside the arguments, as docstring lines
    library: str = "numpy"  # the arrays' library: "numpy", or "cupy" (array_library.py)
    dims: Any = None  # the trace's DimFacts (ir/dims.py): sizes read at run time, if any

    containers: list[Container] = field(default_factory=list)
    key: Any = None  # signature_key of the arguments

    @classmethod
    def of(cls, function_name: str, params: list[str], args: tuple, **info) -> Signature:
        key = signature_key(args)  # first: it refuses arguments that contain themselves
        leaves = [[describe_leaf(p, v) for p, v in flatten(arg)] for arg in args]
        structs = [kind_of(arg) == "struct" or isinstance(arg, Rows) for arg in args]
        containers = [node for i, arg in enumerate(args) for node in _layouts(i, arg)]
        return cls(function_name, params, leaves, structs, containers=containers, key=key,
                   **info)

    def dask_leaves(self) -> list[tuple[int, tuple]]:
        """(index, path) of each leaf that is a Dask array (traced on its
        sample, tracing/samples.py), in order."""
        return [(index, leaf.path) for index, leaves in enumerate(self.leaves)
                for leaf in leaves if leaf.type is DaskSample]

    def leaf_expression(self, index: int, path: tuple) -> str:
        return path_expression(self.params[index], path)

    def stacked(self, index: int, path: tuple) -> bool:
        """Whether the leaf is a list read as the rows of one array (values.Rows)."""
        return any(leaf.path == path and leaf.type is Rows for leaf in self.leaves[index])

    def dropping_last(self) -> Signature:
        """This signature without its last positional parameter."""
        index = len(self.params) - 1
        return dataclasses.replace(
            self, params=self.params[:index], leaves=self.leaves[:index],
            structs=self.structs[:index],
            containers=[node for node in self.containers if node.index != index])

    def with_argument(self, name: str, arg) -> Signature:
        """This signature with one more positional parameter, `name`, taking
        arguments like `arg` (a pullback's cotangent: vjp)."""
        index = len(self.params)
        return dataclasses.replace(
            self, params=[*self.params, name],
            leaves=[*self.leaves, [describe_leaf(p, v) for p, v in flatten(arg)]],
            structs=[*self.structs, kind_of(arg) == "struct"],
            containers=[*self.containers, *_layouts(index, arg)],
            key=(self.key, signature_key((arg,))))

    def describe_leaf(self, index: int, leaf: Leaf, shapes=None) -> str:
        """What a Rows leaf is specialised to: `list of L float64 (N,) arrays`."""
        return _rows_text(leaf, shapes(index, leaf.path, leaf.shape) if shapes else None)

    def describe(self, free_counts: frozenset = frozenset(), shapes=None) -> str:
        """Each leaf and what it is specialised to; an argument in
        `free_counts` has a trip count read from it at run time: any int will
        do, or an array with any number of rows. `shapes(index, path, shape)`
        spells an array's shape with its run-time sizes by name: `(8, n)`."""
        parts = []
        for i, leaves in enumerate(self.leaves):
            for leaf in leaves:
                free = i in free_counts and not leaf.path
                what = leaf.describe() if not free else "any int (a trip count)" \
                    if leaf.kind == STATIC else leaf.describe_rows()
                if shapes is not None and not free and leaf.shape and not leaf.scalar \
                        and leaf.kind != STATIC and leaf.kind != GENERATOR:
                    what = f"{describe_dtype(leaf.dtype)} {shapes(i, leaf.path, leaf.shape)}"
                if leaf.type is Rows:
                    what = self.describe_leaf(i, leaf, shapes)
                parts.append(f"{self.leaf_expression(i, leaf.path)} {what}")
        return "; ".join(parts)


def _rows_text(leaf: Leaf, shape: str | None) -> str:
    """`list of L float64 (N,) arrays`, from the stack's shape spelled `(L, N)`."""
    if shape is None:
        count, rest = str(leaf.shape[0]), str(leaf.shape[1:])
    else:
        count, _, rest = shape[1:-1].rstrip(",").partition(", ")
        rest = f"({rest},)" if rest and "," not in rest else f"({rest})"
    return f"list of {count} {describe_dtype(leaf.dtype)} {rest} arrays"


@dataclass(frozen=True)
class Container:
    """A struct on the way to leaves, and what reading its children relies on:
    its type, and its dict keys in order, its length, or its attribute names."""

    index: int  # the positional argument it is in
    path: tuple
    type: type
    keys: tuple  # dict keys, attribute names, or list/tuple indices

    @property
    def kind(self) -> str:
        """'dict', 'sequence' (list or tuple) or 'object' (attributes)."""
        if issubclass(self.type, dict):
            return "dict"
        if issubclass(self.type, (list, tuple)) and not hasattr(self.type, "_fields"):
            return "sequence"
        return "object"


def _layouts(index: int, value, path: tuple = ()):
    """The Container of every struct in `value`, parents before their children."""
    if kind_of(value) != "struct":
        return
    steps = children(value)
    yield Container(index, path, type(value), tuple(key for (_, key), _ in steps))
    for step, child in steps:
        yield from _layouts(index, child, path + (step,))


def signature_key(args: tuple, shapes: bool = True):
    """A hashable summary of everything a compiled gradient is specialised to
    (`shapes=False`: but the arrays' sizes, each array's rank kept)."""
    try:
        return tuple(_key(arg, shapes) for arg in args)
    except RecursionError:
        raise ValueError("an argument contains itself (a list appended to itself, an object "
                         "referring back to its owner), or nests deeper than Python's "
                         "recursion limit: pass the arrays it holds instead") from None


def _key(value, shapes: bool = True):
    if isinstance(value, Rows):
        return (list, _key(value.array, shapes))
    if is_array(value):
        return (type(value), value.shape if shapes else value.ndim, value.dtype)
    kind = kind_of(value)
    if kind in (DIFF, GENERATOR):
        return (type(value),)
    if kind == STATIC:
        try:
            hash(value)
            return (type(value), value)
        except TypeError:  # a set, a slice (before 3.12), ...: by contents, as guarded
            return snapshot(value)
    return (type(value),) + tuple((step, _key(child, shapes)) for step, child in children(value))
