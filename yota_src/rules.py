"""The registry of primitives: adjoint templates and non-differentiable functions.

A template is a plain Python function `template(dy, y, *primal_params)` whose
body assigns `d<param>` for each differentiable input; the unroller runs it
on the forward values, so a rule is written once, as readable NumPy.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

_templates: dict = {}
_nondifferentiable: set = set()
_nodiff_args: dict = {}
_loaded = False


def adjoint(*primitives) -> Callable:
    """Register the decorated template as the adjoint of each primitive."""

    def register(template: Callable) -> Callable:
        for primitive in primitives:
            _templates[primitive] = template
        return template

    return register


def nondifferentiable(*functions) -> None:
    """Primitives whose results carry no gradient (comparisons, argmax, ...)."""
    _nondifferentiable.update(functions)


def nodiff(fn: Callable, argname: str) -> None:
    """No gradient flows into the parameter `argname` of `fn`."""
    _nodiff_args.setdefault(fn, set()).add(argname)


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        importlib.import_module("yota_src.templates")


def _lookup(table, fn):
    try:
        return table.get(fn) if isinstance(table, dict) else fn in table
    except TypeError:  # unhashable callables are never registered
        return None


def template_for(fn) -> Callable | None:
    _load()
    return _lookup(_templates, fn)


def is_nondifferentiable(fn) -> bool:
    _load()
    return bool(_lookup(_nondifferentiable, fn))


def is_primitive(fn) -> bool:
    """Registered in either table: recorded as one op, never inlined."""
    return template_for(fn) is not None or is_nondifferentiable(fn)


def nodiff_args(fn) -> set:
    return _lookup(_nodiff_args, fn) or set()
