"""The store behind `ys.grad`: compiled gradients by specialisation, and a
quick way back to them for the call a training loop makes every step.

The full key (`ir.signature.signature_key`) walks every argument through the
struct machinery and hashes nested tuples: about 1 µs per array and 8 µs for
a small struct, several times the cost of the generated code on small
inputs. So each function also keeps a short list of *checks*, one per
specialisation it was called with: a small generated function that tests
the arguments in place (`type(x) is ndarray and x.shape == (3,) and ...`),
reading each leaf once and building nothing. A check holds exactly the facts
the full key holds (types, shapes, dtypes, the values of static leaves, the
field names of plain objects), so a passing check means an equal full key.
Where it cannot promise that (a class with slots or descriptors, a NumPy
scalar, an enum), no check is made and every call computes the full key.

A key may hold several variants: the paths a data-dependent decision took
(`ys.grad(..., dynamic=True)`). `find` runs the first that still applies.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from yota_src.api.arguments import generators_in
from yota_src.core.values import kind_of
from yota_src.errors import ControlFlowChanged, SignatureMismatch
from yota_src.tracing import random_states, rewind

_MAX_CHECKS = 8  # per function: shapes a training loop alternates between
_MAX_DEPTH = 24  # nesting a check spells out; deeper arguments use the full key


class _NoCheck(Exception):
    """An argument a check cannot describe: use the full key."""


_plain_classes: dict[type, bool] = {}


def _is_plain(cls: type) -> bool:
    """Objects of `cls` are described by their `__dict__` alone: a Python
    class without slots, properties or attribute hooks, which the struct
    machinery walks field by field exactly as its `__dict__` lists them."""
    known = _plain_classes.get(cls)
    if known is None:
        known = all(
            "__slots__" not in vars(klass) and "__getattr__" not in vars(klass)
            and "__getattribute__" not in vars(klass)
            and not any(hasattr(attribute, "__set__") or hasattr(attribute, "__delete__")
                        for name, attribute in vars(klass).items()
                        if name not in ("__dict__", "__weakref__"))
            for klass in cls.__mro__[:-1])
        try:
            known = known and kind_of(object.__new__(cls)) == "struct"
        except TypeError:  # a class that cannot be made without its constructor
            known = False
        _plain_classes[cls] = known
    return known


class _CheckWriter:
    """Writes the body of one check: a test per leaf, each leaf bound to a
    local (`v3 = a0.__dict__[k1]`) once the tests above it have passed, so
    nothing is read twice and no read can fail."""

    def __init__(self):
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {"_ndarray": np.ndarray}
        self.names = 0

    def constant(self, value) -> str:
        name = f"k{len(self.constants)}"
        self.constants[name] = value
        return name

    def test(self, condition: str) -> None:
        self.lines.append(f"if not ({condition}): return False")

    def local(self, expression: str) -> str:
        self.names += 1
        self.lines.append(f"v{self.names} = {expression}")
        return f"v{self.names}"

    def describe(self, name: str, value, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _NoCheck
        cls, test = type(value), self.test
        if cls is np.ndarray:
            dtype = self.constant(value.dtype)
            test(f"type({name}) is _ndarray and {name}.shape == {self.constant(value.shape)} "
                 f"and ({name}.dtype is {dtype} or {name}.dtype == {dtype})")
        elif cls is float:
            test(f"type({name}) is float")
        elif value is None or cls is bool:
            test(f"{name} is {value!r}")
        elif cls is int or cls is str:
            test(f"type({name}) is {cls.__name__} and {name} == {self.constant(value)}")
        elif cls is list or cls is tuple:
            test(f"type({name}) is {cls.__name__} and len({name}) == {len(value)}")
            for index, item in enumerate(value):
                self.describe(self.local(f"{name}[{index}]"), item, depth + 1)
        elif cls is dict or _is_plain(cls):
            fields = value if cls is dict else value.__dict__
            test(f"type({name}) is {self.constant(cls)}")
            if cls is not dict:
                name = self.local(f"{name}.__dict__")
            test(f"tuple({name}) == {self.constant(tuple(fields))}")
            for key, item in fields.items():
                self.describe(self.local(f"{name}[{self.constant(key)}]"), item, depth + 1)
        else:
            raise _NoCheck


def make_check(options: tuple, args: tuple) -> Callable[[tuple, tuple], bool] | None:
    """A function `check(options, args)` true exactly when `args` (and the
    call's options: bound arguments, wrt, loops) have the specialisation of
    these, or None where arguments cannot be checked without the full key."""
    writer = _CheckWriter()
    try:
        for index, arg in enumerate(args):
            writer.describe(f"a{index}", arg, 0)
    except (_NoCheck, RecursionError):
        return None
    same = writer.constant(options)
    unpack = [f"{', '.join(f'a{index}' for index in range(len(args)))}, = args"] if args else []
    body = [f"if options is not {same} and options != {same} or len(args) != {len(args)}: "
            "return False", *unpack, *writer.lines, "return True"]
    source = "def check(options, args):\n" + "".join(f"    {line}\n" for line in body)
    namespace = writer.constants
    exec(compile(source, "<yota-src argument check>", "exec"), namespace)
    return namespace["check"]


class GradientCache:
    """Compiled variants by full key, and per function the checks that lead
    to them; a variant list is shared by its key and its checks, so dropping
    a stale variant drops it for both."""

    def __init__(self):
        self.variants: dict[Any, list] = {}
        self.checks: dict[Callable, list[tuple[Callable, list]]] = {}
        # per (function, options): variants that read sizes at run time, tried for
        # a key not seen before (another batch size) before anything is traced
        self.general: dict[Any, list] = {}
        self.seen: set = set()  # (function, options) a variant was built for
        self.lock = threading.Lock()
        self._building: dict[Any, threading.RLock] = {}  # one build at a time per key

    def find(self, key, args: tuple, dynamic: bool, tried: set) -> tuple:
        """(compiled, result) from a cached variant that still applies, or (None, None).

        A variant whose outside facts (globals, closure cells, defaults) changed
        is dropped; one whose data-dependent branch went the other way is skipped
        when `dynamic`, and raises otherwise. `tried` holds the variants already
        run for this call, which are not run again.
        """
        with self.lock:
            variants = [each for each in self.variants.get(key, ()) if id(each) not in tried]
        for compiled in variants:
            tried.add(id(compiled))
            if not compiled.fresh():
                with self.lock:
                    if compiled in self.variants.get(key, ()):
                        self.variants[key].remove(compiled)
                continue
            states = random_states(compiled.generators + generators_in(args)) \
                if compiled.draws else {}
            try:
                if dynamic and compiled.holds_output:
                    return compiled, _held_output(compiled.function, args)
                return compiled, compiled.function(*args)
            except ControlFlowChanged as error:
                if not dynamic:
                    raise other_path(error, compiled) from None
                rewind(states)  # the variant that applies draws what one call of f would
        return None, None

    def find_general(self, kind, args: tuple) -> tuple:
        """(compiled, result) from a variant of `kind` (function, options)
        whose sizes are read at run time and whose checks pass `args` (a
        batch of another size), or (None, None). Its checks run before any
        work, and such a variant writes into no argument."""
        with self.lock:
            variants = list(self.general.get(kind, ()))
        for compiled in variants:
            if not compiled.fresh():
                with self.lock:
                    if compiled in self.general.get(kind, ()):
                        self.general[kind].remove(compiled)
                continue
            try:
                return compiled, compiled.function(*args)
            except (SignatureMismatch, ControlFlowChanged):
                continue  # not for these sizes, or the data go another way: traced anew
        return None, None

    def add_general(self, kind, compiled) -> None:
        with self.lock:
            self.general.setdefault(kind, []).append(compiled)

    def building(self, key) -> threading.RLock:
        """The lock held while a variant of `key` is built: of concurrent first
        calls, one traces and the others use its result."""
        with self.lock:
            return self._building.setdefault(key, threading.RLock())

    def add(self, key, compiled) -> None:
        with self.lock:
            self.variants.setdefault(key, []).append(compiled)

    def remember(self, function: Callable, check: Callable, key) -> None:
        """Lead calls that pass `check` (`make_check`) to `key`'s variants."""
        with self.lock:  # a new list: a call may be reading the old one
            older = self.checks.get(function, [])[:_MAX_CHECKS - 1]
            self.checks[function] = [(check, self.variants[key])] + older

    def clear(self) -> None:
        with self.lock:
            self.variants.clear()
            self.checks.clear()
            self.general.clear()
            self.seen.clear()

    def values(self):
        return self.variants.values()

    def items(self):
        return self.variants.items()


def other_path(error: ControlFlowChanged, compiled=None) -> ControlFlowChanged:
    """The error a call whose data went another way raises, saying what to
    do: `dynamic=True`; for Dask arrays, whose gradient was traced on a
    sample of their first rows that went the way the whole data does not,
    and cannot be traced the other way, something else."""
    if compiled is not None and compiled.generated_from.signature.library == "dask":
        return ControlFlowChanged(
            f"{error}. The Dask arrays were traced on a sample of their first rows, which "
            "decided it the other way, and dynamic=True traces the same rows: decide it "
            "outside the function and pass the answer in (a bool argument), or compute both "
            "ways and choose with np.where.")
    return ControlFlowChanged(f"{error}. ys.grad(..., dynamic=True) traces and caches each "
                              "path instead.")


def _held_output(function: Callable, args: tuple):
    """Run a variant that may turn out not to apply, holding back what it
    prints or warns until it has: a call whose data goes another way shows
    its output once, from the variant that applies. (Logging handlers keep
    their own streams, which cannot be held back.)"""
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            return function(*args)
    except ControlFlowChanged:
        stdout, stderr = io.StringIO(), io.StringIO()  # the output of a path not taken
        raise
    finally:
        sys.stdout.write(stdout.getvalue())
        sys.stderr.write(stderr.getvalue())
