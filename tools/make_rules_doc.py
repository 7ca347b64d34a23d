"""Write docs/rules.md, the catalogue of primitives, from the registry.

    python tools/make_rules_doc.py           # rewrite docs/rules.md
    python tools/make_rules_doc.py --check   # exit 1 if docs/rules.md is stale
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import pathlib
import sys
import textwrap

import numpy as np

from yota_src import rules
from yota_src.core.operators import SYMBOLS as OPERATOR_SYMBOLS
from yota_src.core.primitives import display_name

PATH = pathlib.Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def primitive_name(fn) -> str:
    if fn in OPERATOR_SYMBOLS or getattr(fn, "__module__", None) == "_operator":
        symbol = OPERATOR_SYMBOLS.get(fn)
        return f"`operator.{fn.__name__}`" + (f" (`{symbol}`)" if symbol else "")
    return f"`{display_name(fn)}`"


def differentiable_arguments(template) -> list[str]:
    """The parameters whose `d<param>` the template assigns, but for those it
    refuses (`dv = no_closed_form(...)`)."""
    params = list(inspect.signature(template).parameters)[2:]
    tree = ast.parse(textwrap.dedent(inspect.getsource(template)))
    assigned = {node.id for node in ast.walk(tree)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    refused = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Call)
               and getattr(node.value.func, "id", None) == "no_closed_form"
               for target in node.targets if isinstance(target, ast.Name)}
    return [p for p in params if f"d{p}" in assigned - refused]


def import_optional_libraries() -> None:
    """Import the libraries whose rule families load once they are imported
    (SciPy's modules), so that the catalogue lists them; it is written with
    SciPy installed."""
    for module in rules.OPTIONAL_FAMILIES:
        try:
            importlib.import_module(module)
        except ImportError:
            pass


# NumPy names only some supported versions have, each an alias of a name all
# have: left out, so that the file is the same whichever NumPy writes it.
VERSION_ALIASES = {np.trapezoid: ("trapz",)} if hasattr(np, "trapezoid") else {}


def builtin_rules() -> tuple[dict, set]:
    """yota-src's own rules, without any a user registered in this process."""
    import_optional_libraries()
    templates, nondifferentiable = rules.registered()
    aliases = {getattr(np, name, None) for names in VERSION_ALIASES.values() for name in names}
    return ({fn: t for fn, t in templates.items()
             if (t.__module__ or "").startswith("yota_src.templates") and fn not in aliases},
            nondifferentiable)


def render() -> str:
    templates, nondifferentiable = builtin_rules()
    piecewise_constant, refusals = rules.declarations()
    families: dict[str, list] = {}
    for fn, template in templates.items():
        family = template.__module__.rsplit(".", 1)[-1]
        note = (inspect.getdoc(template) or "").split("\n\n")[0].replace("\n", " ")
        constant = ", ".join(sorted(piecewise_constant.get(fn, ())))
        families.setdefault(family, []).append(
            (primitive_name(fn), ", ".join(differentiable_arguments(template)), constant, note))
    lines = ["# Rule catalogue", "",
             "Generated from the registry by `python tools/make_rules_doc.py`; a test checks",
             "that it is in sync. Each rule is a template in `templates/<family>.py`; the",
             "`scipy_*` families are loaded once the user's code imports that SciPy module",
             "(`pip install yota-src[scipy]`). A float argument a rule lists neither as",
             "differentiable nor as piecewise constant (a Bessel function's order, a",
             "distribution function's shape) has no closed-form derivative: a differentiated",
             "value reaching it is a NoDiffRuleError.", "",
             f"**{len(templates)} primitives have gradient rules; {len(nondifferentiable)} are "
             "recorded without a gradient.**", ""]
    for family in sorted(families):
        lines += [f"## {family}", "",
                  "| primitive | differentiable arguments | piecewise constant in | notes |",
                  "|---|---|---|---|"]
        for name, arguments, constant, note in sorted(families[family]):
            lines.append(f"| {name} | {arguments} | {constant} | {note} |")
        lines.append("")
    names = sorted(primitive_name(fn) for fn in nondifferentiable)
    lines += ["## Non-differentiable", "",
              "Recorded (their values are needed at run time) but passing no gradient: "
              "results piecewise constant in every argument (comparisons and logic, rounding, "
              "positions, constructors that read only shapes; `templates/nondiff.py`). Integer "
              "and boolean results never carry a gradient either.", "", ", ".join(names), ""]
    reasons: dict[str, list] = {}
    for fn, reason in refusals.items():
        reasons.setdefault(reason, []).append(primitive_name(fn))
    lines += ["## Refused", "",
              "Recorded, but a differentiated value reaching them is a NoDiffRuleError: "
              "their derivative cannot be given exactly.", ""]
    for reason, refused_names in sorted(reasons.items()):
        lines += [f"{', '.join(sorted(refused_names))}: {reason}.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    options = parser.parse_args()
    text = render()
    if options.check:
        if not PATH.exists() or PATH.read_text() != text:
            print(f"{PATH} is stale: run python tools/make_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    PATH.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
