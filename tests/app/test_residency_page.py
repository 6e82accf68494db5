"""AppTest of the Models and memory page: placements, plain load-time warnings, URL round trip."""

from __future__ import annotations

import math

from apptest_helpers import assert_no_exception, open_app

from sdlab_model.residency import ResidencyInputs
from sdlab_model.residency.placement import (
    PLACEMENT_LABELS,
    plan_residency,
    replica_usd_per_hour,
    routed_reason,
)
from sdlab_model.residency.routing import routed_latency
from sdlab_model.residency.simulated import simulate_packed, simulate_routed
from sdlab_model.scenarios import SCENARIO_BY_ID
from sdlab_model.workload import Workload
from sdlab_ui.residency.sections import RECOMMENDED_SIM_REQUESTS, SIM_REQUESTS, money
from sdlab_ui.sidebar import widget_key
from sdlab_ui.text import ms_text

RESIDENCY_PAGE = "app_pages/residency.py"
# Forty models on eight GPU replicas at 1,600 req/s; 1 GB models with 20 ms of fixed load time:
# about a fifth of the requests wait for a load.
QUERY = {
    "gpu": "1",
    "rate_rps": "1600",
    "replicas": "8",
    "models_hosted": "40",
    "model_latency_ms": "40",
    "batch_window_ms": "8",
    "model_size_gb": "1",
    "load_overhead_ms": "20",
}


def test_the_page_shows_each_placement_and_says_when_the_p99_is_a_load_time():
    app = open_app(QUERY, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(
        {k: v for k, v in QUERY.items() if "load" not in k and "size" not in k}
    )
    plan = plan_residency(workload, ResidencyInputs(model_size_gb=1, load_overhead_ms=20))
    table = app.dataframe[0].value
    assert list(table["cost"]) == [money(p.usd_per_hour) for p in plan.placements], "costs differ"
    assert [label.split(" (")[0] for label in table["placement"]] == [
        PLACEMENT_LABELS[p.id] for p in plan.placements
    ], "placements missing or out of order"
    warnings = " ".join(w.value for w in app.warning)
    assert plan.placement("packed_lru").p99_is_load_time, "the cell was chosen to miss >1%"
    assert "is a load time" in warnings, f"no plain load-time warning: {warnings!r}"
    chosen = PLACEMENT_LABELS[plan.recommended]
    assert any(chosen in s.value for s in app.success), "the recommendation is not shown"
    price = f"${replica_usd_per_hour(workload, plan.inputs):,.2f} a replica-hour"
    assert any(price in c.value for c in app.caption), f"the price used ({price}) is not named"


def test_a_residency_input_goes_into_the_url_and_a_bad_one_gives_a_notice():
    app = open_app({**QUERY, "accelerator": "not-a-gpu"}, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    assert any("not in the catalog" in w.value for w in app.warning), "no notice for a bad id"
    app.selectbox(key="residency.accelerator").set_value("gcp-a2-ultragpu-1g").run()
    assert_no_exception(app)
    assert app.query_params.get("accelerator") in ("gcp-a2-ultragpu-1g", ["gcp-a2-ultragpu-1g"]), (
        f"the URL does not carry the GPU: {dict(app.query_params)}"
    )
    text = " ".join(m.value for m in app.markdown)
    assert "80 GB" in text, "the 80 GB GPU's memory is not what the page reads"


def test_on_cpu_the_page_says_residency_needs_gpu_replicas():
    app = open_app({"models_hosted": "40"}, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    assert any("GPU" in i.value for i in app.info), "CPU replicas: the page must say why"


def test_a_placement_the_model_is_unsure_of_is_simulated_beside_it():
    app = open_app(QUERY, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(
        {k: v for k, v in QUERY.items() if "load" not in k and "size" not in k}
    )
    inputs = ResidencyInputs(model_size_gb=1, load_overhead_ms=20)
    plan = plan_residency(workload, inputs)
    flagged = [
        p
        for p in plan.placements
        if p.id != "dedicated" and p.accuracy == "approximate" and p.is_stable
    ]
    assert flagged, "the cell was chosen to have a stable placement the model is unsure of"
    tables = [t.value for t in app.dataframe if "simulated p99" in t.value.columns]
    assert len(tables) == 1, "no table of simulated p99s"
    shown = dict(zip(tables[0]["placement"], tables[0]["simulated p99"], strict=True))
    for p in flagged:
        if p.id == "model_aware":
            expected = simulate_routed(workload, inputs, n_requests=SIM_REQUESTS)
        else:
            expected = simulate_packed(workload, inputs, p.pinned_models, n_requests=SIM_REQUESTS)
        assert shown[p.label] == ms_text(expected.p99_ms), (
            f"{p.label}: shown {shown[p.label]}, simulated {expected.p99_ms:.1f} ms"
        )
    unstable = [p.label for p in plan.placements if not p.is_stable]
    assert not set(unstable) & set(shown), f"an unstable placement was simulated: {unstable}"


def test_without_gpus_the_page_explains_and_the_sidebar_is_still_drawn():
    """The app draws the sidebar after the page: a page that ended early (``st.stop``) would
    leave the visitor without the toggle the page asks them to turn on."""
    app = open_app({"gpu": "0"}, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    assert any("turn on GPU acceleration" in i.value for i in app.info), "no explanation shown"
    assert app.toggle(key=widget_key("gpu")).value is False, "the sidebar's GPU toggle is missing"
    assert len(app.sidebar.select_slider) >= 5, "the sidebar's sliders are missing"
    app.toggle(key=widget_key("gpu")).set_value(True).run()
    assert_no_exception(app)
    assert app.dataframe, "turning GPUs on from the sidebar did not bring the placements"


def test_card_5_shows_model_aware_routing_winning_with_its_numbers_and_a_simulated_check():
    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    query = card.to_strings()
    app = open_app(query, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    plan = plan_residency(card, ResidencyInputs())
    assert plan.recommended == "model_aware", f"card 5 was chosen to route: {plan.recommended}"
    routed = plan.placement("model_aware")
    table = app.dataframe[0].value
    row = table[table["placement"] == PLACEMENT_LABELS["model_aware"]]
    assert len(row) == 1, f"no model-aware row in {list(table['placement'])}"
    assert row["p99"].iloc[0] == ms_text(routed.p99_ms), f"p99 {row['p99'].iloc[0]}"
    assert row["hit ratio"].iloc[0] == "100.0%", f"hit ratio {row['hit ratio'].iloc[0]}"
    assert row["cost to meet it"].iloc[0] == money(routed.usd_per_hour_to_meet), "cost differs"
    success = " ".join(s.value for s in app.success)
    assert (
        PLACEMENT_LABELS["model_aware"] in success and money(routed.usd_per_hour_to_meet) in success
    ), f"the recommendation is not model-aware routing's: {success}"
    reason = routed_reason(plan)
    assert reason and any(reason in m.value for m in app.markdown), "no reason why it wins"
    tables = [t.value for t in app.dataframe if "simulated p99" in t.value.columns]
    assert tables, "the recommended design, approximate in the model, is not simulated"
    label = f"{routed.label} at {routed.replicas_to_meet:,} replicas (recommended)"
    shown = dict(zip(tables[0]["placement"], tables[0]["simulated p99"], strict=True))
    sized = card.with_changes(replicas=routed.replicas_to_meet)
    at_need = routed_latency(sized, ResidencyInputs())
    assert at_need.accuracy == routed.accuracy_to_meet == "approximate", "chosen to check"
    assert routed.p99_ms_to_meet == at_need.p99_ms, "the plan's p99 at the count is another"
    expected = simulate_routed(sized, ResidencyInputs(), n_requests=RECOMMENDED_SIM_REQUESTS)
    assert shown.get(label) == ms_text(expected.p99_ms), f"{label}: {shown}"


def test_one_model_hosted_reads_as_one_model():
    app = open_app({**QUERY, "models_hosted": "1"}, page=RESIDENCY_PAGE)
    assert_no_exception(app)
    (memory,) = [m.value for m in app.markdown if "hold weights" in m.value]
    assert "of 1 model**" in memory, f"one model is not written '1 model': {memory!r}"


def test_a_narrow_interval_reads_as_one_range_not_two_equal_ends():
    from sdlab_ui.residency.sections import _interval_text

    assert _interval_text(7.9501, 7.9549) == "7.950–7.955 ms"
    assert _interval_text(7.95001, 7.95002) == "≈7.95 ms"
    assert _interval_text(110.0, math.inf) == "at least 110 ms"
    assert _interval_text(math.nan, math.nan) == "—"
