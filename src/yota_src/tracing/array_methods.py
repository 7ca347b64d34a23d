"""A traced array's methods (`x.sum(axis=0)`, `x.reshape(n, -1)`,
`rng.normal(size=3)`, `x.item()`): each call recorded as the NumPy function
it stands for; methods that change the array in place are refused."""

from __future__ import annotations

import operator

import gast
import numpy as np

from yota_src.core import primitives
from yota_src.errors import MutationError, UnsupportedSyntaxError
from yota_src.tracing.source import node_text
from yota_src.tracing.traced import Traced, values_of

ARRAY_METHODS = {
    name: getattr(np, name) for name in (
        "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "cumsum",
        "cumprod", "clip", "dot", "ravel", "squeeze", "swapaxes", "repeat", "take", "round",
        "trace", "diagonal", "all", "any", "argsort", "conj", "copy", "nonzero")
}
ARRAY_METHODS["flatten"] = np.ravel
IN_PLACE_METHODS = {"sort", "fill", "put", "itemset", "resize", "partition", "setfield"}


class ArrayMethod:
    """`x.sum` for a traced `x`: calling it records the matching NumPy function."""

    def __init__(self, target: Traced, name: str):
        self.target = target
        self.name = name

    def __call__(self, *args, **kwargs):  # from native callers such as map()
        unroller = self.target.unroller
        return unroller.array_methods.call(self, args, kwargs,
                                           *(unroller.native or (None, None)))


class ArrayMethods:
    """Calls of a traced value's methods."""

    def __init__(self, unroller):
        self.unroller = unroller

    def call(self, method: ArrayMethod, args, kwargs, node, frame):
        x, name = method.target, method.name
        primitive = self.unroller.primitive
        if name == "reshape":
            shape = args[0] if len(args) == 1 else tuple(args)
            return primitive(np.reshape, (x, shape), kwargs)
        if name == "transpose":
            axes = args[0] if len(args) == 1 else (tuple(args) or None)
            return primitive(np.transpose, (x,) if axes is None else (x, axes), kwargs)
        if isinstance(x.value, primitives.GENERATORS):  # rng.normal(size=3): a draw from it
            if name == "spawn":
                raise UnsupportedSyntaxError(
                    "rng.spawn() inside the differentiated function",
                    self.unroller.location_of(node, frame),
                    hint="Spawning moves the generator's seed sequence on, which cannot be "
                         "rewound, so the trace would leave it spawned twice: spawn the child "
                         "generators outside and pass them in.")
            return primitive(primitives.draw, (x, name, *args), kwargs)
        if name == "astype":
            plain = values_of((args, kwargs))
            if isinstance(x.value, np.ndarray) and \
                    primitives.astype(x.value, *plain[0], **plain[1]) is x.value:
                return x  # copy=False and nothing to cast: the very array, as in NumPy
            return primitive(primitives.astype, (x,) + tuple(args), kwargs)
        if name == "item":
            return self.item(x, args, kwargs, node, frame)
        if name == "tolist":
            if np.issubdtype(x.op.dtype, np.inexact):  # each element keeps its gradient
                return self.scalars_of(x)
            receiver = node.func.value if isinstance(getattr(node, "func", None),
                                                     gast.Attribute) else None
            return self.unroller.decisions.concretize(x, primitives.tolist, receiver, frame)
        if name == "clip" and len(args) == 1 and "a_max" not in kwargs and "max" not in kwargs:
            args = (args[0], None)  # `x.clip(0)`: the method takes one bound, np.clip both
        if name in ARRAY_METHODS:
            return primitive(ARRAY_METHODS[name], (x,) + tuple(args), kwargs)
        if name in IN_PLACE_METHODS:
            receiver = node_text(node.func.value) if isinstance(
                getattr(node, "func", None), gast.Attribute) else "x"
            raise MutationError(f"{receiver}.{name}() changes the array in place",
                                self.unroller.location_of(node, frame),
                                hint=f"Use the function that returns a new array, "
                                     f"e.g. np.{name}({receiver}).")
        raise UnsupportedSyntaxError(
            f"the array method .{name}() is not supported", self.unroller.location_of(node, frame),
            hint=f"Call the NumPy function instead, e.g. np.{name}(x, ...).")

    def item(self, x: Traced, args, kwargs, node, frame):
        """`x.item()`, `x.item(i)`, `x.item(i, j)`: one element, a Python number."""
        primitive = self.unroller.primitive
        if kwargs or not all(type(arg) is int for arg in args):
            raise UnsupportedSyntaxError(
                "x.item() with other than int positions", self.unroller.location_of(node, frame),
                hint="Index the array (x[i, j]) and call .item() on the element.")
        if len(args) == 1 and np.ndim(x.value) != 1:  # a position in the flattened array
            x = primitive(np.ravel, (x,), {})
        if args:  # `x.item(i)`, as generated code reads elements (passes/scalars.py)
            x = primitive(operator.getitem, (x, args if len(args) > 1 else args[0]), {})
        return primitive(primitives.item, (x,), {})

    def scalars_of(self, x: Traced):
        """`x.tolist()` of a float array: nested lists of its elements, each a
        traced Python number."""
        if np.ndim(x.value) == 0:
            return self.unroller.primitive(primitives.item, (x,), {})
        return [self.scalars_of(self.unroller.primitive(operator.getitem, (x, i), {}))
                for i in range(len(x.value))]
