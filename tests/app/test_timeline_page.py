"""AppTest of the Timeline page: it runs from the sidebar's workload, keeps its inputs in the URL,
refuses bad input safely, and checks itself against the simulator on request."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import numpy as np
from apptest_helpers import assert_no_exception, open_app

from sdlab_model.page_params import (
    TIMELINE_CHOICE_BY_NAME,
    TIMELINE_CHOICES,
    TIMELINE_INPUTS,
    TIMELINE_KNOBS,
)
from sdlab_model.timeline import (
    AutoscalerConfig,
    ColdStart,
    TimelineInputs,
    TrafficShape,
    run_fixed_for_peak,
    run_timeline,
)
from sdlab_model.timeline.autoscalers import CPU_NODE_PROVISION_S
from sdlab_model.timeline.comparison import compare_with_fixed
from sdlab_model.timeline.hpa_phases import hpa_band
from sdlab_model.timeline.model import replicas_at_target
from sdlab_model.workload import Workload
from sdlab_ui.state import plain_text
from sdlab_ui.text import money

TIMELINE_PAGE = "app_pages/timeline.py"
STEP_3X = {"tl.traffic": "step", "tl.factor": "3", "tl.duration_s": "600"}
"""The 3x step at 60 s over 10 minutes these tests were written on (the default is a spike)."""


def _charts(app) -> set[str]:
    return {chart.key for chart in app.get("plotly_chart")}


def _metrics(app) -> list[tuple[str, str]]:
    return [(m.label, m.value) for m in app.metric]


def _declared_default_inputs() -> TimelineInputs:
    """The timeline the page's declared defaults describe, on the sidebar's default workload."""
    value = {spec.name: spec.default for spec in TIMELINE_INPUTS}
    choice = {spec.name: spec.default for spec in TIMELINE_CHOICES}
    workload = Workload()
    return TimelineInputs(
        workload=workload,
        traffic=TrafficShape(
            kind=choice["traffic"],
            base_rate_rps=workload.rate_rps,
            factor=value["factor"],
            at_s=value["at_s"],
            spike_duration_s=value["spike_s"],
            peak_to_trough=value["peak_to_trough"],
        ),
        autoscaler=AutoscalerConfig(
            kind=choice["scaler"],
            min_replicas=int(value["min_replicas"]),
            max_replicas=int(value["max_replicas"]),
            **{knob: value[name] for name, knob in TIMELINE_KNOBS.items()},
        ),
        cold_start=ColdStart(value["provision_s"], value["model_gb"], value["load_gbps"]),
        duration_s=value["duration_s"],
        step_s=value["step_s"],
        queue_limit_requests=value["queue_limit"],
    )


def _drawn_line(app, name: str) -> np.ndarray:
    """The y values of the timeline chart's line ``name``, as the page sent them."""
    (chart,) = [c for c in app.get("plotly_chart") if c.key == "timeline.chart"]
    (trace,) = [t for t in json.loads(chart.proto.spec)["data"] if t.get("name") == name]
    y = trace["y"]
    if isinstance(y, dict):  # plotly's typed array: {"dtype": "f8", "bdata": base64}
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=np.dtype(y["dtype"]))
    return np.asarray(y, dtype=float)


def test_the_default_timeline_scales_and_says_what_the_autoscaler_bought():
    app = open_app(page=TIMELINE_PAGE)
    assert_no_exception(app)
    ready = _drawn_line(app, "ready")
    inputs = _declared_default_inputs()
    autoscaled, fixed = run_timeline(inputs), run_fixed_for_peak(inputs)
    assert np.array_equal(ready, autoscaled.ready_replicas), "the chart is not the model's run"
    peak = int(ready.max())
    assert peak > ready[0], f"the default fleet never scaled up: ready {ready[0]:g}..{peak}"
    assert ready[-1] < peak, f"the default fleet never scaled back down from {peak}"
    comparison = compare_with_fixed(autoscaled, fixed)
    shown = [m.value for m in app.markdown]
    assert plain_text(comparison.sentence) in shown, f"no comparison with the fixed fleet: {shown}"
    said = comparison.sentence
    for number in (
        f"{autoscaled.totals.minutes_over_target} minute",
        f"fixed fleet's {fixed.totals.minutes_over_target}",
        money(autoscaled.totals.usd),
        money(fixed.totals.usd),
        f"fixed fleet of {fixed.fixed_replicas} replicas",
    ):
        assert number in said, f"{number!r} is not in: {said}"


def test_the_page_shows_the_models_totals_for_the_sidebar_workload():
    query = {"rate_rps": "3000", "replicas": "4"}
    app = open_app(query | STEP_3X, page=TIMELINE_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(query)
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="step", base_rate_rps=3000, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=4, max_replicas=100),
        cold_start=ColdStart(CPU_NODE_PROVISION_S, 2.0, 2.0),
        duration_s=600,
    )
    autoscaled, fixed = run_timeline(inputs), run_fixed_for_peak(inputs)
    shown = _metrics(app)
    over = [value for label, value in shown if label == "Minutes over target"]
    expected = [
        f"{r.totals.minutes_over_target} of {r.totals.minutes}" for r in (autoscaled, fixed)
    ]
    assert over == expected, f"minutes over target shown {over}, model says {expected}"
    costs = [value for label, value in shown if label == "Cost"]
    assert costs == [money(autoscaled.totals.usd), money(fixed.totals.usd)], f"costs {costs}"
    # The four panels over time are one chart; the canary section's share over time the other.
    assert _charts(app) == {"timeline.chart", "canary.chart"}, f"charts {_charts(app)}"
    subheaders = [h.value for h in app.subheader]
    assert any(h.startswith("Canary rollout") for h in subheaders), f"no canary: {subheaders}"
    assert app.query_params.get("rate_rps") == "3000", "the lab's inputs stay in the URL"


def test_the_hpa_ramp_story_quotes_the_models_numbers():
    query = {"rate_rps": "3000", "replicas": "4", "dynamic_batching": "0"}
    app = open_app(query | STEP_3X, page=TIMELINE_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(query)
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="step", base_rate_rps=3000, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=4, max_replicas=100),
        cold_start=ColdStart(CPU_NODE_PROVISION_S, 2.0, 2.0),
        duration_s=600,
    )
    story = " ".join(m.value for m in app.markdown if m.value.startswith("Decisions:"))
    first = next(iter(run_timeline(inputs).decision_times_s))
    assert f"at {first:.0f} s" in story, f"the first decision's time is not in: {story}"
    ramp = np.diff(run_timeline(inputs).decision_times_s[:5])
    assert set(ramp) == {60.0}, f"the model's ramp steps are {ramp}, not 60 s apart"
    assert "it sees the pods it adds 60 s after deciding them, not 36 s" in story, story
    settled = replicas_at_target(inputs, 9000.0)
    assert f"settle at {settled} replicas" in story, f"settled fleet not the model's: {story}"


def test_a_shared_link_reopens_the_same_timeline():
    query = {"tl.traffic": "step", "tl.factor": "5", "tl.scaler": "kpa", "tl.duration_s": "300"}
    app = open_app(query, page=TIMELINE_PAGE)
    assert_no_exception(app)
    assert app.selectbox(key="timeline.widget.traffic").value == "step", "shape from the URL"
    assert app.selectbox(key="timeline.widget.scaler").value == "kpa", "policy from the URL"
    assert app.number_input(key="timeline.widget.factor").value == 5.0, "factor from the URL"
    app.number_input(key="timeline.widget.factor").set_value(7.0).run()
    assert_no_exception(app)
    assert app.query_params.get("tl.factor") == "7", f"URL {dict(app.query_params)}"
    assert app.query_params.get("tl.traffic") == "step", "unchanged inputs stay in the URL"


def test_bad_url_values_fall_back_with_a_notice():
    query = {"tl.factor": "lots", "tl.traffic": "tsunami", "tl.step_s": "-4"}
    app = open_app(query, page=TIMELINE_PAGE)
    assert_no_exception(app)
    warnings = " ".join(w.value for w in app.warning)
    assert "not a number" in warnings and "not a choice" in warnings, f"warnings: {warnings}"
    assert app.number_input(key="timeline.widget.step_s").value == 0.1, "clamped to the minimum"
    default = TIMELINE_CHOICE_BY_NAME["traffic"].default
    assert app.selectbox(key="timeline.widget.traffic").value == default, "kept the default"


def _hpa_step_inputs(window_s: float) -> TimelineInputs:
    """The page's 3x step on 4 unbatched replicas at 3,000 req/s, at a metric window."""
    workload, _ = Workload.from_strings(
        {"rate_rps": "3000", "replicas": "4", "dynamic_batching": "0"}
    )
    return TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="step", base_rate_rps=3000, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(
            kind="hpa", min_replicas=4, max_replicas=100, hpa_metric_window_s=window_s
        ),
        cold_start=ColdStart(CPU_NODE_PROVISION_S, 2.0, 2.0),
        duration_s=600,
    )


def test_the_hpa_metric_window_is_an_input_in_the_url_and_reaches_the_page():
    query = {"rate_rps": "3000", "replicas": "4", "dynamic_batching": "0", "tl.hpa_window_s": "30"}
    app = open_app(query | STEP_3X, page=TIMELINE_PAGE)
    assert_no_exception(app)
    window = app.number_input(key="timeline.widget.hpa_window_s")
    assert window.value == 30.0, f"the window shows {window.value}, not the URL's 30"
    inputs = _hpa_step_inputs(30.0)
    result = run_timeline(inputs)
    story = " ".join(m.value for m in app.markdown if m.value.startswith("Decisions:"))
    decisions = result.decisions[result.decisions >= 0]
    for time_s, total in zip(result.decision_times_s[:3], decisions[:3], strict=True):
        assert f"{total} at {time_s:.0f} s" in story, f"not the 30 s window's run: {story}"
    # Syncs every 15 s, scrapes every 30 s; a pod counts 36 + 30 s after its decision: from a
    # sync at 15 s the scrape at 90 s (75 s), from one at 30 s the scrape at 120 s (90 s).
    assert "once a whole 30 s metric window" in story and "(every 30 s)" in story, story
    assert "it sees the pods it adds 75–90 s after deciding them" in story, story
    band = hpa_band(inputs)
    caption = " ".join(c.value for c in app.caption if c.value.startswith("Over 25 pairings"))
    assert "scrapes every 30 s (its metric window)" in caption, f"band: {caption}"
    assert "scrapes at 30 s, 60 s, …" in caption, f"the aligned clocks: {caption}"
    first, best = band.times_s[0], band.best
    assert f"comes at {first.low:.0f}–{first.high:.0f} s" in caption, f"band: {caption}"
    size = band.totals[0]
    sizes = f"{size.low:.0f}" if size.low == size.high else f"{size.low:.0f}–{size.high:.0f}"
    assert f"to {sizes} replicas;" in caption, f"one size is written once: {caption}"
    ladder = ", ".join(f"{n} at {t:.0f} s" for t, n in best.scale_ups(len(band.times_s)))
    marked = (
        f"best case is sync phase {best.sync_phase_s:g} s, scrape phase "
        f"{best.scrape_phase_s:g} s (the most replica-seconds asked for): {ladder}"
    )
    assert marked in caption, f"the best case is not marked: {caption}"
    window.set_value(45.0).run()
    assert_no_exception(app)
    assert app.query_params.get("tl.hpa_window_s") == "45", f"URL {dict(app.query_params)}"
    app.number_input(key="timeline.widget.hpa_window_s").set_value(15.0).run()
    assert_no_exception(app)
    assert "tl.hpa_window_s" not in app.query_params, "the default window stays out of the URL"


def test_a_bad_hpa_metric_window_in_the_url_is_refused_with_a_notice():
    for text, shown, says in (("5", 10.0, "outside the range; used 10"), ("soon", 15.0, "not a")):
        app = open_app({"tl.hpa_window_s": text}, page=TIMELINE_PAGE)
        assert_no_exception(app)
        warnings = " ".join(w.value for w in app.warning)
        assert "HPA metric window" in warnings and says in warnings, f"{text}: {warnings}"
        value = app.number_input(key="timeline.widget.hpa_window_s").value
        assert value == shown, f"a window of {text!r} in the URL shows {value}, not {shown}"


def test_a_bad_trace_file_changes_nothing_and_a_good_one_runs():
    app = open_app({"tl.traffic": "uploaded"}, page=TIMELINE_PAGE)
    assert_no_exception(app)
    assert any("Upload a trace CSV" in i.value for i in app.info), "asks for a file"
    uploader = app.get("file_uploader")[0]
    assert uploader is not None, "the uploader is shown for an uploaded shape"
    app.file_uploader(key="timeline.upload").set_value(
        ("trace.csv", b"time_s,rate_rps\n0,100\n5,oops\n", "text/csv")
    ).run()
    assert_no_exception(app)
    errors = " ".join(e.value for e in app.error)
    assert "row 3" in errors and "Nothing was changed" in errors, f"errors: {errors}"
    assert any("Upload a trace CSV" in i.value for i in app.info), "still no trace in use"
    assert "timeline.chart" not in _charts(app), "a bad trace must not run the timeline"
    app.file_uploader(key="timeline.upload").set_value(
        ("trace.csv", b"time_s,rate_rps\n0,100\n120,400\n", "text/csv")
    ).run()
    assert_no_exception(app)
    assert "timeline.chart" in _charts(app), "a good trace runs the timeline"


def test_a_trace_saved_with_a_byte_order_mark_is_read_like_the_scenario_file():
    app = open_app({"tl.traffic": "uploaded"}, page=TIMELINE_PAGE)
    app.file_uploader(key="timeline.upload").set_value(
        ("trace.csv", "\ufefftime_s,rate_rps\n0,100\n120,400\n".encode(), "text/csv")
    ).run()
    assert_no_exception(app)
    errors = " ".join(e.value for e in app.error)
    assert not errors, f"a UTF-8 BOM (Excel's CSV UTF-8) was refused: {errors}"
    assert "timeline.chart" in _charts(app), "the trace runs the timeline"


def test_the_simulator_check_runs_on_request():
    query = {
        "rate_rps": "600",
        "replicas": "2",
        "dynamic_batching": "0",
        "lb_policy": "central_queue",
    }
    app = open_app(query | STEP_3X | {"tl.duration_s": "300"}, page=TIMELINE_PAGE)
    assert_no_exception(app)
    app.button(key="timeline.check").click().run()
    assert_no_exception(app)
    text = " ".join(m.value for m in app.markdown)
    assert "Minutes over the target: model" in text, "the check's comparison is shown"
    assert "timeline.check_chart" in _charts(app), "the per-minute comparison chart is drawn"


def test_a_visitors_clear_cache_message_does_not_cost_the_check_again(monkeypatch):
    import streamlit as st

    from sdlab_model.timeline import check

    query = {"rate_rps": "600", "replicas": "2", "lb_policy": "random"}
    app = open_app(query | STEP_3X | {"tl.duration_s": "120"}, page=TIMELINE_PAGE)
    app.button(key="timeline.check").click().run()
    assert_no_exception(app)
    runs = []
    simulate = check.simulate_timeline
    monkeypatch.setattr(
        check, "simulate_timeline", lambda *a, **k: runs.append(1) or simulate(*a, **k)
    )
    st.cache_data.clear()  # what Streamlit does on any visitor's clear_cache message
    st.cache_resource.clear()
    app.button(key="timeline.check").click().run()
    assert_no_exception(app)
    assert "Minutes over the target" in " ".join(m.value for m in app.markdown), "shown again"
    assert not runs, "clear_cache made the timeline check simulate its requests again"


def test_a_timeline_over_the_checks_cap_is_checked_over_its_first_minutes(monkeypatch):
    from sdlab_model.timeline import check

    monkeypatch.setattr(check, "MAX_SIMULATED_REQUESTS", 100_000)  # one minute at 1,000 req/s
    query = {"rate_rps": "1000", "lb_policy": "random", "tl.traffic": "constant"}
    query["tl.duration_s"] = "600"
    app = open_app(query, page=TIMELINE_PAGE)
    assert_no_exception(app)
    offer = " ".join(c.value for c in app.caption)
    assert "the first 1 of 10 minutes (60,000 requests" in offer, offer
    app.button(key="timeline.check").click().run()
    assert_no_exception(app)
    said = " ".join(c.value for c in app.caption)
    assert "Simulated the first 1 of 10 minutes" in said, f"the page says what it simulated: {said}"
    text = " ".join(m.value for m in app.markdown)
    assert "over 1 minutes with at least 200 requests" in text, text


def test_kpa_and_ray_knobs_are_on_the_page_in_the_url_and_reach_the_model():
    query = {
        "rate_rps": "3000",
        "replicas": "4",
        "dynamic_batching": "0",
        "tl.scaler": "kpa",
        "tl.kpa_stable_s": "120",
        "tl.kpa_panic_pct": "20",
        "tl.kpa_panic_x": "1.5",
    }
    app = open_app(query | STEP_3X | {"tl.duration_s": "300"}, page=TIMELINE_PAGE)
    assert_no_exception(app)
    for key, expected in (("kpa_stable_s", 120.0), ("kpa_panic_pct", 20.0), ("kpa_target", 0.7)):
        shown = app.number_input(key=f"timeline.widget.{key}").value
        assert shown == expected, f"{key} shows {shown}, not {expected}"
    # Unbatched, the 3x step outgrows the 4 replicas and the KPA's windows change its cost.
    workload, _ = Workload.from_strings(
        {"rate_rps": "3000", "replicas": "4", "dynamic_batching": "0"}
    )
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="step", base_rate_rps=3000, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(
            kind="kpa",
            min_replicas=4,
            max_replicas=100,
            kpa_stable_window_s=120,
            kpa_panic_window_percentage=20,
            kpa_panic_threshold=1.5,
        ),
        cold_start=ColdStart(CPU_NODE_PROVISION_S, 2.0, 2.0),
        duration_s=300,
    )
    expected = run_timeline(inputs).totals
    knative = replace(
        inputs.autoscaler,
        kpa_stable_window_s=60,
        kpa_panic_window_percentage=10,
        kpa_panic_threshold=2.0,
    )
    default_kpa = run_timeline(replace(inputs, autoscaler=knative)).totals
    assert default_kpa.usd != expected.usd, "the chosen knobs must change the cost"
    over = next(value for label, value in _metrics(app) if label == "Minutes over target")
    assert over == f"{expected.minutes_over_target} of {expected.minutes}", f"shown {over}"
    costs = next(value for label, value in _metrics(app) if label == "Cost")
    assert costs == money(expected.usd), f"cost shown {costs}, model {money(expected.usd)}"
    app.selectbox(key="timeline.widget.scaler").set_value("ray").run()
    assert_no_exception(app)
    app.number_input(key="timeline.widget.ray_up_s").set_value(60.0).run()
    assert_no_exception(app)
    assert app.query_params.get("tl.ray_up_s") == "60", f"URL {dict(app.query_params)}"
    assert app.query_params.get("tl.kpa_stable_s") == "120", "a hidden knob keeps its value"
    assert not any(n.key == "timeline.widget.kpa_stable_s" for n in app.number_input), (
        "KPA knobs are hidden under Ray Serve"
    )


def test_the_hpa_band_over_sync_and_scrape_phases_is_the_models():
    query = {"rate_rps": "3000", "replicas": "4", "dynamic_batching": "0"}
    app = open_app(query | STEP_3X, page=TIMELINE_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(query)
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="step", base_rate_rps=3000, factor=3, at_s=60),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=4, max_replicas=100),
        cold_start=ColdStart(CPU_NODE_PROVISION_S, 2.0, 2.0),
        duration_s=600,
    )
    band = hpa_band(inputs)
    first, gaps = band.times_s[0], band.gaps_s
    captions = " ".join(c.value for c in app.caption if c.value.startswith("Over 25 pairings"))
    assert f"comes at {first.low:.0f}–{first.high:.0f} s" in captions, f"band: {captions}"
    assert f"{gaps.low:.0f}–{gaps.high:.0f} s apart, most often {gaps.common:.0f} s" in captions
    sync, scrape = band.best.sync_phase_s, band.best.scrape_phase_s
    best = f"best case is sync phase {sync:g} s, scrape phase {scrape:g} s"
    if sync == scrape == 0:
        best = "best case of them"
    assert best in captions, f"the best case is not marked: {captions}"
