"""Jupyter shows GradFunction, GradientResult and Tape as highlighted source
(Pygments where installed, an escaped <pre> where not); print and repr stay
as they were."""

import builtins
import html as html_module
import re

import numpy as np
import pytest

import yota_src as ys
from yota_src.ir import display


def loss(W, x):
    return np.sum(np.tanh(W @ x) ** 2)


@pytest.fixture
def made(rng):
    W, x = rng.standard_normal((3, 4)), rng.standard_normal(4)
    _, g = ys.grad(loss, W, x)
    _, tape = ys.trace(loss, W, x)
    return ys.simplegrad(loss, W, x), g, tape


@pytest.fixture
def without_pygments(monkeypatch):
    real_import = builtins.__import__

    def refusing(name, *args, **kwargs):
        if name == "pygments" or name.startswith("pygments."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refusing)


def sources(made):
    df, g, tape = made
    return [(df, df.source), (g, g.source), (tape, str(tape))]


def test_html_is_highlighted_source_with_pygments(made):
    pytest.importorskip("pygments")
    for shown, source in sources(made):
        html = shown._repr_html_()
        assert 'style="color' in html  # inline styles: they survive an HTML export
        assert "<pre" in html
        shown_text = html_module.unescape(re.sub(r"<[^>]+>", "", html))
        assert source.strip() in shown_text  # every character, whatever the token spans


def test_html_is_escaped_pre_without_pygments(made, without_pygments):
    for shown, source in sources(made):
        html = shown._repr_html_()
        assert "<pre>" in html and 'style="color' not in html
        assert display.source_html(source) == html or "GradientResult" in html
    assert display.source_html("if a < b: c = '&'") == \
        "<div><pre>if a &lt; b: c = &#x27;&amp;&#x27;</pre></div>"


def test_markdown_is_a_fenced_python_block(made):
    for shown, source in sources(made):
        text = shown._repr_markdown_()
        body = text[text.index("```python\n"):]
        assert body == f"```python\n{source.rstrip()}\n```\n"


def test_markdown_fence_outlasts_backticks_in_the_source():
    text = display.source_markdown("x = 1  # ```quoted```\n")
    assert text.startswith("````python\n") and text.endswith("\n````\n")


def test_gradient_result_says_what_each_gradient_is(made):
    _, g, _ = made
    assert g._repr_markdown_().startswith(
        "`GradientResult: g[0] float64 (3, 4); g[1] float64 (4,)`\n\n```python\n")
    assert "g[0] float64 (3, 4)" in g._repr_html_()


def test_print_str_and_repr_are_unchanged(made, capsys):
    df, g, tape = made
    listing = str(tape)
    assert listing.startswith("%1 = input W  :: float64 (3, 4)")
    assert repr(tape) == listing
    print(tape)
    assert capsys.readouterr().out == listing + "\n"
    assert str(df) == df.source and repr(df) == "<GradFunction grad_loss>"
    assert repr(g) == f"GradientResult({list(g)!r})"
