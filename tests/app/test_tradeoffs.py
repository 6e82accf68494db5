"""AppTest of the Tradeoffs & sources page."""

from __future__ import annotations

from apptest_helpers import TRADEOFFS_PAGE, assert_no_exception, open_app

from sdlab_model import FORMULAS, SOURCES, TEACHING_ASSUMPTIONS, TRADEOFFS


def test_tradeoffs_page_shows_decisions_sources_assumptions_formulas():
    app = open_app(page=TRADEOFFS_PAGE)
    assert_no_exception(app)
    text = " ".join(m.value for m in app.markdown)
    for tradeoff in TRADEOFFS:
        assert tradeoff.title in text and tradeoff.gain in text, f"{tradeoff.title} missing"
    for source in SOURCES:
        assert f"]({source.url})" in text, f"no link to {source.url}"
    for assumption in TEACHING_ASSUMPTIONS:
        assert assumption.queueing_refinement in text, f"{assumption.title}: no refinement"
    shown = len(app.latex)
    assert shown == len(FORMULAS), f"{shown} formulas shown, {len(FORMULAS)} exist"
