"""AppTest of the LLM serving page: its headline is ``llm_latency``'s, its inputs live in the URL
as ``llm.*``, its cards load their scenarios, and bad links give notices and a safe page."""

from __future__ import annotations

import base64
import json
import math
import shutil

import numpy as np
import pytest
from apptest_helpers import assert_no_exception, open_app

from sdlab_model.llm import (
    LlmWorkload,
    cheapest_deployments,
    compare_disaggregation,
    llm_latency,
    simulate_llm,
)
from sdlab_model.page_params import LLM_CHOICES, LLM_INPUTS
from sdlab_ui import diagram, report, state
from sdlab_ui.diagram import DIAGRAM_OPENING
from sdlab_ui.llm import cards, checks, controls, heatmaps
from sdlab_ui.llm import diagram as llm_diagram
from sdlab_ui.llm.controls import WIDGET
from sdlab_ui.llm.fields import default_values, url_values
from sdlab_ui.text import money, ms_text, rate_text

LLM_PAGE = "app_pages/llm.py"
P99S = ("TTFT", "TPOT", "E2E")


def _open(query: dict[str, str] | None = None):
    app = open_app(query or {}, page=LLM_PAGE)
    assert_no_exception(app)
    return app


def _metrics(app) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


def _expected(workload: LlmWorkload) -> dict[str, str]:
    """The headline as it should read: every number is a field of ``llm_latency``'s estimate,
    formatted here independently of the page's own helpers."""
    result = llm_latency(workload)
    suffix = " (approximate)" if result.approximate else ""
    p99s = (result.ttft_p99_ms, result.tpot_p99_ms, result.e2e_p99_ms)
    shown = {f"{name} p99{suffix}": ms_text(p99) for name, p99 in zip(P99S, p99s, strict=True)}
    tokens = result.output_tokens_per_s
    shown["Output throughput"] = f"{tokens:,.0f} tok/s" if math.isfinite(tokens) else "—"
    shown["Goodput"] = rate_text(result.goodput_rps)
    per_hour = result.usd_per_hour
    shown["Cost"] = "—" if per_hour is None else f"{money(per_hour)}/h"
    per_million = result.usd_per_million_output_tokens
    shown["Per 1M output tokens"] = "—" if per_million is None else money(per_million)
    return shown


def _widget_values(app) -> dict:
    values = {spec.name: app.selectbox(key=WIDGET + spec.name).value for spec in LLM_CHOICES}
    values |= {spec.name: app.number_input(key=WIDGET + spec.name).value for spec in LLM_INPUTS}
    return values


def _llm_params(app) -> dict[str, str]:
    return {k[4:]: v for k, v in app.query_params.items() if k.startswith("llm.")}


def test_the_default_page_shows_the_models_headline():
    app = _open()
    assert _metrics(app) == _expected(LlmWorkload()), "the default headline is not the model's"
    assert not app.warning, f"the default page warns: {[w.value for w in app.warning]}"
    assert any(s.value == "What binds" for s in app.subheader), "no 'what binds' section"


def test_the_headline_is_llm_latencys_for_the_urls_inputs():
    query = {
        "llm.model_id": "qwen2.5-32b",
        "llm.tensor_parallel": "2",
        "llm.replicas": "3",
        "llm.rate_rps": "9",
        "llm.prompt_tokens_mean": "1500",
        "llm.output_tokens_mean": "400",
        "llm.tpot_p99_target_ms": "30",
    }
    app = _open(query)
    workload = LlmWorkload(
        model_id="qwen2.5-32b",
        tensor_parallel=2,
        replicas=3,
        rate_rps=9.0,
        prompt_tokens_mean=1500.0,
        output_tokens_mean=400.0,
        tpot_p99_target_ms=30.0,
    )
    assert _metrics(app) == _expected(workload), "the headline is not llm_latency's"
    # The page's words, not the diagram's "binds: …" mark (tested on its own below).
    binding = " ".join(m.value for m in app.markdown if not m.value.startswith(DIAGRAM_OPENING))
    result = llm_latency(workload)
    assert result.binding.lower() in binding.lower(), f"{result.binding!r} not said: {binding}"


def test_a_url_round_trips_through_the_widgets():
    query = {
        "llm.model_id": "mistral-7b",
        "llm.gpu_id": "a100-80gb",
        "llm.replicas": "4",
        "llm.rate_rps": "12.5",
        "llm.max_running_sequences": "128",
        "llm.max_batched_tokens": "4096",
        "llm.ttft_p99_target_ms": "800",
        "llm.e2e_p99_target_ms": "30000",
        "llm.heatmap_y": "tensor_parallel",
    }
    app = _open(query)
    expected = default_values() | {
        "model_id": "mistral-7b",
        "gpu_id": "a100-80gb",
        "replicas": 4,
        "rate_rps": 12.5,
        "max_running_sequences": 128,
        "max_batched_tokens": 4096,
        "ttft_p99_target_ms": 800.0,
        "e2e_p99_target_ms": 30000.0,
    }
    assert _widget_values(app) == expected, "the widgets do not show the URL's values"
    assert app.selectbox(key=heatmaps.Y_KEY).value == "tensor_parallel", "heatmap axis lost"
    assert _llm_params(app) == {k[4:]: v for k, v in query.items()}, "the URL did not survive"


def test_a_widget_change_goes_into_the_url_and_the_headline():
    app = _open()
    app.number_input(key=WIDGET + "replicas").set_value(3).run()
    assert_no_exception(app)
    assert _llm_params(app) == {"replicas": "3"}, f"URL after the change: {_llm_params(app)}"
    assert _metrics(app) == _expected(LlmWorkload(replicas=3)), "headline did not follow"


@pytest.mark.parametrize("card", cards.CARDS, ids=lambda card: card.key)
def test_each_card_loads_its_scenario_and_its_answer_is_the_models(card):
    app = _open()
    before = _metrics(app)
    app.button(key=cards.button_key(card)).click().run()
    assert_no_exception(app)
    workload = LlmWorkload(**card.values)
    assert _widget_values(app) == card.values, f"{card.key}: the widgets are not the card's"
    assert _llm_params(app) == url_values(card.values), f"{card.key}: the URL is not the card's"
    assert _metrics(app) == _expected(workload), f"{card.key}: the headline is not the model's"
    assert _metrics(app) != before, f"{card.key}: the headline did not change"
    result = llm_latency(workload)
    labels = [m.label for m in app.metric]
    if result.approximate:
        assert "TTFT p99 (approximate)" in labels, f"{card.key}: not labelled approximate"
    else:
        assert "TTFT p99" in labels, f"{card.key}: labels {labels}"
    assert result.binding == card.binds, f"{card.key}: the model says {result.binding} binds"
    assert any(card.question in m.value for m in app.markdown), f"{card.key}: no question"
    revealed = " ".join(m.value for m in app.expander[0].markdown)
    assert ms_text(result.tpot_p99_ms) in revealed, f"{card.key}: reveal is not the model's"


BAD_VALUES = ("-5", "nan", "-inf", "1e999", "9" * 400, "", "0x10", "<b>x</b>")


@pytest.mark.parametrize("value", BAD_VALUES)
def test_bad_url_values_give_notices_and_the_defaults(value):
    query = {"llm.model_id": "gpt-17-9t"} | {f"llm.{f.name}": value for f in LLM_INPUTS}
    app = _open(query)
    assert len(app.warning) >= 1, f"llm.*={value!r}: no notice"
    notices = " ".join(w.value for w in app.warning)
    assert "gpt" in notices and "not one of the choices" in notices, f"no notice: {notices}"
    assert _widget_values(app) == default_values(), f"llm.*={value!r}: not the defaults"
    assert _metrics(app) == _expected(LlmWorkload()), f"llm.*={value!r}: not the default headline"
    assert _llm_params(app) == {}, f"the bad values stayed in the URL: {_llm_params(app)}"


def _open_heatmaps(app):
    """Open the heatmaps' expander, as a click on it would."""
    app.session_state[heatmaps.OPEN_KEY] = True
    app.run()
    assert_no_exception(app)
    return app


def test_a_bad_heatmap_axis_gives_a_notice_and_the_default_axis():
    app = _open({"llm.heatmap_y": "<b>colour</b>"})
    assert any("Against the request rate" in w.value for w in app.warning), "no notice"
    _open_heatmaps(app)
    assert app.selectbox(key=heatmaps.Y_KEY).value == "replicas", "not the default axis"
    assert _llm_params(app) == {}, f"the bad axis stayed in the URL: {_llm_params(app)}"


def test_inputs_the_model_refuses_together_give_a_notice_and_the_defaults():
    # Each value is in range, but the prompt and output overflow Llama 2 13B's context.
    query = {"llm.model_id": "llama-2-13b", "llm.prompt_tokens_mean": "4000"}
    app = _open(query)
    assert any("context" in w.value for w in app.warning), "no notice about the context"
    assert _widget_values(app) == default_values(), "not the defaults after a refused set"


def test_a_choice_the_gpu_cannot_run_says_why_without_failing():
    app = _open({"llm.gpu_id": "a100-80gb"})
    app.selectbox(key=WIDGET + "precision").set_value("fp8").run()
    assert_no_exception(app)
    assert any("FP8" in i.value for i in app.info), "no reason given for FP8 on an A100"
    assert not app.metric, "a headline was drawn for inputs the model refused"


def test_a_rate_beyond_capacity_shows_unstable():
    app = _open({"llm.rate_rps": "1000"})
    shown = _metrics(app)
    for name in P99S:
        assert shown[f"{name} p99"] == "unstable (∞)", f"{name} p99 shows {shown}"
    assert any("Unstable (∞)" in e.value for e in app.error), "no word on why it is unstable"


NO_DOT = shutil.which("dot") is None


def _diagram(app) -> str:
    """The one server-drawn diagram on the page (its SVG's Markdown)."""
    drawn = [m.value for m in app.main.markdown if m.value.startswith(DIAGRAM_OPENING)]
    assert len(drawn) == 1, f"{len(drawn)} server-drawn diagrams on the page"
    return drawn[0]


@pytest.mark.skipif(NO_DOT, reason="Graphviz's dot is not installed")
def test_the_diagram_under_the_headline_carries_its_numbers():
    app = _open()
    result = llm_latency(LlmWorkload())
    svg = _diagram(app)
    assert f"TTFT p99 {_metrics(app)['TTFT p99']}" in svg, "not the headline's TTFT p99"
    assert f"TPOT p99 {_metrics(app)['TPOT p99']}" in svg, "not the headline's TPOT p99"
    assert f"{result.kv_tokens:,} tokens fit" in svg, "no KV cache size"
    assert f"binds: {result.binding}" in svg, "what binds is not marked"
    texts = [m.value for m in app.main.markdown]
    at = texts.index(svg)
    said = next(i for i, t in enumerate(texts) if result.binding in t.lower() and i != at)
    assert at < said, "the diagram is not between the headline and what binds"
    assert any(c.value == llm_diagram.LEGEND for c in app.main.caption), "no legend"
    assert not app.get("graphviz_chart"), "the browser was also asked to draw the diagram"


@pytest.mark.skipif(NO_DOT, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("card", cards.CARDS, ids=lambda card: card.key)
def test_each_cards_diagram_has_its_headlines_ttft(card):
    app = _open({f"llm.{name}": value for name, value in url_values(card.values).items()})
    ttft = next(value for label, value in _metrics(app).items() if label.startswith("TTFT"))
    assert f"TTFT p99 {ttft}" in _diagram(app), f"{card.key}: not the headline's TTFT p99"
    assert f"binds: {card.binds}" in _diagram(app), f"{card.key}: what binds is not marked"


@pytest.mark.skipif(NO_DOT, reason="Graphviz's dot is not installed")
def test_an_unstable_design_is_drawn_unstable():
    svg = _diagram(_open({"llm.rate_rps": "1000"}))
    for name in P99S:
        assert f"{name} p99 unstable (∞)" in svg, f"{name} p99 not unstable in the diagram"


def test_without_graphviz_the_browser_draws_the_same_diagram(monkeypatch):
    monkeypatch.setattr(report, "architecture_svg", lambda dot: None)
    monkeypatch.setattr(report, "dot_available", lambda: False)
    diagram.diagram_svg.cache_clear()
    try:
        app = _open({"llm.rate_rps": "3"})
    finally:
        diagram.diagram_svg.cache_clear()
    charts = app.get("graphviz_chart")
    assert len(charts) == 1, f"{len(charts)} browser-drawn diagrams without Graphviz"
    assert charts[0].proto.spec == llm_diagram.dot_of(llm_latency(LlmWorkload(rate_rps=3.0)))
    assert f"TTFT p99 {_metrics(app)['TTFT p99']}" in charts[0].proto.spec
    assert not [m for m in app.markdown if m.value.startswith(DIAGRAM_OPENING)], "an SVG drawn"


def _chart_traces(app, key: str) -> list[dict]:
    chart = next(c for c in app.get("plotly_chart") if c.key == key)
    return json.loads(chart.proto.spec)["data"]


def _array(value, shape) -> np.ndarray:
    """A plotly array as the page sends it: nested lists, or a typed binary array."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return data.astype(float).reshape(shape)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=float)


def test_the_heatmaps_are_built_only_once_their_expander_is_opened():
    app = _open({"llm.rate_rps": "6"})
    panel = next(e for e in app.expander if e.label == heatmaps.LABEL)
    assert not panel.proto.expanded, "the heatmaps' expander starts open"
    assert not app.get("plotly_chart"), "heatmaps were drawn before anyone asked"
    assert not [s for s in app.selectbox if s.key == heatmaps.Y_KEY], "an axis with no chart"
    _open_heatmaps(app)
    keys = {chart.key for chart in app.get("plotly_chart")}
    assert keys == set(heatmaps.CHART_KEYS.values()), f"charts once opened: {keys}"
    app.number_input(key=WIDGET + "replicas").set_value(2).run()
    assert_no_exception(app)
    assert len(app.get("plotly_chart")) == 2, "the opened heatmaps did not stay open"


def test_a_link_with_a_heatmap_axis_opens_the_heatmaps():
    app = _open({"llm.heatmap_y": "tensor_parallel"})
    keys = {chart.key for chart in app.get("plotly_chart")}
    assert keys == set(heatmaps.CHART_KEYS.values()), f"the link's axis drew {keys}"


@pytest.mark.parametrize("y_field", heatmaps.Y_FIELDS)
def test_the_heatmaps_draw_the_models_grid_with_the_target_contour(y_field):
    app = _open_heatmaps(_open({"llm.rate_rps": "6"}))
    app.selectbox(key=heatmaps.Y_KEY).set_value(y_field).run()
    assert_no_exception(app)
    axis = {} if y_field == "replicas" else {"heatmap_y": y_field}
    assert _llm_params(app) == {"rate_rps": "6"} | axis, f"URL: {_llm_params(app)}"
    workload = LlmWorkload(rate_rps=6.0)
    grid = heatmaps.cached_heatmap(workload, y_field)
    assert grid.y_field == y_field and not grid.is_stable.all(), "no unstable edge in view"
    for name, p99, target in (
        ("TTFT", grid.ttft_p99_ms, workload.ttft_p99_target_ms),
        ("TPOT", grid.tpot_p99_ms, workload.tpot_p99_target_ms),
    ):
        traces = _chart_traces(app, heatmaps.CHART_KEYS[name])
        colour = _array(traces[0]["z"], p99.shape)
        expected = np.where(np.isfinite(p99), np.log10(p99), np.nan)
        assert np.allclose(colour, expected, equal_nan=True), f"{name}: not llm_heatmap's p99"
        contour = next(t for t in traces if t["type"] == "contour")
        assert contour["name"] == f"{name} target {ms_text(target)}", f"{name}: no target line"


def test_the_simulator_check_shows_simulate_llms_p99s_beside_the_headlines():
    app = _open({"llm.rate_rps": "6"})
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    workload = LlmWorkload(rate_rps=6.0)
    result, simulated = llm_latency(workload), simulate_llm(workload, seed=checks.SIMULATION_SEED)
    table = app.table[-1].value
    assert list(table["Analytic"]) == [ms_text(result.ttft_p99_ms), ms_text(result.tpot_p99_ms)]
    assert list(table["Simulated"]) == [
        ms_text(simulated.ttft.p99_ms),
        ms_text(simulated.tpot.p99_ms),
    ], f"the simulated p99s are not simulate_llm's: {table}"
    low, high = simulated.ttft.p99_low_ms, simulated.ttft.p99_high_ms
    assert table["Simulator's 95% interval"].iloc[0] == f"{ms_text(low)} to {ms_text(high)}"
    said = " ".join(c.value for c in app.caption)
    assert f"{simulated.requests:,} requests" in said, f"run length not said: {said}"


def test_the_cheapest_deployment_is_the_models_and_can_be_used():
    app = _open({"llm.rate_rps": "6"})
    app.button(key=checks.CHEAPEST_KEY).click().run()
    assert_no_exception(app)
    best = cheapest_deployments(LlmWorkload(rate_rps=6.0))[0]
    assert any(checks.option_text(best) in m.value for m in app.markdown), "not the cheapest"
    app.button(key=checks.USE_CHEAPEST_KEY).click().run()
    assert_no_exception(app)
    used = {
        "gpu_id": best.gpu_id,
        "precision": best.precision,
        "tensor_parallel": best.tensor_parallel,
        "replicas": best.replicas,
    }
    values = _widget_values(app)
    assert {k: values[k] for k in used} == used, f"the page did not load it: {values}"
    workload = LlmWorkload(**(default_values() | {"rate_rps": 6.0} | used))
    assert _metrics(app) == _expected(workload), "the headline is not the cheapest's"


def test_the_disaggregation_comparison_is_the_models():
    app = _open({"llm.rate_rps": "6", "llm.replicas": "3"})
    app.button(key=checks.DISAGGREGATION_KEY).click().run()
    assert_no_exception(app)
    comparison = compare_disaggregation(LlmWorkload(rate_rps=6.0, replicas=3), 3)
    said = " ".join(m.value for m in app.markdown)
    best = comparison.best_split
    for rate in (comparison.aggregated.max_rate_rps, best.max_rate_rps):
        assert f"**{rate_text(rate)}**" in said, f"{rate_text(rate)} not said: {said}"
    split = f"{best.prefill_instances} prefill + {best.decode_instances} decode"
    assert split in said, f"the best split is not said: {said}"


def test_a_gpu_without_a_price_shows_its_latency_and_no_cost():
    app = _open({"llm.gpu_id": "h200-sxm-141gb"})
    shown = _metrics(app)
    assert shown == _expected(LlmWorkload(gpu_id="h200-sxm-141gb")), "not the model's headline"
    assert shown["Cost"] == "—" and shown["Per 1M output tokens"] == "—", f"a price? {shown}"


def test_back_and_forward_restore_the_pages_inputs(monkeypatch):
    def back_to(query: dict[str, str]) -> None:
        monkeypatch.setattr(state, "is_history_navigation", lambda: True)
        app.query_params = dict(query)
        app.run()
        monkeypatch.setattr(state, "is_history_navigation", lambda: False)
        assert_no_exception(app)

    app = _open()
    start = dict(app.query_params)
    app.number_input(key=WIDGET + "replicas").set_value(3).run()
    after_first = dict(app.query_params)
    app.number_input(key=WIDGET + "replicas").set_value(5).run()
    back_to(after_first)
    assert _widget_values(app)["replicas"] == 3, "Back did not restore the earlier replicas"
    assert _metrics(app) == _expected(LlmWorkload(replicas=3)), "Back: headline not restored"
    back_to(start)
    assert _widget_values(app) == default_values(), "Back to the start did not reset the page"


def test_the_simulator_finds_an_unstable_rate_unstable_too():
    app = _open({"llm.rate_rps": "1000"})
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    table = app.table[-1].value
    assert list(table["Simulated"]) == ["unstable (∞)"] * 2, f"simulated: {table}"
    assert any("unstable" in c.value for c in app.caption), "the simulator's verdict is not said"


def test_a_model_too_big_for_its_gpu_says_so_and_offers_no_simulation():
    app = _open({"llm.model_id": "llama-3.1-70b", "llm.gpu_id": "l4"})
    said = " ".join(m.value for m in app.markdown)
    assert "no room for a KV cache" in said, f"no word on the weights not fitting: {said}"
    assert not [b for b in app.button if b.key == checks.SIMULATE_KEY], "a simulation offered"


KV_DESIGN = {"llm.model_id": "llama-3.1-70b", "llm.tensor_parallel": "4", "llm.rate_rps": "2.5"}
"""A 70B design whose cache the memory knobs move (its tokens are in the page's caption)."""
ADDED_INPUTS = {
    "prompt_tokens_cv": ("1.5", {}),
    "output_tokens_cv": ("0", {}),
    "prefix_cache_hit_share": ("0.6", {}),
    "arrival_cv": ("2.5", {}),
    "gpu_memory_utilization": ("0.55", KV_DESIGN),
    "kv_block_tokens": ("256", KV_DESIGN),
    "activation_reserve_gb": ("7", KV_DESIGN),
}
"""Each input the page gained: a value, and the design where it shows."""


def _workload_of(query: dict[str, str]) -> LlmWorkload:
    values = default_values()
    for key, text in query.items():
        name = key[4:]
        values[name] = text if isinstance(values[name], str) else type(values[name])(float(text))
    return LlmWorkload(**values)


def _page_numbers(app) -> tuple[dict[str, str], str]:
    """The headline and the line under what binds (which gives the KV cache's tokens)."""
    loads = [c.value for c in app.caption if c.value.startswith("Prefill queue load")]
    return _metrics(app), loads[0] if loads else ""


@pytest.mark.parametrize("name", ADDED_INPUTS)
def test_each_added_input_goes_from_the_url_to_the_model(name):
    text, design = ADDED_INPUTS[name]
    query = design | {f"llm.{name}": text}
    app = _open(query)
    workload = _workload_of(query)
    assert _widget_values(app)[name] == getattr(workload, name), f"{name}: widget"
    assert _llm_params(app) == {k[4:]: v for k, v in query.items()}, f"{name}: URL"
    assert _metrics(app) == _expected(workload), f"{name}: the headline is not the model's"
    result = llm_latency(workload)
    assert f"KV cache {result.kv_tokens:,} tokens" in _page_numbers(app)[1], f"{name}: KV"
    assert _page_numbers(app) != _page_numbers(_open(design)), f"{name}: the page did not move"


def test_the_memory_knobs_are_in_an_expander_opened_when_one_is_set():
    def advanced(app):
        return next(e for e in app.expander if e.label.startswith("Advanced"))

    app = _open()
    assert not advanced(app).proto.expanded, "opened with every knob at its default"
    keys = {w.key for w in advanced(app).number_input}
    assert keys == {WIDGET + n for n in controls.ADVANCED}, f"in the expander: {keys}"
    assert set(controls.ADVANCED) == {
        "gpu_memory_utilization",
        "kv_block_tokens",
        "activation_reserve_gb",
    }
    app.number_input(key=WIDGET + "kv_block_tokens").set_value(32).run()
    assert_no_exception(app)
    assert _llm_params(app) == {"kv_block_tokens": "32"}, f"URL: {_llm_params(app)}"
    kv = llm_latency(LlmWorkload(kv_block_tokens=32)).kv_tokens
    assert f"KV cache {kv:,} tokens" in _page_numbers(app)[1], "the model did not get the knob"
    assert advanced(_open({"llm.kv_block_tokens": "32"})).proto.expanded, "hidden"


def test_the_simulator_check_gets_the_added_inputs():
    query = KV_DESIGN | {
        "llm.rate_rps": "1.5",
        "llm.prompt_tokens_cv": "0.2",
        "llm.output_tokens_cv": "0.8",
        "llm.gpu_memory_utilization": "0.55",
        "llm.kv_block_tokens": "32",
        "llm.activation_reserve_gb": "6",
        "llm.prefix_cache_hit_share": "0.5",
    }
    app = _open(query)
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    workload = _workload_of(query)
    simulated = simulate_llm(workload, seed=checks.SIMULATION_SEED)
    default = simulate_llm(_workload_of(KV_DESIGN | {"llm.rate_rps": "1.5"}), seed=0)
    table = app.table[-1].value
    shown = [ms_text(simulated.ttft.p99_ms), ms_text(simulated.tpot.p99_ms)]
    assert list(table["Simulated"]) == shown, f"not simulate_llm's for these inputs: {table}"
    assert shown != [ms_text(default.ttft.p99_ms), ms_text(default.tpot.p99_ms)], "no effect"
    result = llm_latency(workload)
    assert not result.approximate, "the check's design is meant to be inside the model's accuracy"
    for analytic, sim in (
        (result.ttft_p99_ms, simulated.ttft.p99_ms),
        (result.tpot_p99_ms, simulated.tpot.p99_ms),
    ):
        assert abs(analytic / sim - 1.0) <= 0.15, f"analytic {analytic:.1f} against {sim:.1f} ms"


def test_an_approximate_design_says_the_models_reason():
    app = _open({"llm.prompt_tokens_cv": "1.5"})
    result = llm_latency(LlmWorkload(prompt_tokens_cv=1.5))
    assert result.approximate and result.approximate_because, "the design is meant to be flagged"
    said = [c.value for c in app.caption if c.value.startswith("Approximate:")]
    assert said and result.approximate_because in said[0], f"not the model's reason: {said}"


def test_the_simulator_check_gets_the_arrivals_burstiness():
    app = _open({"llm.rate_rps": "6", "llm.arrival_cv": "2"})
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    bursty = simulate_llm(LlmWorkload(rate_rps=6.0, arrival_cv=2.0), seed=checks.SIMULATION_SEED)
    poisson = simulate_llm(LlmWorkload(rate_rps=6.0), seed=checks.SIMULATION_SEED)
    shown = list(app.table[-1].value["Simulated"])
    assert shown == [ms_text(bursty.ttft.p99_ms), ms_text(bursty.tpot.p99_ms)], f"{shown}"
    assert bursty.ttft.p99_ms > 1.5 * poisson.ttft.p99_ms, "bursts did not reach the simulator"
    said = [c.value for c in app.caption if c.value.startswith("Approximate:")]
    assert said and "arrivals are not Poisson" in said[0], f"no reason given: {said}"
