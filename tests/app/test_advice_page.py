"""AppTest of the Advice & cost page: the recommendation, one click to use it, levers, limits."""

from __future__ import annotations

import math

import pytest
from apptest_helpers import (
    ADVICE_PAGE,
    LAB_PAGE,
    assert_no_exception,
    headline_block,
    headline_metrics,
    open_app,
    sidebar_value,
)

from sdlab_model.advice.search import advise, breaking_points, levers
from sdlab_model.assessment import judge
from sdlab_model.scenarios import SCENARIO_BY_ID
from sdlab_model.workload import Workload
from sdlab_ui.text import ms_delta_text, per_million_text
from sdlab_ui.url import url_params


def test_advice_page_shows_the_judged_recommendation_and_uses_it_on_click():
    query = {"rate_rps": "5000", "replicas": "10"}
    app = open_app(query, page=ADVICE_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(query)
    best = advise(workload).best
    assert best is not None, "5k req/s on CPU has a design that meets 100 ms"
    shown = {m.label: m.value for m in app.metric}
    assert shown["Design"] == f"{best.workload.replicas} × {'GPU' if best.workload.gpu else 'CPU'}"
    assert shown["Cost"] == f"${best.cost.usd_per_hour:,.2f}/h", f"cost shown {shown['Cost']}"
    table = app.dataframe[0].value
    found = levers(workload)
    assert list(table["change"]) == [lever.label for lever in found], "levers differ"
    # A change in words, as the cost column writes one: 'same', not '+0.0 ms'.
    expected = [
        "unstable (∞)" if lever.delta_p99_ms == math.inf else ms_delta_text(lever.delta_p99_ms)
        for lever in found
    ]
    assert list(table["Δ p99"]) == expected, f"Δ p99 shown: {list(table['Δ p99'])}"
    assert not any("central queue" in change.lower() for change in table["change"]), (
        "an idealized policy is offered as a lever"
    )
    captions = " ".join(c.value for c in app.caption)
    assert "For comparison, not a lever: One central queue (idealized)" in captions, captions
    text = " ".join(m.value for m in app.markdown)
    for point in breaking_points(workload):
        assert point.text in text, f"breaking point missing: {point.text}"
    app.button(key="advice.use").click().run()
    assert_no_exception(app)
    assert sidebar_value(app, "replicas") == best.workload.replicas, "the design was not loaded"
    assert sidebar_value(app, "dynamic_batching") == best.workload.dynamic_batching


@pytest.mark.parametrize("card_id", ["registry-canary", "multi-model-scale"])
def test_the_recommended_design_loaded_into_the_lab_shows_the_same_p99_and_pass(card_id):
    # Card 4's and card 5's recommended designs are simulated (the model is approximate there).
    workload = SCENARIO_BY_ID[card_id].workload()
    app = open_app(url_params(workload, "queueing"), page=ADVICE_PAGE)
    assert_no_exception(app)
    advice_p99 = {m.label: m.value for m in app.metric if m.label.startswith("p99")}
    assert len(advice_p99) == 1, f"expected one recommended p99, found {advice_p99}"
    ((advice_label, advice_value),) = advice_p99.items()
    assert advice_label == "p99 (simulated)", f"{card_id}: the recommended p99 is {advice_label}"
    packing = judge(workload).packing
    routed = packing is not None and packing.recommended == "model_aware"
    notes = " ".join(i.value for i in app.info)
    assert ("Placing the models does better" in notes) == routed, (
        f"{card_id}: Advice and the Lab's packing decision disagree on the placement: {notes!r}"
    )
    if routed:
        assert f"{packing.recommended_replicas} replicas" in notes, "the routed count differs"
    app.button(key="advice.use").click().run()
    app.switch_page(LAB_PAGE).run()
    assert_no_exception(app)
    ((lab_label, (lab_value, tone, delta)),) = [
        item for item in headline_metrics(app).items() if item[0].startswith("p99")
    ]
    assert (lab_label, lab_value) == (advice_label, advice_value), (
        f"{card_id}: Advice shows {advice_label} {advice_value}, the Lab {lab_label} {lab_value}"
    )
    assert tone == "good", f"{card_id}: Advice recommends it, the Lab marks it {tone} ({delta})"
    loaded = app.session_state["sdlab.workload"]
    assert judge(loaded).meets_target, f"{card_id}: the judge fails the recommended design"


def test_advice_page_says_so_when_nothing_meets_the_target():
    # A 5 ms target for a 100 ms model: no design can meet it.
    app = open_app({"p99_target_ms": "5", "model_latency_ms": "100"}, page=ADVICE_PAGE)
    assert_no_exception(app)
    errors = " ".join(e.value for e in app.error)
    assert "No design in the search space meets" in errors, f"errors shown: {errors!r}"


PROFILE_KEY = "advice.profile_upload"


def _upload_profile(app, content: bytes):
    app.file_uploader(key=PROFILE_KEY).set_value(("profile.csv", content, "text/csv"))
    return app.run()


def _workload_now(app) -> Workload:
    return app.session_state["sdlab.workload"]


def test_a_measured_profile_sets_the_replicas_speed_and_round_trips():
    from sdlab_model.advice.hardware import BatchProfile

    app = open_app({"gpu": "1", "model_latency_ms": "40"}, page=ADVICE_PAGE)
    # An exactly affine GPU profile: s1 = 4 ms (10x faster than the 40 ms CPU latency), f = 0.8.
    sizes = (1, 2, 4, 8, 16, 32)
    profile = BatchProfile(sizes, tuple(4.0 * (0.8 + 0.2 * b) for b in sizes), "test", False)
    app = _upload_profile(app, profile.to_csv().encode())
    assert_no_exception(app)
    workload = _workload_now(app)
    assert abs(workload.gpu_speedup - 10.0) < 1e-6, f"speed-up {workload.gpu_speedup}"
    assert abs(workload.gpu_batch_overhead_share - 0.8) < 1e-6, workload.gpu_batch_overhead_share
    assert "Profile loaded" in " ".join(s.value for s in app.success), "no confirmation shown"


BAD_PROFILES = {
    "empty": b"",
    "wrong header": b"size,ms\n1,2\n2,3\n",
    "not a number": b"batch_size,latency_ms\n1,fast\n2,3\n",
    "one row": b"batch_size,latency_ms\n1,2\n",
    "not increasing": b"batch_size,latency_ms\n2,3\n1,2\n",
    "negative latency": b"batch_size,latency_ms\n1,-2\n2,3\n",
    "binary": b"\xff\xfe\x00\x01",
    "too fast for the model": b"batch_size,latency_ms\n1,0.001\n2,0.0011\n",
}


def test_a_bad_profile_says_why_and_changes_nothing():
    for name, content in BAD_PROFILES.items():
        app = open_app({"gpu": "1"}, page=ADVICE_PAGE)
        before = _workload_now(app)
        app = _upload_profile(app, content)
        assert_no_exception(app)
        assert _workload_now(app) == before, f"{name}: the lab changed"
        errors = " ".join(e.value for e in app.error)
        assert "Profile not used" in errors, f"{name}: no message ({errors!r})"


def test_catalog_price_sets_the_replica_kind_price_and_slots():
    from sdlab_model.advice.hardware import hardware_by_id

    app = open_app(page=ADVICE_PAGE)
    app.selectbox(key="advice.catalog_choice").set_value("aws-g4dn-xlarge").run()
    app.button(key="advice.use_catalog").click().run()
    assert_no_exception(app)
    workload = _workload_now(app)
    t4 = hardware_by_id("aws-g4dn-xlarge")
    # A replica keeps its size: as many T4 instances as it had GPU model instances.
    count = Workload().gpu_instances_per_replica // t4.slots
    assert workload.gpu and workload.gpu_usd_per_replica_hour == count * t4.usd_per_hour, (
        f"a replica of {count} T4s is priced {workload.gpu_usd_per_replica_hour}"
    )
    assert workload.gpu_instances_per_replica == count * t4.slots, "the replica changed size"


def test_the_catalogs_cpu_instance_prices_a_replica_as_the_lab_does():
    app = open_app(page=ADVICE_PAGE)
    choice = app.selectbox(key="advice.catalog_choice")
    lab_price = Workload().cpu_usd_per_replica_hour
    assert f"= ${lab_price:,.2f}/h" in choice.format_func(choice.value), (
        f"the preselected CPU instance prices a replica unlike the Lab's ${lab_price}/h: "
        f"{choice.format_func(choice.value)!r}"
    )
    app.button(key="advice.use_catalog").click().run()
    assert _workload_now(app) == Workload(), "using the Lab's own CPU instance changed the lab"


def test_default_prices_are_the_catalogs_figures():
    from sdlab_model.advice.hardware import hardware_by_id
    from sdlab_model.params import NUMERIC_BY_NAME

    cpu = NUMERIC_BY_NAME["cpu_usd_per_replica_hour"].default
    gpu = NUMERIC_BY_NAME["gpu_usd_per_replica_hour"].default
    workers = NUMERIC_BY_NAME["cpu_workers_per_replica"].default
    instances = NUMERIC_BY_NAME["gpu_instances_per_replica"].default
    c7i = hardware_by_id("aws-c7i-4xlarge")
    g5 = hardware_by_id("aws-g5-xlarge")
    assert cpu == round(c7i.usd_per_hour * workers / c7i.slots, 6), "CPU default drifted"
    assert gpu == round(g5.usd_per_hour * instances / g5.slots, 6), "GPU default drifted"


def test_the_page_says_when_the_simulation_budget_ran_out(monkeypatch):
    from sdlab_ui.advice import sections

    def starved(key: Workload):
        return advise(key, max_simulations=0)

    monkeypatch.setattr(sections, "advise", starved)
    # Card 4 at a rate no other test uses (the search is cached per traffic).
    workload = SCENARIO_BY_ID["registry-canary"].workload().with_changes(rate_rps=61_000)
    app = open_app(url_params(workload, "queueing"), page=ADVICE_PAGE)
    assert_no_exception(app)
    warnings = " ".join(w.value for w in app.warning)
    assert "simulation budget" in warnings and "ran out" in warnings, f"warnings: {warnings!r}"
    labels = [m.label for m in app.metric]
    assert "p99 (simulated)" not in labels, "a design the budget did not simulate reads simulated"


def test_the_cost_charts_target_line_is_the_target_red_on_either_theme():
    import json

    from sdlab_ui.figures import TARGET_COLOUR

    app = open_app(page=ADVICE_PAGE)
    (chart,) = app.get("plotly_chart")
    shapes = json.loads(chart.proto.spec)["layout"]["shapes"]
    colours = {shape["line"].get("color") for shape in shapes}
    # Plotly's default line is the theme's text colour: black on Streamlit's near-black dark page.
    assert colours == {TARGET_COLOUR}, f"the target line is drawn in {colours}"


def test_over_capacity_no_page_prices_a_million_inferences():
    """The offered rate spread over the fleet's price reads as nearly free ($0.00 per 1M)."""
    query = {"rate_rps": "500000", "replicas": "2"}
    advice = open_app(query, page=ADVICE_PAGE)
    assert_no_exception(advice)
    line = next(m.value for m in advice.markdown if m.value.startswith("The current design costs"))
    assert "no price per 1M inferences over capacity" in line, line
    lab = open_app(query)
    assert "no price per 1M over capacity" in headline_block(lab)
    for page, app in (("Advice", advice), ("Lab", lab)):
        shown = " ".join(m.value for m in app.markdown)
        assert "$0.00 per 1M" not in shown, f"{page} prices an overloaded fleet at $0.00 per 1M"


@pytest.mark.parametrize(
    ("usd", "serves", "expected"),
    [
        (3.971, True, "$3.97 per 1M"),
        (0.004, True, "<$0.01 per 1M"),
        (1234.5, True, "$1,234 per 1M"),
        (0.0008, False, "no price per 1M over capacity"),
    ],
)
def test_a_price_per_million_reads_to_the_cent(usd, serves, expected):
    assert per_million_text(usd, serves) == expected
