"""Did code run natively change a container? A shallow copy of its contents
before, compared by identity after, and put back where a change is refused."""

from __future__ import annotations

import types
from collections import deque


def contents(container):
    """A shallow copy of a mutable container (or of an object's attributes),
    to tell whether a native call changed it (None for other values)."""
    if isinstance(container, (list, deque, bytearray)) or type(container).__name__ == "array":
        return list(container)
    if isinstance(container, (dict, set)):
        return dict(container) if isinstance(container, dict) else set(container)
    if not isinstance(container, (type, types.ModuleType, types.FunctionType)) \
            and isinstance(getattr(container, "__dict__", None), dict):
        return ("attributes", dict(vars(container)))  # object.__setattr__(model, ...)
    return None


def unchanged(container, before) -> bool:
    """Does `container` hold the very objects it held (compared by identity:
    `==` on traced values would record comparisons)?"""
    now = contents(container)
    if isinstance(before, tuple):
        before, now = before[1], now[1]
    if isinstance(before, dict):
        return list(before) == list(now) and all(now[k] is v for k, v in before.items())
    if isinstance(before, set):
        return len(before) == len(now) and all(any(a is b for b in now) for a in before)
    return len(before) == len(now) and all(a is b for a, b in zip(before, now))


def restore(container, before) -> None:
    if isinstance(before, tuple):  # an object's attributes
        vars(container).clear()
        vars(container).update(before[1])
    elif isinstance(container, (dict, set)):
        container.clear()
        container.update(before)
    elif isinstance(container, deque):
        container.clear()
        container.extend(before)
    else:
        container[:] = type(container)(before) if isinstance(container, bytearray) else before
