"""The files a gradient was made from: the function's source, and every
file behind what the trace read from outside the arguments (a module whose
globals it read, one a name was imported from, a helper's source).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
import tokenize
import types
from collections.abc import Iterator

from yota_src.cli import user_files


def files_read(fn, dependencies) -> Iterator[tuple[str, str]]:
    """(file, what was read from it) for each file behind the gradient."""
    source = _defined_in(fn)
    if source:
        yield source, f"the source of {getattr(fn, '__qualname__', fn)}"
    imports = _Imports()
    for dependency in dependencies:
        if dependency.origin is not None:
            module_file, name = dependency.origin
            yield module_file, dependency.what
            for imported in imports.origins(module_file, name, set()):
                yield imported, f"{dependency.what}, imported from there"
        try:
            value = dependency.read()
        except Exception:  # gone since: it was read, but names no file now
            continue
        defined = _defined_in(value)
        if defined:
            yield defined, dependency.what


def _defined_in(value) -> str | None:
    """The file a module, function, method or class comes from, if any."""
    if isinstance(value, types.ModuleType):
        file = getattr(value, "__file__", None)
        return file if isinstance(file, str) else None
    value = getattr(value, "__func__", value)  # a bound method
    code = getattr(value, "__code__", None)
    if isinstance(code, types.CodeType):
        return code.co_filename
    if isinstance(value, type):
        try:
            return inspect.getfile(value)
        except (TypeError, OSError):  # a builtin class
            return None
    return None


class _Imports:
    """Where a module's names were imported from, read off its `from`
    statements; the imported modules and parsed files are looked up once."""

    def __init__(self):
        self.modules = {}  # a module's __file__ -> the module (files come from __file__)
        for module in [*list(sys.modules.values()), *user_files.imported.values()]:
            file = _defined_in(module)
            if file:
                self.modules[file] = module
        self.statements: dict[str, list] = {}

    def origins(self, filename: str, name: str, seen: set) -> list[str]:
        """The files whose `name` the module at `filename` imported as its
        own, by `from M import name [as alias]` or `from M import *`,
        followed back through re-exports to where it is defined."""
        module = self.modules.get(filename)
        if module is None or (filename, name) in seen:
            return []
        seen.add((filename, name))
        found = []
        for node in self.from_imports(filename):
            for alias in node.names:
                if alias.name != "*" and (alias.asname or alias.name) != name:
                    continue
                original = name if alias.name == "*" else alias.name
                try:
                    source = sys.modules.get(importlib.util.resolve_name(
                        "." * node.level + (node.module or ""), module.__package__))
                except (ImportError, ValueError):  # a relative import outside a package
                    continue
                source_file = _defined_in(source)
                if source_file and hasattr(source, original):
                    found += [source_file, *self.origins(source_file, original, seen)]
        return found

    def from_imports(self, filename: str) -> list:
        if filename not in self.statements:
            try:
                with tokenize.open(filename) as file:
                    tree = ast.parse(file.read(), filename)
            except (OSError, SyntaxError, ValueError):
                tree = ast.Module(body=[], type_ignores=[])
            self.statements[filename] = [node for node in ast.walk(tree)
                                         if isinstance(node, ast.ImportFrom)]
        return self.statements[filename]
