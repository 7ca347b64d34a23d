"""How generated code and tapes show in Jupyter and IPython.

A notebook calls `_repr_html_` (or `_repr_markdown_`) on the value of a cell;
`GradFunction`, `GradientResult` and `Tape` answer with their source, so a
gradient can be read where it was made. Highlighting is Pygments' where it is
installed (`pip install yota-src[notebook]`): yota-src never needs it, and
without it the source is an escaped `<pre>` block, still readable. Styles are
written inline, so the colours survive a notebook exported to HTML or viewed
on GitHub, which drop stylesheets.
"""

from __future__ import annotations

import html
import re


def source_html(source: str, caption: str = "") -> str:
    """`source` as an HTML block, highlighted as Python where Pygments is
    importable, under an optional one-line `caption` (plain text)."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        body = f"<pre>{html.escape(source)}</pre>"
    else:
        body = highlight(source, PythonLexer(), HtmlFormatter(noclasses=True))
    head = f"<p><code>{html.escape(caption)}</code></p>" if caption else ""
    return f"<div>{head}{body}</div>"


def source_markdown(source: str, caption: str = "") -> str:
    """`source` as a fenced ```python block, the fence longer than any run of
    backticks inside it (a comment may quote one), under an optional caption."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    head = f"`{caption}`\n\n" if caption else ""
    return f"{head}{fence}python\n{source.rstrip()}\n{fence}\n"


def described(value) -> str:
    """A gradient in a few words: `float64 (3, 4)`, `float`, `2 paths`, `None`."""
    if value is None:
        return "None"
    if isinstance(value, dict):
        return f"{len(value)} path{'s' if len(value) != 1 else ''}"
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return f"{dtype} {tuple(shape)}"
    return type(value).__name__
