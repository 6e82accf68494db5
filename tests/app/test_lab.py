"""AppTest of the Lab page: cards, walkthrough, model switch, deep links, notices, files."""

from __future__ import annotations

import json
import shutil

import pytest
from apptest_helpers import (
    HEATMAPS_PAGE,
    LAB_PAGE,
    assert_no_exception,
    headline_block,
    headline_metrics,
    headline_p99,
    open_app,
    shape_title,
    sidebar_value,
)
from streamlit.navigation.page import StreamlitPage

from sdlab_model import SCENARIOS, WALKTHROUGH, Workload, evaluate, scenario_file
from sdlab_model.assessment import judge
from sdlab_model.design import packing_note
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.residency import ResidencyInputs
from sdlab_model.scenarios import walkthrough_numbers
from sdlab_ui import cache, diagram, report
from sdlab_ui.diagram import DIAGRAM_LEGEND, DIAGRAM_OPENING
from sdlab_ui.figures import PRELOAD_KEY
from sdlab_ui.lab.cards import card_key
from sdlab_ui.lab.headline import HEADLINE_CLASS
from sdlab_ui.lab.sections import BREAKDOWN_CLASS
from sdlab_ui.lab.style import LAB_TITLE
from sdlab_ui.sidebar import ADVANCED_TOGGLE_KEY, widget_key
from sdlab_ui.text import ms_text
from sdlab_ui.url import url_params

_CARD_FIELDS = (
    "rate_rps",
    "model_latency_ms",
    "batch_window_ms",
    "replicas",
    "models_hosted",
    "p99_target_ms",
    "dynamic_batching",
    "gpu",
)


def test_lab_renders_every_section(lab):
    assert f"\n# {LAB_TITLE}\n" in lab.markdown[0].value, "the Lab's title is missing"
    assert headline_p99(lab), "no headline p99"
    labels = set(headline_metrics(lab))
    for wanted in ("p50", "p95"):
        assert wanted in labels, f"metric {wanted!r} missing; found {sorted(labels)}"
    numbers = headline_block(lab)
    for wanted in ("Capacity", "Utilization", "Replicas needed for the target", "req/s"):
        assert wanted in numbers, f"the headline table lacks {wanted!r}: {numbers!r}"
    assert any("How far to trust" in m.value for m in lab.markdown), "no accuracy section"
    comparison = _model_comparison(lab)
    for row in ("**Teaching model**", "**Queueing model**"):
        assert row in comparison, f"the model comparison lacks the row {row}"
    assert len(_diagrams(lab)) == 1, "the architecture diagram is missing"
    charts = [c.key for c in lab.get("plotly_chart") if c.key != "sdlab.plotly_preload"]
    assert not charts, f"plotly charts drawn (the CDF's panel is closed): {charts}"
    assert any(BREAKDOWN_CLASS in m.value for m in lab.markdown), "the breakdown is missing"
    downloads = {button.key for button in lab.get("download_button")}
    assert downloads == {"lab.scenario_download", "lab.report_html", "lab.report_markdown"}, (
        f"the Lab's downloads are {downloads}: scenario file, HTML report and Markdown expected"
    )
    assert len(lab.get("file_uploader")) == 1, "the scenario-file upload is missing"


def test_each_heading_ends_the_markdown_element_above_it(lab):
    """Every element is a message to the browser on every rerun: a heading (or the diagram's
    legend) drawn as an element of its own would be one more, for nothing."""
    alone = [m.value for m in lab.main.markdown if m.value.startswith("#") and "\n" not in m.value]
    assert not alone, f"headings drawn alone: {alone}"
    texts = [m.value for m in lab.main.markdown]
    for heading in ("#### Scenarios", "#### How far to trust", "#### Take the design away"):
        holders = [text for text in texts if f"\n\n{heading}" in text]
        assert len(holders) == 1, f"{heading!r} is not at the end of one Markdown element"
    (drawn,) = _diagrams(lab)
    assert drawn.endswith(f"</div>\n\n{DIAGRAM_LEGEND}"), "the legend is not under the diagram"
    assert not [c for c in lab.main.caption if "Boxes:" in c.value], "the legend is drawn twice"


def _diagrams(app) -> list[str]:
    """Each architecture diagram on the page: the server's SVG, or the DOT the browser lays out."""
    drawn = [m.value for m in app.markdown if m.value.startswith(DIAGRAM_OPENING)]
    return drawn + [chart.proto.spec for chart in app.get("graphviz_chart")]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_server_draws_the_diagram_with_this_labs_numbers():
    app = open_app({"rate_rps": "1234"})
    (drawn,) = _diagrams(app)
    assert drawn.startswith(f'{DIAGRAM_OPENING}<svg width="100%"'), drawn[:80]
    assert "1.23k req/s" in drawn, "the SVG lacks this lab's rate"
    assert not app.get("graphviz_chart"), "the browser was also asked to draw the diagram"
    # Under the headline, above the recommended shape.
    texts = [m.value for m in app.main.markdown]
    diagram = next(i for i, text in enumerate(texts) if text.startswith(DIAGRAM_OPENING))
    shape = next(i for i, text in enumerate(texts) if text.startswith("#### Recommended shape"))
    assert diagram < shape, "the diagram was drawn below the recommended shape"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_a_diagram_drawn_before_is_not_drawn_by_dot_again(monkeypatch):
    diagram.diagram_svg.cache_clear()
    drawn = []
    original = report.architecture_svg
    monkeypatch.setattr(report, "architecture_svg", lambda dot: drawn.append(dot) or original(dot))
    first = open_app({"rate_rps": "2468"})
    assert len(drawn) == 1, f"a new diagram went to dot {len(drawn)} times"
    second = open_app({"rate_rps": "2468"})  # another visitor, the same lab
    assert len(drawn) == 1, "a diagram drawn before went to dot again"
    assert _diagrams(second) == _diagrams(first), "the second visitor saw another diagram"


@pytest.mark.parametrize("missing", ["dot fails", "no dot"])
def test_without_graphviz_the_browser_draws_the_diagram(monkeypatch, missing):
    monkeypatch.setattr(report, "architecture_svg", lambda dot: None)
    if missing == "no dot":
        monkeypatch.setattr(report, "dot_available", lambda: False)
    diagram.diagram_svg.cache_clear()
    app = open_app({"rate_rps": "1234"})
    assert_no_exception(app)
    charts = app.get("graphviz_chart")
    assert len(charts) == 1, f"{len(charts)} browser-drawn diagrams without Graphviz"
    assert charts[0].proto.spec.startswith("digraph"), "the chart is not the diagram's DOT"
    assert not [m for m in app.markdown if m.value.startswith(DIAGRAM_OPENING)], "an SVG was drawn"
    legends = [c for c in app.main.caption if c.value == DIAGRAM_LEGEND]
    assert len(legends) == 1, f"{len(legends)} legends under the browser-drawn diagram"
    diagram.diagram_svg.cache_clear()


def test_a_sessions_first_run_alone_preloads_plotly_in_a_hidden_chart():
    app = open_app()
    preload = [c for c in app.get("plotly_chart") if c.key == "sdlab.plotly_preload"]
    assert len(preload) == 1, "the first run did not draw the hidden chart that loads plotly.js"
    hidden = f".st-key-{PRELOAD_KEY} {{ display: none; }}"
    assert any(hidden in h.proto.body for h in app.get("html")), "the preload chart is visible"
    app.run()
    assert not app.get("plotly_chart"), "a later run drew the preload chart again"


def _model_comparison(app) -> str:
    """The accuracy section's table: one row per model (and the simulation's, when run)."""
    return next((m.value for m in app.markdown if "**Queueing model**" in m.value), "")


def test_a_fresh_lab_simulates_only_where_asked_or_approximate(monkeypatch):
    """A simulation was most of a fresh rerun's server time (issue 13): where the queueing model
    is exact or validated, the page runs one only when the visitor turns the check on."""
    from sdlab_model.simulation.summary import simulation_key
    from sdlab_ui.lab.sections import SIMULATION_CHECK_KEY

    calls: list[Workload] = []
    simulate = cache.design_simulation
    monkeypatch.setattr(cache, "design_simulation", lambda w: calls.append(w) or simulate(w))
    workload = Workload(rate_rps=211.37)  # a rate no other test uses: every cache misses
    assert evaluate(workload, "queueing").accuracy != "approximate", "pick an exact workload"
    app = open_app(workload.to_strings())
    assert_no_exception(app)
    assert calls == [], f"the Lab simulated {calls} though nobody asked and the model is exact"
    assert "**Simulation**" not in _model_comparison(app), "a simulation row without a simulation"
    app.toggle(key=SIMULATION_CHECK_KEY).set_value(True).run()
    assert_no_exception(app)
    assert calls == [simulation_key(workload)], f"the check simulated {calls}"
    comparison = _model_comparison(app)
    assert "**Simulation**" in comparison, "the check shows no simulation row"
    assert "vs simulation" in comparison, "the check shows no model error against it"


def test_latency_cdf_is_drawn_once_its_panel_is_open():
    from sdlab_ui.lab.sections import SIMULATION_CHECK_KEY

    app = open_app()
    app.toggle(key=SIMULATION_CHECK_KEY).set_value(True).run()
    assert not app.get("plotly_chart"), "the CDF is drawn while its panel is closed"
    app.session_state["lab.distribution_open"] = True
    app.run()
    assert_no_exception(app)
    assert len(app.get("plotly_chart")) == 1, "opening the CDF panel did not draw the CDF"


@pytest.mark.parametrize("card", SCENARIOS, ids=[card.id for card in SCENARIOS])
def test_card_sets_every_sidebar_value_and_the_shape(card):
    app = open_app()
    app.button(key=card_key(card.id)).click().run()
    assert_no_exception(app)
    for name in _CARD_FIELDS:
        assert sidebar_value(app, name) == getattr(card, name), (
            f"card {card.id}: sidebar {name} shows {sidebar_value(app, name)!r}, "
            f"card says {getattr(card, name)!r}"
        )
    expected = evaluate(card.workload(), "queueing").stage.title
    assert shape_title(app) == expected, (
        f"card {card.id}: shape {shape_title(app)!r} shown, expected {expected!r}"
    )
    assert app.query_params["rate_rps"] == card.workload().to_strings()["rate_rps"], (
        f"card {card.id}: the URL does not follow the card"
    )


def test_switching_the_model_changes_the_p99_shown(lab):
    before = headline_p99(lab)
    lab.radio(key=widget_key("model")).set_value("teaching").run()
    assert_no_exception(lab)
    after = headline_p99(lab)
    assert after != before, f"the p99 stayed {before!r} after switching to the teaching model"
    assert lab.query_params["model"] == "teaching", "the URL does not record the model"


def test_deep_link_opens_that_state_on_any_page():
    link = Workload(rate_rps=3_000, replicas=7, gpu=True, p99_target_ms=150).to_strings()
    for page in (LAB_PAGE, HEATMAPS_PAGE):
        app = open_app({**link, "model": "teaching"}, page=page)
        assert_no_exception(app)
        assert sidebar_value(app, "rate_rps") == 3_000, f"{page}: rate not taken from the URL"
        assert sidebar_value(app, "replicas") == 7, f"{page}: replicas not taken from the URL"
        assert sidebar_value(app, "gpu") is True, f"{page}: GPU toggle not taken from the URL"
        assert app.radio(key=widget_key("model")).value == "teaching", f"{page}: model lost"
        assert not app.warning, f"{page}: a clean link raised notices: {app.warning}"


def test_a_link_value_off_the_slider_ladder_shows_exactly():
    app = open_app({"rate_rps": "1234.5", "replicas": "37"})
    assert_no_exception(app)
    assert sidebar_value(app, "rate_rps") == 1234.5, "an off-ladder rate was snapped"
    assert sidebar_value(app, "replicas") == 37, "an off-ladder replica count was snapped"
    assert not app.warning, f"a valid value raised notices: {[w.value for w in app.warning]}"


def test_value_set_on_one_page_survives_switching_pages(lab):
    lab.select_slider(key=widget_key("replicas")).set_value(12).run()
    lab.switch_page(HEATMAPS_PAGE).run()
    assert sidebar_value(lab, "replicas") == 12, "replicas reset on the Heatmaps page"
    lab.switch_page(LAB_PAGE).run()
    assert_no_exception(lab)
    assert sidebar_value(lab, "replicas") == 12, "replicas reset after coming back to the Lab"
    assert lab.query_params["replicas"] == "12", "the URL lost the replicas after switching"


def test_a_session_makes_its_pages_once_and_still_moves_between_them(lab, monkeypatch):
    made = []
    real_init = StreamlitPage.__init__

    def counted_init(self, *args, **kwargs):
        made.append(args[0])
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(StreamlitPage, "__init__", counted_init)
    lab.select_slider(key=widget_key("replicas")).set_value(12).run()
    lab.switch_page(HEATMAPS_PAGE).run()
    assert_no_exception(lab)
    assert lab.title[0].value.startswith("Heatmaps"), [t.value for t in lab.title]
    lab.switch_page(LAB_PAGE).run()
    assert_no_exception(lab)
    assert headline_p99(lab), "the Lab drew no p99 after coming back"
    assert made == [], f"{len(made)} pages made again on a session's later runs"


def test_advanced_inputs_are_drawn_only_when_asked_for_and_apply_while_hidden(lab):
    advanced = [spec for spec in NUMERIC_BY_NAME.values() if spec.advanced]
    keys = {widget_key(spec.name) for spec in advanced}

    def drawn() -> set[str]:
        return {w.key for w in (*lab.sidebar.select_slider, *lab.sidebar.slider)} & keys

    assert not drawn(), f"advanced sliders drawn with their toggle off: {sorted(drawn())}"
    lab.toggle(key=ADVANCED_TOGGLE_KEY).set_value(True).run()
    assert drawn() == keys, f"advanced sliders missing once shown: {sorted(keys - drawn())}"
    lab.select_slider(key=widget_key("max_batch_size")).set_value(40).run()
    p99_at_40 = headline_p99(lab)
    lab.toggle(key=ADVANCED_TOGGLE_KEY).set_value(False).run()
    assert_no_exception(lab)
    assert not drawn(), "hiding the advanced inputs left sliders drawn"
    assert headline_p99(lab) == p99_at_40, "hiding an advanced input changed the p99"
    assert lab.query_params.get("max_batch_size") in ("40", ["40"]), "the URL lost the value"
    said = " ".join(c.value for c in lab.sidebar.caption)
    assert "Max batch size 40" in said, f"no line names the hidden input in effect: {said!r}"


def test_a_link_that_sets_an_advanced_input_starts_with_them_shown():
    app = open_app({"max_batch_size": "64"})
    assert_no_exception(app)
    assert app.toggle(key=ADVANCED_TOGGLE_KEY).value is True, "the advanced inputs are hidden"
    assert sidebar_value(app, "max_batch_size") == 64, "the linked value is not shown"


@pytest.mark.parametrize(
    "query",
    [
        {"rate_rps": "banana"},
        {"replicas": "-3", "gpu": "maybe"},
        {"model": "quantum"},
        {"p99_target_ms": "nan", "![x](http://example.invalid/a.png)": "1"},
        {"rate_rps": "[click](http://example.invalid)"},
        {"rate_rps": "1e999"},
    ],
)
def test_junk_query_param_shows_a_notice_not_an_exception(query):
    app = open_app(query)
    assert_no_exception(app)
    assert app.warning, f"no notice for junk query {query}"
    assert headline_p99(app), "the lab did not render after junk in the URL"
    rendered = " ".join(w.value for w in app.warning)
    assert "](http" not in rendered, f"URL text reached Markdown unescaped: {rendered}"


def test_reset_restores_defaults():
    app = open_app({"rate_rps": "5000", "model": "teaching"})
    app.button(key=widget_key("reset")).click().run()
    assert sidebar_value(app, "rate_rps") == NUMERIC_BY_NAME["rate_rps"].default, "rate not reset"
    assert app.radio(key=widget_key("model")).value == "queueing", "model not reset"


def test_walkthrough_asks_for_a_prediction_before_it_loads_the_card(lab):
    before = sidebar_value(lab, "rate_rps")
    assert before != SCENARIOS[0].rate_rps, "the default rate is card 1's: the test is void"
    lab.button(key="lab.walk.start").click().run()
    for index, step in enumerate(WALKTHROUGH):
        card = next(c for c in SCENARIOS if c.id == step.card_id)
        question, answer = step.render(
            walkthrough_numbers(card.workload(), judge(card.workload(), "queueing"))
        )
        assert any(question == m.value for m in lab.markdown), f"step {step.step} question"
        assert not any(answer in i.value for i in lab.info), (
            f"step {step.step} shows its answer before the reveal"
        )
        assert sidebar_value(lab, "rate_rps") == before, (
            f"step {step.step} loaded its card before the prediction: the sidebar gives it away"
        )
        lab.text_input(key="lab.walk.prediction").input(f"guess {step.step}").run()
        lab.button(key="lab.walk.reveal").click().run()
        assert sidebar_value(lab, "rate_rps") == card.rate_rps, f"step {step.step}: card not loaded"
        assert any(answer in i.value for i in lab.info), f"step {step.step}: no answer"
        assert any(f"guess {step.step}" in c.value for c in lab.caption), (
            f"step {step.step}: the prediction is not shown beside the answer"
        )
        before = card.rate_rps
        if index < len(WALKTHROUGH) - 1:
            lab.button(key="lab.walk.next").click().run()
    assert_no_exception(lab)


def test_a_forged_prediction_past_the_fields_limit_is_echoed_cut(lab):
    from sdlab_ui.lab.cards import PREDICTION_MAX_CHARS

    lab.button(key="lab.walk.start").click().run()
    lab.text_input(key="lab.walk.prediction").set_value("[x](https://e.test) " * 50_000).run()
    lab.button(key="lab.walk.reveal").click().run()
    assert_no_exception(lab)
    echoed = [c.value for c in lab.caption if c.value.startswith("Your prediction")]
    assert echoed, "the prediction is echoed"
    assert len(echoed[0]) < 3 * PREDICTION_MAX_CHARS, (
        f"a 1 MB prediction was echoed at {len(echoed[0]):,} characters"
    )
    assert "[x](https" not in echoed[0], "the echo is escaped for Markdown"


def test_scenario_file_round_trip_and_bad_file():
    app = open_app({"rate_rps": "750", "gpu": "1", "model": "teaching"})
    saved = app.get("download_button")[0]
    assert saved is not None, "no download button"
    text = scenario_file.dumps(Workload(rate_rps=750, gpu=True), "teaching")

    fresh = open_app()
    fresh.file_uploader(key="lab.scenario_upload").set_value(
        ("lab.json", text.encode(), "application/json")
    ).run()
    assert_no_exception(fresh)
    assert sidebar_value(fresh, "rate_rps") == 750, "uploading a file did not restore the rate"
    assert fresh.radio(key=widget_key("model")).value == "teaching", "model not restored"

    bad = json.loads(text)
    bad["workload"]["rate_rps"] = "fast"
    fresh.file_uploader(key="lab.scenario_upload").set_value(
        ("bad.json", json.dumps(bad).encode(), "application/json")
    ).run()
    assert_no_exception(fresh)
    assert any("rate_rps" in e.value for e in fresh.error), "bad file: no message naming rate_rps"
    assert sidebar_value(fresh, "rate_rps") == 750, "a bad file changed the lab"


def test_approximate_queueing_p99_gives_way_to_the_simulated_one():
    """The judgement headlines the simulated p99 where the queueing model is approximate, and
    the headline, the summary line and the reasons all quote that one number."""
    from sdlab_model.assessment import design_simulation, judge

    workload = SCENARIOS[3].workload()  # round robin, batched, 13 GPU replicas: approximate
    judged = judge(workload, "queueing")
    assert evaluate(workload, "queueing").accuracy == "approximate", "pick an approximate card"
    sim = design_simulation(workload)
    assert judged.is_simulated and judged.p99_ms == sim.p99_ms, "approximate p99 not simulated"
    assert judge(workload, "teaching").p99_ms == evaluate(workload, "teaching").p99_ms, (
        "the teaching model's p99 was replaced"
    )
    app = open_app(workload.to_strings())
    assert_no_exception(app)
    shown = headline_p99(app)
    reasons = next(m.value for m in app.markdown if "#### Why this changes" in m.value)
    assert shown and shown in reasons, f"headline {shown!r} is not the reasons' p99: {reasons}"


def _an_approximate_workload() -> Workload | None:
    """A card pushed towards capacity until the queueing model calls itself approximate."""
    for card in SCENARIOS:
        for load in (0.5, 0.7, 0.8, 0.9, 0.95):
            rate = round(card.workload().capacity_rps * load)
            if rate > NUMERIC_BY_NAME["rate_rps"].maximum:
                continue
            workload = card.workload().with_changes(rate_rps=rate)
            if evaluate(workload, "queueing").accuracy == "approximate":
                return workload
    return None


def test_the_headline_delta_is_green_with_headroom_and_red_without():
    """The p99's delta reads as Streamlit's metric would: green and up within the target, red
    and down over it, red "over capacity" past capacity."""
    cases = {
        "within": ({"rate_rps": "200", "p99_target_ms": "100"}, "good", "headroom"),
        "over": ({"rate_rps": "200", "p99_target_ms": "10"}, "bad", "headroom"),
        # Stable at 99.9% of capacity, its p99 seconds over a 5 ms target: '-1.44e+03 ms' once.
        "seconds over": (
            {"dynamic_batching": "0", "p99_target_ms": "5", "rate_rps": "1598.4"},
            "bad",
            "s headroom",
        ),
        "unstable": ({"rate_rps": "500000", "replicas": "2"}, "bad", "over capacity"),
    }
    for case, (query, tone, words) in cases.items():
        app = open_app(query)
        assert_no_exception(app)
        ((_value, shown_tone, delta),) = [
            m for label, m in headline_metrics(app).items() if label.startswith("p99")
        ]
        assert shown_tone == tone, f"{case}: the delta is {shown_tone}, not {tone} ({delta!r})"
        assert words in (delta or ""), f"{case}: the delta reads {delta!r}"
        assert "e+" not in delta and "e-" not in delta, f"{case}: the delta reads {delta!r}"
        assert delta.startswith("↑" if tone == "good" else "↓"), f"{case}: arrow in {delta!r}"


def test_lab_marks_a_simulated_headline():
    workload = _an_approximate_workload()
    if workload is None:
        pytest.skip("the queueing model is approximate nowhere near the cards")
    app = open_app(workload.to_strings())
    labels = list(headline_metrics(app))
    assert "p99 (simulated)" in labels, f"{workload}: headline not marked simulated: {labels}"
    assert "**Simulation**" in _model_comparison(app), "the simulation behind it is not shown"


@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_overload_reads_unstable_infinity_in_both_models(model):
    # 500k req/s on two CPU replicas is far beyond either model's capacity.
    app = open_app({"rate_rps": "500000", "replicas": "2", "model": model})
    assert_no_exception(app)
    assert headline_p99(app) == "∞", f"{model}: an unstable p99 reads {headline_p99(app)!r}"
    banner = " ".join(e.value for e in app.error)
    assert "Unstable (∞)" in banner, f"{model}: no unstable banner, errors shown: {banner!r}"
    (headline,) = [m.value for m in app.markdown if f'class="{HEADLINE_CLASS}"' in m.value]
    assert "$0.00 per 1M" not in headline, f"{model}: an overloaded fleet reads as nearly free"
    assert "no price per 1M over capacity" in headline, f"{model}: no word on the price per 1M"
    if model == "teaching":
        seed_p99 = evaluate(Workload(rate_rps=500_000, replicas=2), "teaching").p99_ms
        assert f"{seed_p99:.0f} ms" in banner, (
            f"the banner should quote the seed's capped p99 ({seed_p99:.0f} ms): {banner!r}"
        )


def test_the_breakdown_is_drawn_from_this_labs_numbers(lab):
    (drawn,) = [m.value for m in lab.markdown if BREAKDOWN_CLASS in m.value]
    result = evaluate(Workload(), "queueing")
    for part, value in (("compute", result.compute_ms), ("queueing", result.queue_ms)):
        said = f"queueing model: {part} {ms_text(value)}</title>"
        assert said in drawn, f"the breakdown lacks {said!r}"
    assert f"target {ms_text(result.workload.p99_target_ms)}" in drawn, "no target line label"


def test_the_labs_packing_decision_uses_the_models_and_memory_inputs():
    card = next(c for c in SCENARIOS if c.id == "multi-model-scale")
    query = {**url_params(card.workload(), "queueing"), "model_size_gb": "0.5"}
    app = open_app(query)
    assert_no_exception(app)
    expected = evaluate(card.workload(), "queueing", ResidencyInputs(model_size_gb=0.5))
    default = evaluate(card.workload(), "queueing")
    packing = next(r.text for r in expected.reasons if r.id == "packing")
    assert packing != next(r.text for r in default.reasons if r.id == "packing"), (
        "the cell was chosen so that the model size changes the packing reason"
    )
    shown = " ".join(m.value for m in app.markdown)
    assert packing in shown, f"the Lab shows another packing reason than the model's: {packing!r}"


def test_card_5s_lab_names_model_aware_routing_in_its_shape_reason_and_gpu_pool():
    # One story: the recommended shape, the packing reason and the GPU pool's box all name the
    # placement the residency model recommends for card 5.
    card = next(c for c in SCENARIOS if c.id == "multi-model-scale")
    app = open_app(url_params(card.workload(), "queueing"))
    assert_no_exception(app)
    expected = evaluate(card.workload(), "queueing")
    assert expected.packing is not None and expected.packing.recommended == "model_aware", (
        f"card 5 was chosen because routing by model wins: {expected.packing}"
    )
    shown = " ".join(m.value for m in app.markdown)
    assert f"**{expected.stage.title}**" in shown and "routed by model" in expected.stage.title, (
        f"the shape shown is not {expected.stage.title!r}"
    )
    packing = next(r.text for r in expected.reasons if r.id == "packing")
    assert packing in shown, f"the Lab shows another packing reason: {packing!r}"
    routed = f"routed by model on {expected.packing.recommended_replicas:,} replicas"
    assert routed in packing_note(expected.packing, card.models_hosted), "the note says otherwise"
    diagram = " ".join(_diagrams(app))
    assert routed in diagram, f"the GPU pool's box lacks {routed!r}"
