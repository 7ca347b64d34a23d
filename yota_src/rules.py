"""The registry of primitives: adjoint templates and non-differentiable functions.

A template is a plain Python function `template(dy, y, *primal_params)` whose
body assigns `d<param>` for each differentiable input; the unroller runs it
on the forward values, so a rule is written once, as readable NumPy.

"No gradient" is declared at the narrowest level that is true:
`nondifferentiable(fn)` when the result is piecewise constant in every
argument (comparisons, np.floor, argmax); `nodiff(fn, "arg", ...)` when only
those arguments are (np.full_like's `a`, np.copysign's `x2`), the others
having a template; `refused(fn, reason)` when a gradient exists but cannot
be given exactly (random draws in their parameters): a float that reaches
one is a NoDiffRuleError with the reason, never a silent zero.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable

from .loader import run_registered

_templates: dict = {}
_nondifferentiable: set = set()
_nodiff_args: dict = {}
_refused: dict = {}  # fn -> why a gradient through it is refused
_expressions: dict = {}  # fn -> {param: expression} from ys.diffrule
_loaded = False
_loading = threading.RLock()


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


def expression_rule(fn: Callable, wrt: str, expr: str) -> Callable:
    """Register `d<wrt> = expr` for `fn`, in which `y` is the result, `dy` the
    incoming gradient and `fn`'s parameters are its inputs.

    The expressions given for one function so far are written into one
    template, compiled from text registered with linecache, so the unroller
    reads it like any other template.
    """
    params = parameter_names(fn)
    if params is None:
        raise TypeError(f"{getattr(fn, '__name__', fn)} has no inspectable signature; "
                        "register a template with @ys.diffrule(fn) instead")
    if wrt not in params:
        raise TypeError(f"{fn.__name__} has no parameter {wrt!r} (it has {', '.join(params)})")
    compile(expr, "<diffrule>", "eval")  # a SyntaxError names the expression now, not later
    rules = _expressions.setdefault(fn, {})
    rules[wrt] = expr
    name = f"{fn.__name__}_rule"
    body = "".join(f"    d{param} = {text}\n" for param, text in rules.items())
    text = f"def {name}(dy, y, {', '.join(params)}):\n{body}"
    label = f"rule {getattr(fn, '__module__', '')}.{fn.__qualname__}"
    template = run_registered(text, label, dict(getattr(fn, "__globals__", {})))[name]
    _templates[fn] = template
    return template


def parameter_names(fn: Callable) -> list[str] | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [p.name for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def nodiff(fn: Callable, *argnames: str) -> None:
    """No gradient flows into the parameters `argnames` of `fn`: the result is
    piecewise constant in them."""
    _nodiff_args.setdefault(fn, set()).update(argnames)


def refused(*functions, reason: str) -> None:
    """Primitives recorded as calls whose gradient is refused, for `reason`,
    when a differentiated value reaches them."""
    for fn in functions:
        _refused[fn] = reason


def _load() -> None:
    """Import the templates once. The flag is set only after they are all
    registered, under a lock, so a concurrent caller never sees a half-filled
    registry (the import itself calls back in here: the lock is re-entrant)."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if not _loaded:
            importlib.import_module("yota_src.templates")
            _loaded = True


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


def refusal_for(fn) -> str | None:
    """Why a gradient through `fn` is refused, if it is."""
    _load()
    return _lookup(_refused, fn)


def is_primitive(fn) -> bool:
    """Registered in any table: recorded as one op, never inlined."""
    return template_for(fn) is not None or is_nondifferentiable(fn) or (
        refusal_for(fn) is not None)


def nodiff_args(fn) -> set:
    _load()
    return _lookup(_nodiff_args, fn) or set()


def registered() -> tuple[dict, set]:
    """The whole registry (primitive -> template, non-differentiable set), for
    the catalogue in docs/rules.md."""
    _load()
    return dict(_templates), set(_nondifferentiable)


def declarations() -> tuple[dict, dict]:
    """Per-argument declarations (fn -> piecewise-constant parameters) and
    refusals (fn -> reason), for the catalogue in docs/rules.md."""
    _load()
    return ({fn: set(names) for fn, names in _nodiff_args.items()}, dict(_refused))
