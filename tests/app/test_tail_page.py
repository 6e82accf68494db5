"""AppTest of the Tail at scale page: its headline is ``judge_tail``'s, its inputs live in the
URL as ``tail.*`` and reach the model, bad links give notices and a safe page, the heatmap is
``tail_heatmap``'s and the simulation check is ``check_tail``'s."""

from __future__ import annotations

import base64
import json
import math

import numpy as np
import pytest
from apptest_helpers import assert_no_exception, open_app

from sdlab_model.page_params import TAIL_INPUTS
from sdlab_model.tail import TailInputs, check_tail, judge_tail
from sdlab_ui import state
from sdlab_ui.sidebar import widget_key
from sdlab_ui.tail import checks, heatmap
from sdlab_ui.tail.controls import WIDGET
from sdlab_ui.tail.fields import default_values
from sdlab_ui.text import ms_text

TAIL_PAGE = "app_pages/tail.py"
NAMES = {0.99: "p99", 0.999: "p99.9"}


def _open(query: dict[str, str] | None = None):
    app = open_app(query or {}, page=TAIL_PAGE)
    assert_no_exception(app)
    return app


def _metrics(app) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


def _expected(inputs: TailInputs) -> dict[str, str]:
    """The headline as it should read: every number a field of ``judge_tail``'s result,
    formatted here independently of the page's helpers."""
    result = judge_tail(inputs)
    shown = {}
    for q, name in NAMES.items():
        shown[f"Request {name}, unhedged"] = ms_text(result.unhedged[q])
        shown[f"Request {name}, hedged"] = ms_text(result.hedged[q])
    shown["Leaf requests hedged"] = f"{result.hedged_share:.1%}"
    work = result.extra_work
    shown["Extra work, cancels instant"] = "—" if work is None else f"{work:+.1%}"
    shown["Leaf utilization, no cancels"] = (
        f"{result.utilization:.1%}" if result.stable else "over 100%"
    )
    return shown


def _widget(app, name: str):
    return (
        app.select_slider(key=WIDGET + name)
        if name == "fanout"
        else app.number_input(key=WIDGET + name)
    )


def _widget_values(app) -> dict:
    return {spec.name: _widget(app, spec.name).value for spec in TAIL_INPUTS}


def _tail_params(app) -> dict[str, str]:
    return {k[5:]: v for k, v in app.query_params.items() if k.startswith("tail.")}


def _inputs_of(query: dict[str, str]) -> TailInputs:
    values = default_values()
    for key, text in query.items():
        name = key[5:]
        values[name] = round(float(text)) if name == "fanout" else float(text)
    return TailInputs(**values)


def test_the_default_page_shows_the_models_headline_and_the_papers_arithmetic():
    app = _open()
    assert _metrics(app) == _expected(TailInputs()), "the default headline is not the model's"
    assert not app.warning, f"the default page warns: {[w.value for w in app.warning]}"
    result = judge_tail(TailInputs())
    deltas = {m.label: m.delta for m in app.metric if m.label.endswith(", hedged")}
    assert deltas == {
        f"Request {name}, hedged": f"{result.change[q]:+.0%} against unhedged"
        for q, name in NAMES.items()
    }, f"the hedged deltas are not the model's: {deltas}"
    said = " ".join(m.value for m in app.markdown)
    line = "With 100 leaves, **63%** of requests wait for at least one leaf slower than its p99"
    assert line in said, f"no arithmetic line: {said}"
    assert f"= {result.slow_share:.4f}" in said, "not slow_request_probability's share"


def test_the_page_is_registered_at_tail_beside_the_shared_sidebar():
    app = _open()
    assert any(t.value.startswith("Tail at scale") for t in app.title), "not the tail page"
    assert app.sidebar.select_slider(key=widget_key("replicas")).value == 2, "no sidebar"
    app.sidebar.select_slider(key=widget_key("replicas")).set_value(4).run()
    assert_no_exception(app)
    assert _metrics(app) == _expected(TailInputs()), "the sidebar moved this page's numbers"


CHANGED = {
    "leaf_p50_ms": "0.8",
    "leaf_p95_ms": "4",
    "leaf_p99_ms": "12",
    "fanout": "2000",
    "hedge_percentile": "99",
    "base_utilization": "0.3",
}
"""A value for each input, other than its default."""


@pytest.mark.parametrize("name", list(CHANGED))
def test_each_input_round_trips_through_the_url_and_reaches_the_model(name):
    query = {f"tail.{name}": CHANGED[name]}
    app = _open(query)
    inputs = _inputs_of(query)
    assert not app.warning, f"{name}: {[w.value for w in app.warning]}"
    assert _widget_values(app)[name] == getattr(inputs, name), f"{name}: the widget"
    assert _tail_params(app) == {name: CHANGED[name]}, f"{name}: URL {_tail_params(app)}"
    shown = _metrics(app)
    assert shown == _expected(inputs), f"{name}: the headline is not the model's"
    assert shown != _expected(TailInputs()), f"{name}: the input did not reach the model"


def test_all_inputs_together_round_trip():
    query = {f"tail.{name}": text for name, text in CHANGED.items()}
    app = _open(query)
    assert _tail_params(app) == CHANGED, f"URL: {_tail_params(app)}"
    assert _metrics(app) == _expected(_inputs_of(query)), "the headline is not the model's"


def test_a_widget_change_goes_into_the_url_and_the_headline():
    app = _open()
    _widget(app, "fanout").set_value(1000).run()
    assert_no_exception(app)
    assert _tail_params(app) == {"fanout": "1000"}, f"URL after the change: {_tail_params(app)}"
    assert _metrics(app) == _expected(TailInputs(fanout=1000)), "headline did not follow"


BAD_VALUES = ("abc", "nan", "-5", "1e999", "", "<b>x</b>", "20000")


@pytest.mark.parametrize("value", BAD_VALUES)
def test_bad_url_values_give_notices_and_the_defaults(value):
    app = _open({f"tail.{spec.name}": value for spec in TAIL_INPUTS})
    notices = " ".join(w.value for w in app.warning)
    assert "kept the default" in notices, f"tail.*={value!r}: no notice: {notices}"
    assert _widget_values(app) == default_values(), f"tail.*={value!r}: not the defaults"
    assert _metrics(app) == _expected(TailInputs()), f"tail.*={value!r}: not the default headline"
    assert _tail_params(app) == {}, f"the bad values stayed in the URL: {_tail_params(app)}"


def test_quantiles_out_of_order_in_the_url_give_a_notice_and_the_defaults():
    app = _open({"tail.leaf_p50_ms": "8", "tail.fanout": "300"})
    notices = " ".join(w.value for w in app.warning)
    assert "must increase" in notices and "starts from its defaults" in notices, notices
    assert _widget_values(app) == default_values(), "not the defaults after a refused set"
    assert _metrics(app) == _expected(TailInputs()), "not the default headline"


def test_quantiles_out_of_order_from_a_widget_say_why_without_failing():
    app = _open()
    _widget(app, "leaf_p95_ms").set_value(0.5).run()
    assert_no_exception(app)
    assert any("must increase" in i.value for i in app.info), "no reason given"
    assert not app.metric, "a headline was drawn for inputs the model refused"
    _widget(app, "leaf_p95_ms").set_value(5.0).run()
    assert _metrics(app) == _expected(TailInputs()), "the page did not come back"


def test_no_steady_state_shows_unstable():
    query = {"tail.hedge_percentile": "50", "tail.base_utilization": "0.9"}
    app = _open(query)
    shown = _metrics(app)
    assert not judge_tail(_inputs_of(query)).stable
    for name in NAMES.values():
        assert shown[f"Request {name}, hedged"] == "unstable (∞)", shown
    assert shown["Extra work, cancels instant"] == "—"
    assert shown["Leaf utilization, no cancels"] == "over 100%"
    assert any("Unstable (∞)" in e.value for e in app.error), "no word on why it is unstable"


def _array(value, shape) -> np.ndarray:
    """A plotly array as the page sends it: nested lists, or a typed binary array."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return data.astype(float).reshape(shape)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=float)


def test_the_heatmap_draws_tail_heatmaps_grid_with_this_design_on_it():
    query = {"tail.fanout": "300", "tail.hedge_percentile": "97.5"}
    app = _open(query)
    inputs = _inputs_of(query)
    grid = heatmap.cached_heatmap(inputs)
    chart = next(c for c in app.get("plotly_chart") if c.key == heatmap.CHART_KEY)
    traces = json.loads(chart.proto.spec)["data"]
    shape = grid.quantile_ms.shape
    expected = np.where(grid.stable, np.log10(np.where(grid.stable, grid.quantile_ms, 1.0)), np.nan)
    assert np.allclose(_array(traces[0]["z"], shape), expected, equal_nan=True), "not the grid"
    assert not grid.stable.all(), "no unstable row in view at the default utilization"
    assert traces[1]["name"] == "unstable (∞)", "no unstable layer"
    row, column = grid.percentiles.index(97.5), grid.fanouts.index(300)
    marker = traces[-1]
    assert (marker["x"], marker["y"]) == ([300], [row]), "this design is not marked"
    cell = grid.quantile_ms[row, column]
    assert ms_text(cell) == _metrics(app)["Request p99.9, hedged"], "cell is not the headline's"
    assert math.isclose(cell, judge_tail(inputs).hedged[0.999], rel_tol=1e-9)


def test_the_simulation_check_shows_check_tails_comparison():
    query = {"tail.fanout": "1000", "tail.hedge_percentile": "90"}
    app = _open(query)
    assert not [t for t in app.table], "a comparison before the button"
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    check = check_tail(_inputs_of(query), seed=checks.SIMULATION_SEED)
    table = app.table[-1].value
    assert list(table["Analytic"]) == [ms_text(r.analytic_ms) for r in check.rows]
    assert list(table["Simulated"]) == [ms_text(r.simulated.estimate) for r in check.rows]
    low, high = check.rows[0].simulated.low, check.rows[0].simulated.high
    assert table["Simulation's 95% interval"].iloc[0] == f"{ms_text(low)} to {ms_text(high)}"
    assert list(table["Agree"]) == ["yes" if r.agrees else "no" for r in check.rows]
    said = " ".join(m.value for m in app.markdown)
    assert ("They agree" if check.agrees else "They disagree") in said, f"no verdict: {said}"
    captions = " ".join(c.value for c in app.caption)
    assert f"{check.requests:,} requests of 1,000 leaves" in captions, "run size not said"


def test_back_and_forward_restore_the_pages_inputs(monkeypatch):
    def back_to(query: dict[str, str]) -> None:
        monkeypatch.setattr(state, "is_history_navigation", lambda: True)
        app.query_params = dict(query)
        app.run()
        monkeypatch.setattr(state, "is_history_navigation", lambda: False)
        assert_no_exception(app)

    app = _open()
    start = dict(app.query_params)
    _widget(app, "base_utilization").set_value(0.7).run()
    after_first = dict(app.query_params)
    _widget(app, "base_utilization").set_value(0.2).run()
    back_to(after_first)
    assert _widget_values(app)["base_utilization"] == 0.7, "Back did not restore the input"
    assert _metrics(app) == _expected(TailInputs(base_utilization=0.7)), "headline not restored"
    back_to(start)
    assert _widget_values(app) == default_values(), "Back to the start did not reset the page"
