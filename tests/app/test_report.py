"""The report builders: every section, nothing fetched from a network, the diagram or its source."""

from __future__ import annotations

import re

import pytest

from sdlab_model import SCENARIOS
from sdlab_ui import cache, diagram, report
from sdlab_ui.lab import sections
from sdlab_ui.url import link_query

CARD = SCENARIOS[2]  # GPU + autoscaling: every part of the report has something to say


@pytest.fixture(scope="module")
def view() -> cache.LabView:
    return cache._lab_view(CARD.workload(), "queueing")


@pytest.fixture(scope="module")
def html(view) -> str:
    return sections._html_report(view, link_query(CARD.workload(), "queueing"))


def test_the_html_report_has_every_section_in_order(html):
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert tuple(headings) == report.SECTIONS, f"the report's sections are {headings}"


def test_the_html_report_needs_no_network(html):
    assert not re.search(r"<script[^>]+src=", html), "the report loads a script from elsewhere"
    assert not re.search(r"<link\b", html), "the report links a stylesheet or font"
    assert not re.search(r"""\bsrc=["']?(https?:)?//""", html), "the report fetches something"
    # plotly.js inlined once (its licence banner opens the bundle), not once per chart.
    assert html.count("* plotly.js v") == 1, "plotly.js is not inlined exactly once"
    assert html.count('class="plotly-graph-div"') == 2, "expected two charts: breakdown, heatmap"


def test_the_html_reports_charts_carry_their_traces(html):
    """Both charts are made from specs (a PreparedFigure each), whose traces live only in their
    dict: copying the figure drew two empty charts."""
    assert '"name":"compute"' in html, "the breakdown chart has no bars"
    assert '"type":"heatmap"' in html, "the heatmap chart has no heatmap"


def test_the_html_report_carries_the_design(html, view):
    assert "<svg" in html[html.index('id="recommended-architecture"') :], "no diagram SVG"
    assert view.result.stage.title in html, "the recommended shape is missing"
    assert "?rate_rps=25000" in html, "the link to reopen the lab is missing"


def test_without_graphviz_the_report_gives_the_diagrams_source(view):
    dot = diagram.diagram_dot(view.result)
    page = report.html_report(view, heatmap=None, dot=dot, svg=None, link_query="")
    assert "Graphviz is not installed" in page, "no note that the diagram is missing"
    assert "<pre>digraph" in page, "the DOT source is missing"
    assert "The heatmap could not be computed" in page, "no note for the missing heatmap"


def test_the_markdown_summary_has_the_same_sections_and_the_p99(view):
    text = report.markdown_report(view, link_query="?rate_rps=25000")
    headings = tuple(re.findall(r"^## (.*)$", text, flags=re.MULTILINE))
    charts = {"p99 heatmap"}  # a chart only: the Markdown says the HTML report has it
    assert headings == tuple(s for s in report.SECTIONS if s not in charts), headings
    p99, _ = report._headline(view)
    assert f"**{report.p99_text(view.result, p99)}**" in text, "the headline p99 is missing"


def test_the_html_download_is_built_once_per_design_holding_the_python_lane(view, monkeypatch):
    from sdlab_ui import downloads
    from sdlab_ui.server import budget

    downloads.built_report.cache_clear()
    lanes = []
    build = report.html_report

    def counted(*args, **kwargs):
        lanes.append(budget.held_lane())
        return build(*args, **kwargs)

    monkeypatch.setattr(report, "html_report", counted)
    query = link_query(CARD.workload(), "queueing")
    first = sections._html_report(view, query)
    again = sections._html_report(view, query)
    assert again is first, "the same design's report is kept, not built again"
    assert lanes == [budget.PYTHON], f"one build, holding the PYTHON lane: lanes held {lanes}"
    other = cache._lab_view(SCENARIOS[0].workload(), "queueing")
    sections._html_report(other, link_query(SCENARIOS[0].workload(), "queueing"))
    assert len(lanes) == 2, "another design is built"


def test_a_report_build_waits_while_the_python_lane_is_full(view):
    import threading

    from sdlab_ui import downloads
    from sdlab_ui.server import budget

    downloads.built_report.cache_clear()
    for _ in range(budget.PYTHON.slots):
        budget.PYTHON.acquire()
    done = threading.Event()
    query = link_query(CARD.workload(), "queueing")
    worker = threading.Thread(target=lambda: (sections._html_report(view, query), done.set()))
    try:
        worker.start()
        assert not done.wait(1.0), "a report was built while the PYTHON lane was taken"
    finally:
        for _ in range(budget.PYTHON.slots):
            budget.PYTHON.release()
    assert done.wait(30.0), "the report was built once a slot was free"
    worker.join()


def test_the_reports_write_decision_states_as_words(view, html):
    states = {decision.state for decision in view.result.decisions}
    assert "not-yet" in states, f"this card has no not-yet decision, so the test is void: {states}"
    text = report.markdown_report(view, link_query="?rate_rps=25000")
    for name, written in (("Markdown", text), ("HTML", html)):
        assert "not-yet" not in written, f"the {name} report writes the code 'not-yet'"
        assert "not yet" in written, f"the {name} report lost the not-yet decisions"
