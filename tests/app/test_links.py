"""Links: short URLs that reopen the same lab, and a lab that follows its URL back and forth."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from apptest_helpers import assert_no_exception, open_app, sidebar_value

from sdlab_model import SCENARIOS
from sdlab_model.params import DEFAULT_MODEL
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.sidebar import widget_key
from sdlab_ui.url import parse_query_params, url_params

# The query string of any card (before: 334 characters for every lab, the default one included).
CARD_QUERY_MAX_CHARS = 120


def test_the_default_lab_names_only_its_model():
    app = open_app()
    assert_no_exception(app)
    assert app.query_params == {"model": DEFAULT_MODEL}, (
        f"the default lab's URL: {app.query_params}"
    )


@pytest.mark.parametrize("card", SCENARIOS, ids=[card.id for card in SCENARIOS])
def test_a_cards_link_is_short_and_reopens_the_card(card):
    params = url_params(card.workload(), DEFAULT_MODEL)
    query = urlencode(params)
    assert len(query) <= CARD_QUERY_MAX_CHARS, f"card {card.id}: {len(query)} chars: {query}"
    workload, model, notices = parse_query_params({k: [v] for k, v in params.items()})
    assert (workload, model, notices) == (card.workload(), DEFAULT_MODEL, ()), (
        f"card {card.id}: its link {query} reopens a different lab"
    )


def test_slider_floats_are_written_as_the_slider_shows_them():
    # A linear slider's float arrives with binary noise; a default's thirds are never written.
    workload = Workload(cpu_batch_overhead_share=0.29000000000000004, gpu=True)
    params = url_params(workload, "teaching")
    assert params == {"gpu": "1", "cpu_batch_overhead_share": "0.29", "model": "teaching"}, (
        f"unexpected URL parameters {params}"
    )
    assert "0.8333" not in urlencode(url_params(Workload(), DEFAULT_MODEL)), "a default was written"


def test_an_off_ladder_value_keeps_its_digits():
    params = url_params(Workload(rate_rps=1234.5, replicas=37), DEFAULT_MODEL)
    assert params == {"rate_rps": "1234.5", "replicas": "37"}, f"unexpected {params}"


def _back_to(app, query: dict[str, str], monkeypatch) -> None:
    """Rerun as the browser does on Back or Forward: that entry's query, marked as navigation."""
    monkeypatch.setattr(state, "is_history_navigation", lambda: True)
    app.query_params = dict(query)
    app.run()
    monkeypatch.setattr(state, "is_history_navigation", lambda: False)


def test_the_lab_follows_its_url_back_and_forward(monkeypatch):
    app = open_app()
    start = dict(app.query_params)
    app.select_slider(key=widget_key("replicas")).set_value(12).run()
    after_first = dict(app.query_params)
    app.select_slider(key=widget_key("replicas")).set_value(20).run()
    assert app.query_params.get("replicas") == "20", "the URL does not follow the slider"
    _back_to(app, after_first, monkeypatch)
    assert_no_exception(app)
    assert sidebar_value(app, "replicas") == 12, "Back did not restore the earlier replicas"
    _back_to(app, start, monkeypatch)
    assert sidebar_value(app, "replicas") == 2, "Back to the default lab did not reset it"
    _back_to(app, {"replicas": "20"}, monkeypatch)
    assert sidebar_value(app, "replicas") == 20, "Forward did not restore the later replicas"
    app.select_slider(key=widget_key("replicas")).set_value(3).run()
    assert sidebar_value(app, "replicas") == 3, "a slider move lost to the URL"
    assert app.query_params.get("replicas") == "3", "the URL does not follow the slider"


def test_a_run_that_is_not_back_or_forward_keeps_the_lab(monkeypatch):
    app = open_app({"replicas": "12"})
    # A page switch arrives with the query cleared; a late rerun may carry an older URL.
    for query in ({}, {"replicas": "3"}):
        app.query_params = dict(query)
        app.run()
        assert sidebar_value(app, "replicas") == 12, f"a run with URL {query} changed the lab"
        assert app.query_params.get("replicas") == "12", "the URL was not written back"
    # Back to the bare entry Streamlit pushes on a page switch is not a lab: the lab stays.
    _back_to(app, {}, monkeypatch)
    assert sidebar_value(app, "replicas") == 12, "Back to a bare entry reset the lab"
