"""Whose code a function is, and whose class an object is: the user's
(unrolled, and outside state where it is read), a library's (run natively,
or recorded as a primitive), or yota-src's own."""

from __future__ import annotations

import sys
import types

from yota_src.core.registry import TEMPLATES
from yota_src.core.values import children, kind_of
from yota_src.tracing.source import unwrap
from yota_src.tracing.traced import Traced

# Functions from these packages are primitives (recorded), never inlined.
# Libraries whose functions are run, not unrolled (logging and warnings: their
# internals are locks and handlers; what they show is recorded as output).
OPAQUE_PACKAGES = {"numpy", "cupy", "scipy", "math", "builtins", "operator", "functools",
                   "itertools", "jax", "torch", "logging", "warnings"}
STANDARD_LIBRARY = frozenset(getattr(sys, "stdlib_module_names", ())) - {"__main__"}
NATIVE_PACKAGES = OPAQUE_PACKAGES | STANDARD_LIBRARY  # their code runs natively, not unrolled
OURS = __name__.partition(".")[0]  # yota_src: our own code runs natively, but for templates


def module_of(value) -> str:
    """`value.__module__` where it is a name (on some C types, before Python
    3.11, it is the descriptor of their instances' attribute)."""
    module = getattr(value, "__module__", None)
    return module if isinstance(module, str) else ""


def inlinable(fn) -> bool:
    """A Python function of the user's (or a template helper): its source is unrolled."""
    fn = unwrap(fn)
    if not isinstance(fn, types.FunctionType) or fn.__code__.co_filename.startswith("<frozen"):
        return False  # a frozen module's (os.environ's methods) has no source: run natively
    module = module_of(fn)
    if module.split(".")[0] == OURS:  # its own code runs natively, but for templates
        return module.startswith(TEMPLATES)
    # the standard library runs natively too: its arithmetic and decisions on traced
    # values go through their protocols (traced.py), its errors name the user's line
    return module.split(".")[0] not in NATIVE_PACKAGES


def user_kernel(fn) -> bool:
    """A user's function called from a user's rule (conv_grad_data): recorded as
    a call, as the rule says, rather than unrolled."""
    module = module_of(unwrap(fn))
    return inlinable(fn) and not module.startswith(OURS)  # nor a generated module


def own_api(fn) -> bool:
    """ys.grad, ys.simplegrad, a GradFunction, ... (not a template helper)."""
    if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields"):
        return False  # a namedtuple class made while unrolling takes our module's name
    module = module_of(fn) if isinstance(fn, (types.FunctionType, type)) \
        else module_of(type(fn))
    return (module or "").split(".")[0] == OURS and not module.startswith(TEMPLATES)


def user_instance(value) -> bool:
    """An object of a class the user's code defined (a subclass of float or
    of a namedtuple too), whose special methods are its own."""
    if isinstance(value, (Traced, type, types.ModuleType)):
        return False
    package = module_of(type(value)).split(".")[0]
    return bool(package) and package not in NATIVE_PACKAGES and package != OURS


def holds_traced(value, seen=None) -> bool:
    """Is a traced value inside `value`, also inside objects of the user's
    classes (whose operators then need unrolling, not a native run)?"""
    if isinstance(value, Traced):
        return True
    seen = set() if seen is None else seen
    if id(value) in seen or kind_of(value) != "struct":
        return False
    seen.add(id(value))
    return any(holds_traced(child, seen) for _, child in children(value))


def outside_by_nature(value) -> bool:
    """The user's classes, functions and modules: made before any call (the
    unrolled code makes UserFunction objects, never these), so what is read
    from them is outside state, and writing to them is refused."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] not in OPAQUE_PACKAGES
    if isinstance(value, (type, types.FunctionType)):
        return module_of(value).split(".")[0] not in OPAQUE_PACKAGES
    return False
