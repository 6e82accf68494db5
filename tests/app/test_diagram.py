"""The server-drawn diagram: Graphviz's SVG escaped, refused if unsafe, one line for Markdown."""

from __future__ import annotations

import shutil

import pytest

from sdlab_ui import diagram, report


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_server_drawn_diagram_escapes_its_labels():
    hostile = 'digraph { a [label="<script>alert(1)</script> $1 and $2" onclick="x()"] }'
    svg = diagram.diagram_svg(hostile)
    assert svg is not None and svg.startswith('<svg width="100%"'), f"no SVG: {svg!r:.80}"
    assert "<script" not in svg and "onclick" not in svg, "a label became markup"
    assert "&lt;script&gt;" in svg and "$" not in svg, "the label's text was not escaped"
    assert "\n" not in svg, "a line break would end Markdown's HTML block"


UNSAFE_SVGS = (
    "<svg><script>x()</script></svg>",
    "<svg><SCRIPT>x()</SCRIPT></svg>",
    '<svg><g onload="x()"></g></svg>',
    '<svg><g\tONMOUSEOVER ="x()"></g></svg>',
    '<svg><a href="JavaScript:x()">a</a></svg>',
    "<svg><foreignObject><div>x</div></foreignObject></svg>",
    '<svg><text>batch ≈ 1.5 · 5 ms</text><g\nonClick="x()"></g></svg>',
    "<svg/onload=x()></svg>",
    '<svg><g id="a"onclick="x()"></g></svg>',
    "<svg><g id='a'onclick='x()'></g></svg>",
)


@pytest.mark.parametrize("unsafe", UNSAFE_SVGS)
def test_an_svg_holding_a_script_or_handler_is_refused(monkeypatch, unsafe):
    monkeypatch.setattr(report, "architecture_svg", lambda dot: unsafe)
    assert diagram.diagram_svg(f"digraph {{ /* {unsafe} */ }}") is None, f"{unsafe} was kept"


def test_an_svg_with_on_inside_words_is_kept(monkeypatch):
    safe = (
        '<svg width="1pt" height="1pt">'
        '<text font-family="x">batching on · one model · conversion=1</text></svg>'
    )
    monkeypatch.setattr(report, "architecture_svg", lambda dot: safe)
    assert diagram.diagram_svg("digraph { /* safe */ }") is not None, "a safe SVG was refused"


def test_a_drawn_svg_is_one_line_without_dollar_signs(monkeypatch):
    """Markdown passes a one-line HTML block through untouched; "$...$" would start a formula."""
    drawn = '<svg width="2pt" height="1pt">\r\n<g>\r<text>$5 · a\nb</text>\n</g></svg>\n'
    monkeypatch.setattr(report, "architecture_svg", lambda dot: drawn)
    svg = diagram.diagram_svg("digraph { /* one line */ }")
    assert svg is not None, "a safe SVG was refused"
    assert not {"\r", "\n", "$"} & set(svg), f"line breaks or dollars left: {svg!r}"
    assert "<text>&#36;5 · a b</text>" in svg, f"the text changed: {svg!r}"
