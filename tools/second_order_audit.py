"""Which adjoint templates are not themselves differentiable (second order).

A second derivative differentiates the code a template wrote, so each
function a template calls on values must have a rule of its own (or be
declared piecewise constant). This walks every template's source, and the
template helpers it calls, and lists the templates that call a function
with neither: differentiating their code again raises NoDiffRuleError
naming that function, never a silently wrong answer.

    python tools/second_order_audit.py
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap
import types

from yota_src import rules
from yota_src.core.primitives import display_name


def callees(fn, seen: set) -> set:
    """The functions `fn`'s body calls, through template helpers."""
    if fn in seen:
        return set()
    seen.add(fn)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError):
        return set()
    found = set()
    body = tree.body[0].body if tree.body and hasattr(tree.body[0], "body") else tree.body
    for node in (each for statement in body for each in ast.walk(statement)):
        if isinstance(node, ast.Call):
            target = resolve(node.func, fn.__globals__)
            if target is None:
                continue
            if isinstance(target, types.FunctionType) and \
                    target.__module__.startswith("yota_src.templates"):
                found |= callees(target, seen)  # a helper: unrolled with the template
            else:
                found.add(target)
    return found


def resolve(node, namespace: dict):
    if isinstance(node, ast.Name):
        return namespace.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute):
        base = resolve(node.value, namespace)
        return getattr(base, node.attr, None) if isinstance(base, types.ModuleType) else None
    return None


# what a template asks of dtypes and shapes: static values, never differentiated
STATIC = {"result_type", "issubdtype", "dtype", "broadcast_shapes", "iscomplexobj", "finfo",
          "iinfo", "promote_types", "can_cast", "isscalar", "normalize_axis_index",
          "normalize_axis_tuple"}


def needs_rule(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    if module == "builtins" or isinstance(fn, type) or getattr(fn, "__name__", "") in STATIC:
        return False  # len, range, isinstance, tuple, np.result_type: on static values
    if module.split(".")[0] == "yota_src":
        return False  # its own helpers (is_static, unbroadcast's shapes) run on static facts
    return not (rules.template_for(fn) or rules.is_nondifferentiable(fn)) \
        and getattr(fn, "__name__", "") != "isfortran"  # a layout query: static


def lacking_rules() -> dict[str, set]:
    """Primitive -> the functions without a rule its built-in template's code calls."""
    for module in rules.OPTIONAL_FAMILIES:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
    templates, _ = rules.registered()
    missing: dict[str, set] = {}
    for primitive, template in templates.items():
        if not getattr(template, "__module__", "").startswith("yota_src.templates"):
            continue  # a user's rule (ys.diffrule): theirs to keep differentiable
        lacking = {display_name(fn) for fn in callees(template, set()) if needs_rule(fn)}
        if lacking:
            missing[display_name(primitive)] = lacking
    return missing


def main() -> None:
    missing = lacking_rules()
    templates, _ = rules.registered()
    for name in sorted(missing):
        print(f"{name}: its code calls {', '.join(sorted(missing[name]))}, which has no rule "
              "(NoDiffRuleError naming it)")
    print(f"{len(templates)} templates; {len(missing)} not differentiable again")


if __name__ == "__main__":
    main()
