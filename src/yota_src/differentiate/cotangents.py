"""The cotangent a pullback takes (`ys.vjp`): one more argument of the
generated code, shaped like the function's value.

`pullback(dvalue)` is the gradient of `sum(value * dvalue)`: the reverse
sweep starts from each leaf of the value with the matching leaf of
`dvalue`, instead of from 1 for a scalar loss. So the cotangent is an input
of the tape like any argument: a float array or float where the value has
one, `None` where the value has something no gradient flows from (an
integer array, a string), in the same tuples, lists and dicts.
"""

from __future__ import annotations

import numpy as np

from yota_src.core import nested
from yota_src.core.values import rebuild
from yota_src.ir.signature import Signature
from yota_src.tracing import Unroller, array_library
from yota_src.tracing.traced import Traced


def attach(unroller: Unroller, signature: Signature, value) -> tuple[Signature, tuple]:
    """The signature with the cotangent parameter added, and the forward
    tape's output: `(value, cotangent)`, the cotangent's leaves its inputs."""
    odd = next(odd_leaves(value), None)
    if odd is not None:
        raise ValueError(f"{signature.function_name}() returned a "
                         f"{type(odd).__module__}.{type(odd).__qualname__}, which vjp cannot "
                         "take a cotangent of: return arrays and floats, or tuples, lists and "
                         "dicts of them")
    example = nested.map_leaves(value, _example_cotangent,
                                lambda leaf: not isinstance(leaf, (tuple, list, dict)))
    if example is None or not any(True for _ in _pairs(value, example)):
        raise ValueError(f"{signature.function_name}() returned no float array or float that "
                         "depends on its arguments: vjp has nothing to pull back")
    name = next(name for name in ("dout", "dvalue", "d_out", "cotangent")
                if name not in signature.params)
    signature = signature.with_argument(name, example)
    index = len(signature.params) - 1
    recorder = unroller.recorder
    cotangent = rebuild(example, lambda path, leaf: leaf if leaf is None else recorder.input(
        index, path, leaf, signature.leaf_expression(index, path)))
    return signature, (recorder.refs(value, unroller.loc), recorder.refs(cotangent, unroller.loc))


def seeds(output: tuple) -> list:
    """(value op, cotangent op) for each leaf of the value a cotangent meets."""
    return list(_pairs(*output))


def _example_cotangent(leaf):
    return one_like(leaf.value) if isinstance(leaf, Traced) else None


def is_float(value) -> bool:
    """A float, a NumPy float scalar or a float array: what a gradient flows through."""
    return isinstance(value, (float, np.floating)) or (
        array_library.is_ndarray(value) and np.issubdtype(value.dtype, np.floating))


def one_like(value):
    """A cotangent of ones for `value`, or None where no gradient flows from it:
    1.0 for a float (np.float64 too: either is taken), one of its type for
    another NumPy float (float32 stays), ones for a float array."""
    if not is_float(value):
        return None
    if array_library.is_ndarray(value):
        return array_library.like(value, np.ones(value.shape, value.dtype))
    return 1.0 if isinstance(value, float) else value.dtype.type(1.0)


def _pairs(value, cotangent):
    if cotangent is None:
        return
    if isinstance(cotangent, (tuple, list)):
        for item, dual in zip(value, cotangent):
            yield from _pairs(item, dual)
    elif isinstance(cotangent, dict):
        for key, dual in cotangent.items():
            yield from _pairs(value[key], dual)
    else:
        yield value, cotangent


def odd_leaves(value):
    """What a returned value holds beside arrays, numbers, text, None and
    plain tuples, lists and dicts: what generated code cannot return as it is."""
    if isinstance(value, Traced) or value is None or isinstance(
            value, (bool, int, float, str, bytes, np.ndarray, np.generic)):
        return
    if type(value) in (tuple, list) or type(value) is dict:
        for item in (value.values() if type(value) is dict else value):
            yield from odd_leaves(item)
        if type(value) is dict:
            yield from (key for key in value if not isinstance(key, (str, int, bool, float)))
        return
    yield value

