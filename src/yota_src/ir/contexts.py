"""What the primal computes under: `with np.errstate(...)`, `with
warnings.catch_warnings()` (and the filters set inside it) and `try` blocks.

The unroller runs through these blocks, so the tape is straight-line, but
the generated code must compute under the same conditions: `divide='raise'`
raises, a warning turned into an error is one, and data on which the `try`
body would raise (and the primal take its `except` path) is refused rather
than answered with the library's exception. The blocks open at a statement
are a *context*: a tuple of entries, outermost first, carried in the
`Location` of every op recorded there (so passes keep it, and the gradient
ops of a template inherit their primal op's). Codegen opens and closes the
blocks where the context changes.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import replace

import numpy as np

from yota_src.errors import Location, UnsupportedSyntaxError

ERRSTATE, WARNINGS, TRY = "errstate", "warnings", "try"
_CATEGORIES = ("divide", "over", "under", "invalid")
FILTERS = (warnings.simplefilter, warnings.filterwarnings, warnings.resetwarnings)


def errstate(context: tuple, manager, where: Location | None) -> tuple:
    """`context` inside `with manager:` (an np.errstate): its settings made
    explicit per category over those of the errstate around it, so that one
    `np.errstate(...)` in the generated code says all."""
    if hasattr(manager, "kwargs"):  # NumPy 1
        given, call = dict(manager.kwargs), getattr(manager, "call", None)
    else:
        given = {name: getattr(manager, f"_{name}", None) for name in ("all", *_CATEGORIES)}
        call = getattr(manager, "_call", None)
    given.pop("call", None)
    if callable(call):
        raise UnsupportedSyntaxError(
            "np.errstate(call=...) is not supported", where,
            hint="The generated code cannot name your error callback; use the settings "
                 "'ignore', 'warn', 'raise' or 'print'.")
    settings = dict(errstate_settings(context))
    if given.get("all") is not None:
        settings.update(dict.fromkeys(_CATEGORIES, given["all"]))
    settings.update({name: given[name] for name in _CATEGORIES if given.get(name) is not None})
    return context + ((ERRSTATE, tuple(sorted(settings.items()))),)


def errstate_settings(context: tuple | None) -> tuple:
    """The np.errstate settings in force in `context`, as ((category, setting), ...)."""
    for kind, *rest in reversed(context or ()):
        if kind == ERRSTATE:
            return rest[0]
    return ()


def catch_warnings(context: tuple, manager, where: Location | None) -> tuple:
    """`context` inside `with warnings.catch_warnings():`; what it records is
    refused (the generated code would have to hand the list back)."""
    if getattr(manager, "_record", False):
        raise UnsupportedSyntaxError(
            "warnings.catch_warnings(record=True) is not supported", where,
            hint="The list of warnings would be frozen at the ones the example raised; "
                 "let warnings show, or check the condition with an `if`.")
    spec = getattr(manager, "_filter", None)  # catch_warnings(action=...), Python 3.11+
    filters = ((warnings.simplefilter, tuple(spec), ()),) if spec else ()
    return context + ((WARNINGS, filters),)


def with_filter(context: tuple, function, args: tuple, kwargs: dict,
                where: Location | None) -> tuple:
    """`context` after `warnings.simplefilter(...)` (or filterwarnings,
    resetwarnings) ran in it: the filter belongs to the innermost
    catch_warnings block, which the generated code opens too."""
    for index in range(len(context) - 1, -1, -1):
        kind, *rest = context[index]
        if kind == WARNINGS:
            call = (function, args, tuple(sorted(kwargs.items())))
            return context[:index] + ((WARNINGS, rest[0] + (call,)),) + context[index + 1:]
    raise UnsupportedSyntaxError(
        f"warnings.{function.__name__}() outside `with warnings.catch_warnings():`", where,
        hint="It would change how warnings show for the whole process, which the generated "
             "code does not repeat: put it inside a `with warnings.catch_warnings():` block.")


def attempt(context: tuple, caught: tuple, where: Location | None) -> tuple:
    """`context` inside the body of a `try` whose handlers catch `caught`:
    where the body raises one of them at a later call, the primal would take
    a path the unrolled code does not have."""
    return context + ((TRY, caught, where.short if where else "?"),)


@contextlib.contextmanager
def applied(context: tuple):
    """Run under `context`'s error handling and warning filters (the `try`
    entries change nothing while tracing)."""
    if not context:
        yield
        return
    with np.errstate(**dict(errstate_settings(context))), warnings.catch_warnings():
        for kind, *rest in context:
            if kind == WARNINGS:
                for function, args, kwargs in rest[0]:
                    function(*args, **dict(kwargs))
        yield


def gradient_location(loc: Location | None) -> Location | None:
    """Where gradient ops of an op at `loc` stand: under the primal's error
    handling and warning filters, but in no `try` (the primal never ran them)."""
    if loc is None or not any(entry[0] == TRY for entry in loc.context):
        return loc
    return replace(loc, context=tuple(entry for entry in loc.context if entry[0] != TRY))


def blocks(context: tuple) -> tuple:
    """The entries that open a block in the generated code (a catch_warnings
    that sets no filter changes nothing there)."""
    return tuple(entry for entry in context if entry[0] != WARNINGS or entry[1])
