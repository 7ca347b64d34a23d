"""What a trace read from outside the arguments, and whether it still holds.

Unrolling folds everything static: a global float becomes a constant, a
closure cell's function is inlined, a default argument decides a branch. The
compiled gradient is right only while those reads give what they gave when
it was traced, so the unroller records each one as a `Dependency`: how to
read it again, and a snapshot to compare with. `ys.grad` checks them on every
cache hit (a mismatch retraces), a `GradFunction` refuses to run on changed
state, and a saved module's docstring lists what it froze.

Snapshots compare by value for plain data (numbers, strings, containers of
them) and by identity for everything with behaviour (modules, functions,
classes, objects, arrays). Arrays are read live, not frozen: the unroller
traces them like data, so decisions on their contents are guarded.
"""

from __future__ import annotations

import functools
import math
import types
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from yota_src.core.values import describe_dtype, is_array

MISSING = object()  # what a global read that fell through to builtins saw
_VALUE_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis),
                np.generic, np.dtype, slice, range)


class Same:
    """Equal only to a snapshot of the very same object (kept alive here, so
    its id cannot be reused by another)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other) -> bool:
        return isinstance(other, Same) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def snapshot(value):
    """A comparable summary of everything a fold of `value` can depend on."""
    if isinstance(value, _VALUE_TYPES):
        if isinstance(value, float) and (math.isnan(value) or value == 0):
            return (float, repr(value))  # nan equal to itself; -0.0 not equal to 0.0
        if isinstance(value, slice):
            return (slice, snapshot((value.start, value.stop, value.step)))
        return (type(value), value)
    if is_array(value):  # float arrays are read live; indices and masks fold
        if np.issubdtype(value.dtype, np.inexact):
            return (Same(value), value.shape, value.dtype)
        return (Same(value), value.shape, value.dtype, np.asarray(value).tobytes())
    if isinstance(value, types.MethodType):
        return (types.MethodType, Same(value.__func__), Same(value.__self__))
    if isinstance(value, types.FunctionType):
        return (Same(value), Same(value.__code__), snapshot(value.__defaults__),
                snapshot(value.__kwdefaults__))
    if type(value) is functools.partial:  # its arguments can be changed (__setstate__)
        return (Same(value), snapshot(value.func), snapshot(value.args),
                snapshot(value.keywords))
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(snapshot(item) for item in value))
    if isinstance(value, dict):
        return (type(value), tuple((snapshot(k), snapshot(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (type(value), frozenset(snapshot(item) for item in value))
    return Same(value)


def is_plain_data(value) -> bool:
    """Compared by value (its contents are the dependency), not by identity."""
    return not isinstance(snapshot(value), Same) and not is_array(value) \
        and not callable(value) and not isinstance(value, types.ModuleType)


@dataclass(frozen=True)
class Dependency:
    """One read from outside the arguments: `what` for messages, `read()`
    to read it again, `expected` the snapshot it had when traced."""

    what: str  # e.g. "the global LR of model.py"
    read: Callable[[], object]
    expected: object
    shown: str  # the value as the docstring shows it
    listed: bool = True  # worth listing in a docstring (not a library module, a builtin)
    same: Callable | None = None  # a quicker test of the snapshot, made by `dependency`
    origin: tuple[str, str] | None = None  # (module file, name) for a module's global/attribute
    # `read` as an expression over constants, `("{0}.get({1}, {2})", (namespace,
    # "np", MISSING))`, which `all_hold` writes out rather than calling `read`
    reads: tuple[str, tuple] | None = None

    def holds(self) -> bool:
        try:
            if self.same is not None:
                return self.same(self.read())
            return snapshot(self.read()) == self.expected
        except Exception:  # the name was deleted, the attribute is gone, ...
            return False


def dependency(what: str, read: Callable[[], object] | tuple[str, tuple], value,
               listed: bool = True, module=None, name: str | None = None) -> Dependency:
    """A Dependency on `value` as `read()` gives it now, which is `name` of
    `module` (its namespace, for a global) where it is read from one. Checked
    on every cache hit, so the common kinds get a test cheaper than a new
    snapshot. `listed=False` keeps it out of a saved module's docstring (the
    code of a function, which the module holds unrolled). `read` may be an
    expression over constants (Dependency.reads), which every call tests inline."""
    expected = snapshot(value)
    file = module.get("__file__") if isinstance(module, dict) else getattr(module, "__file__", None)
    reads = read if isinstance(read, tuple) else None
    if reads is not None:
        text, namespace = _read_expression(reads)
        read = eval(f"lambda: {text}", namespace)  # noqa: S307 - our own template
    return Dependency(what, read, expected, describe(value), listed and worth_listing(value),
                      _quick_test(value, expected),
                      (file, name) if isinstance(file, str) and name else None, reads)


def _read_expression(reads: tuple[str, tuple], prefix: str = "k") -> tuple[str, dict]:
    """The text of a read (Dependency.reads), its constants named `k0`, `k1`, ..."""
    template, constants = reads
    names = [f"{prefix}{position}" for position in range(len(constants))]
    return template.format(*names), dict(zip(names, constants))


def _quick_test(value, expected) -> Callable | None:
    if isinstance(expected, Same) or value is MISSING:
        return lambda current: current is value
    if isinstance(value, types.FunctionType):
        code, defaults, kwdefaults = value.__code__, value.__defaults__, value.__kwdefaults__
        if not defaults and not kwdefaults:
            return lambda current: current is value and current.__code__ is code \
                and not current.__defaults__ and not current.__kwdefaults__
        return None
    if type(value) is float and value == 0:  # -0.0 is 0.0, but not in atan2 or 1 / x
        sign = math.copysign(1.0, value)
        return lambda current: type(current) is float and current == 0 \
            and math.copysign(1.0, current) == sign
    if type(value) in (bool, int, float, str) and value == value:
        kind = type(value)
        return lambda current: type(current) is kind and current == value
    if is_array(value) and np.issubdtype(value.dtype, np.inexact):  # contents are read live
        shape, dtype = value.shape, value.dtype
        return lambda current: current is value and current.shape == shape \
            and current.dtype == dtype
    return None


def first_stale(dependencies) -> Dependency | None:
    """The first dependency that no longer holds, or None."""
    for dependency in dependencies:
        if not dependency.holds():
            return dependency
    return None


def all_hold(dependencies) -> Callable[[], bool]:
    """One call that is true while every dependency holds: what every call of
    a generated gradient asks, so it is written out as one expression, the
    reads and identity tests inline (a tenth of the cost of asking each
    `Dependency.holds`)."""
    body, namespace = hold_test(dependencies)
    source = f"def fresh():\n    try:\n        return {body}\n    except Exception:\n" \
        "        return False\n"
    exec(compile(source, "<yota-src dependency check>", "exec"), namespace)
    return namespace["fresh"]


def hold_test(dependencies) -> tuple[str, dict]:
    """An expression true while every dependency holds, and the constants it
    names; it may raise where a read fails (a deleted global)."""
    tests, namespace = [], {}
    for index, each in enumerate(dependencies):
        if each.reads is not None:
            read, constants = _read_expression(each.reads, f"k{index}_")
            namespace.update(constants)
        else:
            namespace[f"read{index}"] = each.read
            read = f"read{index}()"
        if isinstance(each.expected, Same):  # what `same` tests, written out
            namespace[f"is{index}"] = each.expected.obj
            tests.append(f"{read} is is{index}")
        elif each.same is not None:
            namespace[f"same{index}"] = each.same
            tests.append(f"same{index}({read})")
        else:
            namespace[f"holds{index}"] = each.holds
            tests.append(f"holds{index}()")
    return " and ".join(tests) or "True", namespace


def describe(value) -> str:
    """A value for the docstring: deterministic, never a memory address."""
    if is_array(value):
        return f"{describe_dtype(value.dtype)} array {value.shape}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type,
                          types.ModuleType)):
        module = getattr(value, "__module__", None)
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
        kind = "module" if isinstance(value, types.ModuleType) else "function" \
            if callable(value) and not isinstance(value, type) else "class"
        if isinstance(value, types.ModuleType):
            return f"module {value.__name__}"
        return f"{kind} {module + '.' if module else ''}{name}"
    if isinstance(value, types.MethodType):
        return f"method {getattr(value.__func__, '__qualname__', '?')}"
    if isinstance(value, (set, frozenset)):
        items = ", ".join(sorted(describe(item) for item in value))
        return f"{{{items}}}" if value else "set()"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(item) for item in value)
        return f"[{inner}]" if isinstance(value, list) else \
            f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{describe(k)}: {describe(v)}" for k, v in value.items()) + "}"
    if isinstance(value, _VALUE_TYPES):
        return repr(value)
    return f"a {type(value).__qualname__} object"


def describe_outside(dependencies) -> tuple:
    """What a saved module freezes, one line each, for its docstring."""
    return tuple(f"{d.what}: {d.shown}" for d in dependencies if d.listed)


def worth_listing(value) -> bool:
    """Data the generated code froze. Modules are imported and functions
    inlined (their code is in the module for a reader to see)."""
    return value is not MISSING and not callable(value) \
        and not isinstance(value, types.ModuleType)
