"""What a function must return to have a gradient: a scalar loss, or with
`has_aux` the pair `(loss, aux)`.

Anything else is refused once the trace has run, at the user's `return`
line, saying what came back and how to make it a loss.
"""

from __future__ import annotations

import numpy as np

from yota_src.core.values import is_array
from yota_src.differentiate import cotangents
from yota_src.ir.signature import Signature
from yota_src.tracing.traced import values_of


def require_aux(value, signature: Signature, returned_at) -> None:
    """With has_aux, `f` returns `(loss, aux)`: aux made of arrays, numbers,
    strings and None, in tuples, lists and dicts, which the generated code
    can return as they are."""
    problem = None
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        problem = "it returned " + (f"a {type(value).__name__} of {len(value)}"
                                    if isinstance(value, (tuple, list)) else
                                    type(values_of(value)).__name__)
    else:
        odd = next(cotangents.odd_leaves(value[1]), None)
        if odd is not None:
            problem = (f"its aux holds a {type(odd).__module__}.{type(odd).__qualname__}, which "
                       "the generated code cannot return as it is; return its arrays in a "
                       "tuple or dict instead")
    if problem is None:
        return
    _refuse(signature, returned_at, f"must return a pair (loss, aux) with has_aux=True; "
                                    f"{problem}.")


def require_scalar(value, signature: Signature, returned_at) -> None:
    plain = values_of(value)
    if _is_scalar_loss(plain):
        return
    shape = np.shape(plain) if is_array(plain) or isinstance(plain, (float, int)) else None
    described = "None" if plain is None else (
        f"a {type(plain).__name__} of {len(plain)}" if isinstance(plain, (tuple, list, dict))
        else f"{type(plain).__name__} of shape {shape}")
    hint = ""
    if plain is None:
        hint = " Did it forget to `return` the loss?"
    elif isinstance(plain, (tuple, list, dict)):
        hint = " Return the loss alone, or pass has_aux=True to return (loss, aux)."
    elif shape:
        hint = " Reduce it to a scalar, e.g. with np.sum or np.mean."
    _refuse(signature, returned_at, "must return a scalar (a float or a size-1 array) to be "
                                    f"differentiated; it returned {described}.{hint}")


def _refuse(signature: Signature, returned_at, what: str) -> None:
    """ValueError: `f() (model.py:5) <what>`, placed at the `return` line."""
    where = f" ({returned_at.short})" if returned_at is not None else ""
    error = ValueError(f"{signature.function_name}(){where} {what}")
    if returned_at is not None:
        error.location = returned_at
    raise error


def _is_scalar_loss(value) -> bool:
    """A real number, or a real array of size 1."""
    if isinstance(value, (bool, str, tuple, list, dict)) or value is None:
        return False
    try:
        dtype = np.result_type(value)
    except TypeError:
        return False
    return np.size(value) == 1 and np.issubdtype(dtype, np.number) \
        and not np.issubdtype(dtype, np.complexfloating)
