"""The registry of primitives: adjoint templates and non-differentiable functions.

The tables live here, below every stage, so the tracer (is this function a
primitive?) and the reverse sweep (its template) read them without knowing
of each other. The templates fill them: they are plugins, imported by name
the first time a table is read (`_load`), so no stage imports them.

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

import ast
import importlib
import importlib.util
import inspect
import math
import sys
import threading
from collections.abc import Callable

import numpy as np

from yota_src.core.compiled_text import run_registered
from yota_src.core.primitives import display_name

# The plugins: the package of built-in templates, imported by name the first
# time a table is read (the tracer decides by it which functions to unroll).
TEMPLATES = "yota_src.templates"

_templates: dict = {}
_nondifferentiable: set = set()
_nodiff_args: dict = {}
_refused: dict = {}  # fn -> why a gradient through it is refused
_expressions: dict = {}  # fn -> {param: expression} from ys.diffrule
_loaded = False
_loading = threading.RLock()

# Families of rules for optional libraries, each loaded once the user's code
# has imported the module it covers: yota-src itself never imports SciPy, and
# code that uses scipy.special has imported it before any of its calls is traced.
OPTIONAL_FAMILIES = {
    "scipy.special": f"{TEMPLATES}.scipy_special",
    "scipy.stats": f"{TEMPLATES}.scipy_stats",
    "scipy.signal": f"{TEMPLATES}.scipy_signal",
    "scipy.linalg": f"{TEMPLATES}.scipy_linalg",
    "scipy.integrate": f"{TEMPLATES}.scipy_integrate",
}
_waiting = dict(OPTIONAL_FAMILIES)  # module -> family not loaded yet


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
    found = _rule_parameters(fn)
    if found is None:
        raise TypeError(f"{getattr(fn, '__name__', fn)} has no inspectable signature; "
                        "register a template with @ys.diffrule(fn) instead")
    params, listed, defaults = found
    if wrt not in params:
        raise TypeError(f"{display_name(fn)} has no parameter {wrt!r} "
                        f"(it has {', '.join(params)})")
    clash = [name for name in params if name in ("y", "dy")]
    if clash:
        raise TypeError(
            f"{display_name(fn)} has a parameter named {clash[0]!r}, which an expression rule "
            "uses for the result (y) or its gradient (dy): register a template instead, "
            f"@ys.diffrule({display_name(fn)}) on a function (dy_out, y_out, "
            f"{', '.join(params)}) that assigns d<parameter>")
    ast.parse(expr, "<diffrule>", "eval")  # a SyntaxError names the expression now, not later
    rules = _expressions.setdefault(fn, {})
    rules[wrt] = expr
    name = f"{fn.__name__}_rule"
    body = "".join(f"    d{param} = {text}\n" for param, text in rules.items())
    text = f"def {name}(dy, y, {listed}):\n{body}"
    namespace = {"__name__": "<diffrule>", "np": np, "math": math,
                 **getattr(fn, "__globals__", {}), **defaults}  # a ufunc has no globals
    for rule in rules.values():
        namespace.update(_modules_named(ast.parse(rule, "<diffrule>", "eval"), namespace,
                                        {"y", "dy", *params}))
    template = run_registered(text, f"rule {display_name(fn)}", namespace)[name]
    _templates[fn] = template
    return template


def _rule_parameters(fn: Callable) -> tuple[list[str], str, dict] | None:
    """The names an expression rule may read (every parameter of `fn`, its
    keyword-only ones too), the template's parameter list, which takes
    them as `fn` does, with its defaults, and the defaults by the names the
    list reads them from; None without a signature to read."""
    if isinstance(fn, np.ufunc):  # its inputs, not out=, where=, ...
        names = parameter_names(fn)
        return names, ", ".join(names), {}
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    listed, defaults, starred = [], {}, False
    for p in parameters:
        if p.kind == p.VAR_POSITIONAL:
            listed.append(f"*{p.name}")
            starred = True
            continue
        if p.kind == p.VAR_KEYWORD:
            listed.append(f"**{p.name}")
            continue
        if p.kind == p.KEYWORD_ONLY and not starred:
            listed.append("*")
            starred = True
        text = p.name
        if p.default is not p.empty:
            defaults[f"_default_{p.name}"] = p.default
            text += f"=_default_{p.name}"
        listed.append(text)
    return [p.name for p in parameters], ", ".join(listed), defaults


def _modules_named(tree: ast.AST, namespace: dict, local: set) -> dict:
    """Modules an expression reaches by a dotted name it does not otherwise
    define (`scipy.special.digamma(x)`): imported, each by the longest prefix
    that is a module, so the rule runs whatever the function's globals hold
    (a ufunc has none); the generated module imports what the rule calls."""
    found = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in local or node.id in namespace \
                or node.id in found or importlib.util.find_spec(node.id) is None:
            continue
        dotted = [node.id, *reversed(parts)]
        for length in range(len(dotted), 0, -1):
            try:
                importlib.import_module(".".join(dotted[:length]))
                break
            except ImportError:
                continue
        found[node.id] = sys.modules[node.id]
    return found


def parameter_names(fn: Callable) -> list[str] | None:
    """The parameters a call passes by position; for a ufunc, its inputs
    (`x`, or `x1, x2`), without `out`."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        if isinstance(fn, np.ufunc):
            return ["x"] if fn.nin == 1 else [f"x{i + 1}" for i in range(fn.nin)]
        return None
    names = [p.name for p in signature.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:fn.nin] if isinstance(fn, np.ufunc) else names


def check_template_parameters(fn: Callable, template: Callable) -> None:
    """A user's template takes `fn`'s parameters by `fn`'s names, in `fn`'s
    order: one named otherwise would be handed another argument, or none at
    all and keep its default, which is a silently wrong gradient. TypeError
    naming the parameter, where it does not."""
    try:
        theirs = list(inspect.signature(fn).parameters.values())
        mine = list(inspect.signature(template).parameters.values())[2:]
    except (TypeError, ValueError):  # a ufunc or builtin: nothing to compare with
        return
    names = [p.name for p in theirs if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [p.name for p in theirs if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    for place, param in enumerate(mine):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name not in names:
            problem = f"a parameter {param.name!r}, which {display_name(fn)} has not"
        elif param.kind != param.KEYWORD_ONLY and (
                place >= len(positional) or positional[place] != param.name):
            problem = f"{param.name!r} in another place than {display_name(fn)} has it"
        else:
            continue
        raise TypeError(
            f"the template {getattr(template, '__name__', template)} takes {problem}: a "
            f"template's parameters after (dy, y) are {display_name(fn)}'s, by their names "
            f"and in their order ({', '.join(names)}), and **kw takes the rest")


def as_rule_arguments(fn: Callable, rule_params: list[str], args: tuple,
                      kwargs: dict) -> tuple[tuple, dict]:
    """The call's arguments laid out for a rule taking `rule_params`: those at
    positions where the rule's parameter has another name than `fn`'s pass by
    `fn`'s name instead (np.sum's fourth is `out`, its rule's fourth
    `keepdims`), so a rule never reads one argument as another. An `out` of
    None, as NumPy's default, is nothing to differentiate. Parameters that
    only go by position (operator.getitem's, math's) are the rule's to name."""
    if "out" in kwargs and kwargs["out"] is None:  # NumPy's default, by keyword
        kwargs = {key: value for key, value in kwargs.items() if key != "out"}
    if isinstance(fn, np.ufunc):  # `out` by position after the inputs: None, or refused
        extra = args[fn.nin:]
        return (args[:fn.nin], kwargs) if extra and all(a is None for a in extra) \
            else (args, kwargs)
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return args, kwargs
    if len(args) > len(parameters):
        return args, kwargs  # (the rule's binding refuses too many)
    names = [p.name for p in parameters]
    agree = next((i for i, (name, param) in enumerate(zip(names, rule_params))
                  if name != param), min(len(names), len(rule_params)))
    moved = {name: value for name, value in zip(names[agree:], args[agree:])
             if not (name == "out" and value is None)}
    if not agree or len(args) <= agree or set(moved) & set(kwargs) or any(
            p.kind != p.POSITIONAL_OR_KEYWORD for p in parameters[agree:len(args)]):
        return args, kwargs  # (not agree: the rule names its parameters its own way)
    return args[:agree], {**moved, **kwargs}


def nodiff(fn: Callable, *argnames: str) -> None:
    """No gradient flows into the parameters `argnames` of `fn`: the result is
    piecewise constant in them (Yota's `@nodiff`). A float reaching such a
    parameter gets no gradient code, and no NoDiffRuleError for the missing
    rule.

    Returns None. Caches: the declaration goes into the process-wide
    registry, added to earlier ones for `fn`; gradients `grad` cached before
    keep their code. Raises nothing: a name `fn` has no parameter for is
    not checked, so spell it as `fn`'s signature does.

    Example:

        >>> import numpy as np
        >>> import yota_src as ys
        >>> def clip_at(x, limit):
        ...     return np.minimum(x, limit)
        >>> ys.nodiff(clip_at, "limit")
    """
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
    if _loaded and not _imported_since():
        return
    with _loading:
        if not _loaded:
            importlib.import_module(TEMPLATES)
            _loaded = True
        for module, family in list(_waiting.items()):
            if module in sys.modules:
                importlib.import_module(family)
                del _waiting[module]


def _imported_since() -> bool:
    """Has the user's code imported a module whose rules are not loaded yet?"""
    return any(module in sys.modules for module in tuple(_waiting))


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
