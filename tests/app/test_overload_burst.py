"""AppTest of the Overload page's brief-overload section: the button draws the runs'
attempts and goodput for the retry variants and the page's settings, with the burst marked,
and a sentence per variant in ``BurstRun.recovery``'s numbers; its inputs live in the URL as
``burst.*`` and bad links give notices and the defaults."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import assert_no_exception, open_app

from sdlab_model.overload import OverloadPolicy, Station, simulate_burst
from sdlab_model.overload.storm import Burst, fit_burst
from sdlab_model.page_params import BURST_INPUTS
from sdlab_model.workload import Workload
from sdlab_ui.overload import burst

PAGE = "app_pages/overload.py"
STORM_DESIGN = {
    "dynamic_batching": "false",
    "gpu": "false",
    "cpu_workers_per_replica": "16",
    "model_latency_ms": "20",
    "p99_target_ms": "100",
    "replicas": "2",
    "lb_policy": "random",
    "overload.deadline_ms": "100",
    "overload.max_retries": "3",
    "burst.after_s": "10",
}


def _open(query: dict[str, str]):
    app = open_app(query, page=PAGE)
    assert_no_exception(app)
    return app


def _widgets(app) -> dict[str, float]:
    return {s.name: app.number_input(key=burst.INPUTS.widget + s.name).value for s in BURST_INPUTS}


def test_pressing_draws_the_runs_and_says_which_came_back_in_the_models_numbers():
    app = _open(STORM_DESIGN)
    assert not [c for c in app.get("plotly_chart") if c.key == burst.CHART_KEY], "drawn unasked"
    app.button(key=burst.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    chart = next(c for c in app.get("plotly_chart") if c.key == burst.CHART_KEY)
    spec = json.loads(chart.proto.spec)
    names = {trace["name"] for trace in spec["data"]}
    assert names == {*burst.RETRY_VARIANTS, burst.OWN}, f"traces: {names}"
    shapes = spec["layout"]["shapes"]
    burst_span = Burst(after_s=10.0)
    assert any(
        s.get("x0") == burst_span.before_s and s.get("x1") == burst_span.before_s + 2.0
        for s in shapes
    ), "the burst's span is not marked"
    workload = Workload(
        dynamic_batching=False,
        gpu=False,
        cpu_workers_per_replica=16,
        model_latency_ms=20.0,
        p99_target_ms=100.0,
        replicas=2,
        lb_policy="random",
    )
    policy = OverloadPolicy(deadline_ms=100.0, max_retries=3, retry_budget=0.2)
    policies = burst.burst_policies(workload, policy)
    assert fit_burst(workload, tuple(policies.values()), burst_span) == 1.0, "shortened"
    capacity = Station.of(workload).capacity_rps
    said = " ".join(m.value for m in app.markdown)
    for name, each in policies.items():
        run = simulate_burst(workload, each, seed=burst.SEED, **burst_span.run_arguments())
        sentence = burst.recovery_sentence(name, run.recovery(), capacity)
        assert sentence in said, f"{name}: not the model's sentence {sentence!r} in {said!r}"
    assert "**retries, no budget** did not come back" in said, said
    assert "**retries, budget** came back within" in said, said


def test_burst_settings_round_trip_through_the_url():
    app = _open({"burst.burst_multiple": "3", "burst.burst_s": "4"})
    assert _widgets(app)["burst_multiple"] == 3.0 and _widgets(app)["burst_s"] == 4.0
    params = {k: v for k, v in app.query_params.items() if k.startswith("burst.")}
    assert params == {"burst.burst_multiple": "3", "burst.burst_s": "4"}, params


@pytest.mark.parametrize("value", ["abc", "-5", "1e999"])
def test_bad_burst_values_give_notices_and_the_defaults(value):
    app = _open({f"burst.{spec.name}": value for spec in BURST_INPUTS})
    notices = " ".join(w.value for w in app.warning)
    assert "kept the default" in notices, f"burst.*={value!r}: no notice: {notices}"
    defaults = {spec.name: spec.default for spec in BURST_INPUTS}
    assert _widgets(app) == defaults, f"burst.*={value!r}: not the defaults"
    assert not [k for k in app.query_params if k.startswith("burst.")], "bad values kept"
