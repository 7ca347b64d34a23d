"""The package's imports flow one way, along the pipeline, and close no cycle.

Every import counts, also one inside a function: a deferred import hides a
cycle from Python but not from a reader. The stages, lowest first, are the
subpackages of yota_src (docs/architecture.md draws them); a module may
import its own stage and the stages below it, never one above.
"""

import ast
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2] / "src" / "yota_src"
PACKAGE = "yota_src"

# lowest first; `rules` is the module a rule author imports, `templates` its
# plugins (the registry loads them by name, so no stage imports them)
STAGES = ("version", "errors", "core", "ir", "passes", "tracing", "rules", "templates",
          "differentiate", "codegen", "api", "cli", "")  # "": yota_src itself, __main__

REGISTRY = "yota_src.core.registry"  # loads the templates, its plugins, by name

LIMIT_MODULE_LINES = 800
LIMIT_CLASS_LINES = 600
LIMIT_TOP_MODULES = 8


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def modules() -> dict[str, pathlib.Path]:
    """Every module of the package, yota_src/templates (a link to templates/
    beside it) included."""
    found = {}
    for directory, _, files in os.walk(ROOT, followlinks=True):
        for file in files:
            if file.endswith(".py"):
                path = pathlib.Path(directory) / file
                found[module_name(path)] = path
    return dict(sorted(found.items()))


def imported(name: str, path: pathlib.Path, known: dict) -> dict[str, int]:
    """The yota_src modules `name` imports (module -> first line), at any
    depth: import statements, and a string that names a module (what
    `importlib.import_module` and `__import__` take)."""
    found: dict[str, int] = {}
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[:len(here) - node.level + 1]
                base = ".".join(here + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value in known:  # importlib.import_module("yota_src.x"), __import__
            targets = [node.value]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.setdefault(target, node.lineno)
    return found


def stage(name: str) -> str:
    """The stage a module belongs to: its subpackage, or the top-level
    module it is; "" for the package itself and `python -m yota_src`."""
    part = name.split(".")[1] if "." in name else ""
    return "" if part == "__main__" else part


def graph() -> dict[str, dict[str, int]]:
    """Who imports whom, but the registry's load of its plugins: the
    templates, imported by name the first time a rule is looked up, once
    every stage is loaded (core/registry.py)."""
    known = modules()
    edges = {name: imported(name, path, known) for name, path in known.items()}
    edges[REGISTRY] = {target: line for target, line in edges[REGISTRY].items()
                       if stage(target) != "templates"}
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(edges) + 100))
    try:
        for node in sorted(edges):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_every_stage_is_known():
    unknown = {stage(name) for name in modules()} - set(STAGES)
    assert not unknown, f"add {sorted(unknown)} to STAGES in the order of the pipeline"


def test_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_imports_flow_down_the_pipeline():
    wrong = []
    for name, targets in graph().items():
        for target, line in targets.items():
            if STAGES.index(stage(target)) > STAGES.index(stage(name)):
                path = modules()[name].relative_to(ROOT.parent)
                wrong.append(f"{path}:{line}: {stage(name) or PACKAGE} imports "
                             f"{target}, a later stage")
    assert not wrong, "\n".join(wrong)


def test_the_stages_are_subpackages():
    top = [path.name for path in ROOT.glob("*.py")]
    assert len(top) <= LIMIT_TOP_MODULES, top


def test_no_module_or_class_is_a_hall():
    large = []
    for name, path in modules().items():
        if stage(name) == "templates":
            continue
        text = path.read_text()
        lines = text.count("\n")
        if lines > LIMIT_MODULE_LINES:
            large.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > LIMIT_CLASS_LINES:
                    large.append(f"{name}.{node.name}: a class of {size} lines")
    assert not large, "split along its jobs:\n" + "\n".join(large)


def test_a_stage_never_hides_a_public_name():
    """`ys.trace` is the function (the trace stage is `yota_src.tracing`), and
    every public name stays what it is whatever stage modules were imported
    first."""
    import subprocess

    code = ("import yota_src.tracing.interpreter, yota_src.api.gradients, yota_src.cli.commands\n"
            "import yota_src as ys\n"
            "print(all(callable(getattr(ys, name)) or name == 'errors' for name in ys.__all__))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "True"


def test_the_registry_loads_its_plugins_by_name():
    """The one import against the stage order is by design, and stays the one."""
    known = modules()
    loads = {target for target in imported(REGISTRY, known[REGISTRY], known)
             if stage(target) == "templates"}
    assert loads == {"yota_src.templates"}


def test_templates_import_only_the_rule_authors_module():
    """A template reads like one a user writes: `yota_src.rules` is all of
    ours it imports (besides the other templates)."""
    wrong = {name: sorted(target for target in targets
                          if stage(target) not in ("templates", "rules"))
             for name, targets in graph().items() if stage(name) == "templates"}
    assert not {name: targets for name, targets in wrong.items() if targets}
