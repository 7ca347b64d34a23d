"""Reads from outside the arguments: what the trace is specialised to.

A global, a closure variable, a default, an attribute of a module, class or
outside object, an item of an outside container, the result of a library
call on static values: each is a dependency, checked again before a cached
gradient is reused. Arrays read from outside become live constants of the
tape (the generated code reads them at run time); objects from outside, and
those an argument holds, are watched, and writing to them is refused.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from yota_src.core import primitives
from yota_src.core.compiled_text import GENERATED
from yota_src.core.values import ATTR, ITEM, children, is_array, kind_of
from yota_src.errors import MutationError
from yota_src.ir.specialisation import MISSING, dependency, describe, is_plain_data, snapshot
from yota_src.tracing.frames import BUILTIN, GLOBAL
from yota_src.tracing.ownership import OPAQUE_PACKAGES, module_of, outside_by_nature
from yota_src.tracing.row_lists import RowList
from yota_src.tracing.traced import Traced, has_traced


class OutsideReads:
    """What one trace read from outside its arguments, and the objects it
    must not write: from outside, or held by an argument."""

    def __init__(self, unroller):
        self.unroller = unroller
        self.dependencies: dict = {}  # what the trace read from outside the arguments
        self.watched: dict[int, object] = {}  # objects from outside, by id: attribute reads count
        self.held: dict[int, object] = {}  # objects the arguments hold, by id
        # where each was reached first ((ITEM, argument index), step, ...), and those
        # reached twice, whose writes the generated code could not aim at one place
        self.held_paths: dict[int, tuple] = {}
        self.aliased: set[int] = set()
        self.outside: dict[int, object] = {}  # every object read from outside, by id: never written
        self.outside_names: dict[int, str] = {}  # the names outside containers were read by
        # outside objects, by id -> (module name, path): how an import reaches them again
        self.outside_paths: dict[int, tuple] = {}

    # -- names, values and parts read from outside ------------------------------

    def read_outside(self, name: str, value, origin, frame):
        """A global, builtin or closure variable: recorded as a dependency of
        the specialisation, and arrays read live."""
        if origin is GLOBAL or origin is BUILTIN:
            namespace = frame.globals
            module = namespace.get("__name__", "?")
            self.depend(("global", id(namespace), name), f"global {name} of {module}",
                        ("{0}.get({1}, {2})", (namespace, name, MISSING)),
                        value if origin is GLOBAL else MISSING, namespace, name,
                        listed=module.split(".")[0] != GENERATED)  # api/nested_derivatives.py
            path = (module, ((ATTR, name),)) if origin is GLOBAL else None
            return self.outside_value(value, name, path)
        cell = origin
        self.depend(("cell", id(cell)), f"closure variable {name} of "
                    f"{getattr(frame.source.node, 'name', 'a lambda')}()",
                    ("{0}.cell_contents", (cell,)), value)
        return self.outside_value(value, name)

    def outside_value(self, value, name: str | None, path: tuple | None = None):
        """Objects are watched (their attribute reads become dependencies);
        arrays and random generators become live constants on the tape. `path`
        is how an import reaches the value (see `child_path`), where one does."""
        if is_array(value) or isinstance(value, primitives.GENERATORS):
            return self.unroller.recorder.lift(value, name, self.unroller.loc, path)
        if not isinstance(value, (bool, int, float, complex, str, bytes, np.generic,
                                  type(None))):
            self.outside[id(value)] = value  # never changed by the trace (`next(counter)`)
            if path is not None:
                self.outside_paths.setdefault(id(value), path)
        if isinstance(value, types.MethodType):  # what the method reads of its object counts
            self.outside_value(value.__self__, name)
        elif _watched(value):
            self.watched[id(value)] = value
            if name and id(value) not in self.outside_names:
                self.outside_names[id(value)] = name
        return value

    def read_attribute(self, obj, name: str, value, owner: type | None):
        """`obj.name` gave `value` (found on the class `owner`, if not on the
        object itself): a dependency where `obj` is from outside or the
        attribute is its class's, since the class is outside."""
        if name == "__dict__" and id(obj) in self.held:  # model.__dict__["k"] = v is a write
            self.held[id(value)] = value
        if owner is not None:
            self.depend_on_class(owner, name, type(obj) if not isinstance(obj, type) else obj)
        if id(obj) not in self.watched and not outside_by_nature(obj):
            return value
        if not isinstance(obj, (list, dict, tuple, set, frozenset)):  # their snapshot has all
            self.depend(("attr", id(obj), name), f"attribute {name} of {describe(obj)}",
                        ("getattr({0}, {1})", (obj, name)), value,
                        obj if isinstance(obj, types.ModuleType) else None, name)
        return self.outside_value(value, self.part_name(obj, name) or name,
                                  self.child_path(obj, (ATTR, name)))

    def part_of(self, container, item, key):
        """An item of a static container: an array in it, or anything in a
        container from outside, is itself from outside (named after the
        container and the key: `LAYERS_0`)."""
        if isinstance(item, Traced):
            return item
        if id(container) in self.watched and key is not None \
                and not isinstance(container, (list, dict, tuple, set, frozenset, str)):
            try:  # an item of an outside mapping or sequence whose snapshot is its identity
                self.depend(("item", id(container), key), f"item {key!r} of "
                            f"{describe(container)}", lambda: container[key], item)
            except TypeError:  # an unhashable key: the whole contents
                self.depend_on_contents(container)
        if is_array(item) or id(container) in self.watched:
            path = None if key is None else self.child_path(container, (ITEM, key))
            return self.outside_value(item, self.part_name(container, key), path)
        return item

    def part_name(self, container, key) -> str | None:
        base = self.outside_names.get(id(container))
        if base is None or not isinstance(key, (int, str)):
            return base
        return "".join(c if c.isalnum() or c == "_" else "_" for c in f"{base}_{key}")

    def child_path(self, parent, step: tuple) -> tuple | None:
        """How an import reaches `parent`'s attribute or item `step` ((ATTR,
        name) or (ITEM, key)), where it reaches `parent`: a saved module reads
        a large outside array through it rather than holding a copy."""
        if isinstance(parent, types.ModuleType):
            return parent.__name__, (step,)
        known = self.outside_paths.get(id(parent))
        return None if known is None else (known[0], known[1] + (step,))

    # -- dependencies -------------------------------------------------------------

    def depend(self, key, what: str, read, value, module=None, name=None,
               listed: bool = True) -> None:
        """`read` gives the value again: a function, or an expression over
        constants (specialisation.Dependency.reads) that every call tests inline."""
        if key not in self.dependencies:
            self.dependencies[key] = dependency(what, read, value, listed, module, name)

    def depend_on_code(self, fn: types.FunctionType) -> None:
        """A function inlined: its code may be replaced, its defaults rebound."""
        self.depend(("code", id(fn)), f"the code of {fn.__qualname__}()",
                    ("{0}.__code__", (fn,)), fn.__code__, listed=False)
        if fn.__defaults__ or fn.__kwdefaults__:
            self.depend(("defaults", id(fn)), f"defaults of {fn.__qualname__}()",
                        lambda: (fn.__defaults__, fn.__kwdefaults__),
                        (fn.__defaults__, fn.__kwdefaults__))

    def depend_on_call(self, fn, args, kwargs, result) -> None:
        """A method of an outside object (os.environ.get, a logger's
        isEnabledFor) or a library function (os.getenv) called on static
        values reads state the trace cannot see: its result is a dependency,
        read again by calling it."""
        if has_traced((args, kwargs)) or not is_plain_data(result):
            return
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType) \
                and not self.outside_or_held(owner):
            return  # a method of a value made here: computed afresh at every trace
        try:
            key = ("call", id(fn) if owner is None else id(owner),
                   getattr(fn, "__name__", None), snapshot((args, kwargs)))
            hash(key)
        except TypeError:
            return
        self.depend(key, f"{primitives.display_name(fn)}(...)",
                    lambda: fn(*args, **kwargs), result)

    def depend_on_super(self, bound: super, name: str) -> None:
        """`super().forward`: an attribute of a class after the method's own."""
        mro = bound.__self_class__.__mro__
        following = mro[mro.index(bound.__thisclass__) + 1:]
        found = next((klass for klass in following if name in klass.__dict__), None)
        if found is not None:
            self.depend_on_class(found, name)

    def depend_on_class(self, klass: type, name: str, via: type | None = None) -> None:
        """A method, property or constant read from a class of the user's: the
        class may be changed (`Model.scale = 5.0`, a method rebound). `via`,
        the object's class where `klass` is a base of it: the classes between
        them lack the attribute, and one given it later shadows `klass`'s."""
        for each in via.__mro__[:via.__mro__.index(klass)] if via is not None else ():
            if outside_by_nature(each) and each.__module__ != "builtins":
                self.depend(("attr", id(each), name), f"attribute {name} of class "
                            f"{each.__qualname__}", lambda each=each: each.__dict__.get(
                                name, MISSING), MISSING)
        if not outside_by_nature(klass) or klass.__module__ == "builtins":
            return
        value = klass.__dict__[name]
        self.depend(("attr", id(klass), name), f"attribute {name} of class {klass.__qualname__}",
                    lambda: klass.__dict__.get(name, MISSING), value)

    def depend_on_absence(self, obj, name: str) -> None:
        """An attribute found missing on an outside object (getattr with a
        default, hasattr): setting it later must retrace."""
        if isinstance(obj, (Traced, RowList)):  # (a list has no attributes set on it)
            return
        if id(obj) in self.watched or id(obj) in self.held or outside_by_nature(obj):
            self.depend(("attr", id(obj), name), f"attribute {name} of {describe(obj)}",
                        lambda: getattr(obj, name, MISSING), MISSING)
        elif not isinstance(obj, (types.ModuleType, type)):  # missing on its class too
            for klass in type(obj).__mro__:
                if outside_by_nature(klass) and klass.__module__ != "builtins":
                    self.depend(("attr", id(klass), name), f"attribute {name} of class "
                                f"{klass.__qualname__}", lambda klass=klass: klass.__dict__.get(
                                    name, MISSING), MISSING)

    def depend_on_contents(self, container) -> None:
        """Iterating (or taking the length of) an outside container that is not
        a plain list, dict or tuple (a deque, os.environ, an array.array): its
        contents are a dependency. Plain containers are snapshotted whole."""
        if id(container) in self.watched \
                and not isinstance(container, (list, dict, tuple, set, frozenset, str)):
            self.depend(("contents", id(container)), f"the contents of {describe(container)}",
                        lambda: list(container), list(container))

    # -- objects that must not change -------------------------------------------------

    def hold(self, structure, path: tuple = ()) -> None:
        """Remember the containers and objects an argument holds (the mirrors
        made for it, and its parts passed as they are) and where: writes to
        them are replayed or refused (writes.py), and reads of objects that
        are not mirrored field by field (a SimpleNamespace, a deque, an enum)
        are dependencies, like reads of outside objects."""
        if structure is None or isinstance(structure, (Traced, str, bytes, int, float, complex,
                                                       np.generic)) or is_array(structure) \
                or outside_by_nature(structure):
            return
        if id(structure) in self.held:
            self.aliased.add(id(structure))
            return
        self.held[id(structure)] = structure
        self.held_paths[id(structure)] = path
        if kind_of(structure) == "struct" and not isinstance(structure, RowList):  # (rows)
            for step, child in children(structure):
                self.hold(child, path + (step,))
        elif _watched(structure):
            self.watched[id(structure)] = structure

    def outside_or_held(self, obj) -> bool:
        """An object read from outside, or one an argument holds."""
        return id(obj) in self.held or id(obj) in self.outside or id(obj) in self.watched

    def outside_write(self, node, frame) -> MutationError:
        return MutationError(
            "in-place change of a value defined outside the function (a global, a closure "
            "variable, a default or an object reached from one)",
            self.unroller.location_of(node, frame),
            hint="The generated code would not repeat the change: build a new value and "
                 "return it, or copy it into a local first.")

    def refuse_write(self, obj, node, frame) -> None:
        """Changing an object from outside, or one an argument holds, would be
        an effect the generated code does not repeat (the caller's model keeps
        its old attributes, a history list its old length): refused."""
        if id(obj) in self.held:
            raise MutationError(
                "in-place change of an argument (an attribute, item or element of an object "
                "passed in)", self.unroller.location_of(node, frame),
                hint="The generated code would not repeat the change: return the new value "
                     "(e.g. as an auxiliary output) and update the object outside the "
                     "differentiated function.")
        if id(obj) in self.watched or id(obj) in self.outside or outside_by_nature(obj):
            raise self.outside_write(node, frame)


class NoOutsideReads(OutsideReads):
    """Reads from outside that are not kept: a library's code run on traced
    values (a rule's template and its helpers) is no part of what the trace
    is specialised to. Writes to outside objects are refused all the same."""

    def read_outside(self, name: str, value, origin, frame):
        return value

    def outside_value(self, value, name: str | None, path: tuple | None = None):
        return value

    def read_attribute(self, obj, name: str, value, owner: type | None):
        return value

    def part_of(self, container, item, key):
        return item

    def depend(self, key, what: str, read, value, module=None, name=None,
               listed: bool = True) -> None:
        pass

    def depend_on_code(self, fn: types.FunctionType) -> None:
        pass

    def depend_on_call(self, fn, args, kwargs, result) -> None:
        pass

    def depend_on_super(self, bound: super, name: str) -> None:
        pass

    def depend_on_class(self, klass: type, name: str) -> None:
        pass

    def depend_on_absence(self, obj, name: str) -> None:
        pass

    def depend_on_contents(self, container) -> None:
        pass


def _watched(value) -> bool:
    """Objects from outside whose parts the trace may read: user modules,
    classes, instances and containers. Library modules, functions and plain
    numbers are taken whole (their snapshot says all there is)."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] not in OPAQUE_PACKAGES
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic,
                                           types.FunctionType, types.BuiltinFunctionType,
                                           types.MethodType, functools.partial)):
        return False
    owner = value if isinstance(value, type) else type(value)
    if owner in (list, dict, tuple, set, frozenset, bytearray, types.MappingProxyType):
        return True
    return module_of(owner).split(".")[0] not in OPAQUE_PACKAGES
