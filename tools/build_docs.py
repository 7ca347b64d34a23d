"""Build the API reference from the docstrings with pdoc, failing on any
warning and on any broken reference.

    pip install -e ".[docs]" && python tools/build_docs.py [-o docs/api]

The pages are those of `yota_src` (what `yota_src.__all__` exports) and
`yota_src.errors`, written to `docs/api/` (not committed). pdoc warns about
what it cannot import or parse, and the build turns every warning into a
failure; but pdoc leaves a cross-reference it cannot resolve as plain text,
silently. So the build checks them itself: a backticked dotted name that
starts with `yota_src`, `ys` (the name the docs import it as), `errors` or
a name the package exports (`GradFunction.save`) must become a link, or the
build fails naming the docstring and the reference.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = ["yota_src"]  # and the submodules it exports: yota_src.errors
# How the docstrings spell the package's names, and what pdoc knows them as.
ALIASES = {"ys.": "yota_src.", "errors.": "yota_src.errors."}
# an inline code span holding a dotted name alone (`ys.grad`, `Tape.play()`)
REFERENCE = re.compile(r"<code>((?!\d)\w+(?:\.(?!\d)\w+)+)(\(\))?</code>")


class BrokenReference(UserWarning):
    """A docstring names something of yota-src's that is not documented."""


def install_reference_check(public: set[str]) -> None:
    """Wrap pdoc's `linkify` filter: spell the aliases out before pdoc
    resolves a reference, and warn for every reference of ours that pdoc
    left unlinked (pdoc ignores those silently)."""
    import jinja2
    import pdoc.render
    import pdoc.render_helpers

    original = pdoc.render_helpers.linkify
    roots = {"yota_src", "ys", "errors", *public}

    def spell_out(match: re.Match) -> str:
        name = match.group(1)
        for alias, full in ALIASES.items():
            if name.startswith(alias):
                name = full + name[len(alias):]
        return f"<code>{name}{match.group(2) or ''}</code>"

    @jinja2.pass_context
    def linkify(context, code: str, namespace: str = "", shorten: bool = True):
        linked = original(context, REFERENCE.sub(spell_out, code), namespace, shorten)
        for match in REFERENCE.finditer(str(linked)):
            if match.group(1).split(".")[0] in roots:
                where = f"{context['module'].modulename}.{namespace}".rstrip(".")
                warnings.warn(f"{where}: `{match.group(1)}` names nothing documented",
                              BrokenReference, stacklevel=2)
        return linked

    pdoc.render.env.filters["linkify"] = linkify


def build(output: Path) -> list[Path]:
    """Render the pages into `output`; return the HTML pages written."""
    import pdoc
    import pdoc.render

    import yota_src

    install_reference_check(set(yota_src.__all__))
    pdoc.render.configure(docformat="markdown", show_source=True,
                          footer_text=f"yota-src {yota_src.__version__}")
    pdoc.pdoc(*MODULES, output_directory=output)
    return sorted(output.rglob("*.html"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "api",
                        help="where to write the pages (default: docs/api)")
    options = parser.parse_args(argv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pages = build(options.output)
    problems = [str(warning.message) for warning in caught]
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print(f"API reference: {len(problems)} problem(s); the build fails", file=sys.stderr)
        return 1
    for page in pages:
        print(page.relative_to(options.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
