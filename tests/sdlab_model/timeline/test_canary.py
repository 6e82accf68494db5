"""Canary rollout: per-version p99, cost, inputs, and what the judges do with a step.

The judges' maths is checked against their own Monte Carlo in ``test_canary_judges.py``; here
the rollout feeds them the right streams and the page's claims hold.
"""

from __future__ import annotations

import math

import pytest

from sdlab_model.advice.search import price_per_replica_hour
from sdlab_model.queues.queueing import latency
from sdlab_model.timeline.canary import (
    BASELINE_TAIL_SHARE,
    ERROR_RATE,
    P99_EVERY_REQUEST,
    P99_SLOWEST,
    CanaryPlan,
    plan_rollout,
    regressed_share_slower_than,
    share_slower_than,
)
from sdlab_model.workload import Workload


def test_each_version_p99_is_the_queueing_model_at_the_load_it_sees():
    workload = Workload(rate_rps=3000, replicas=10)
    plan = CanaryPlan(step_shares=(0.05, 0.25, 1.0), shadow_share=0.1)
    for step in plan_rollout(workload, plan).steps:
        canary_rate = 3000 * step.share + 3000 * 0.1 * (1 - step.share)
        replicas = math.ceil(10 * canary_rate / 3000)
        expected = latency(workload.with_changes(rate_rps=canary_rate, replicas=replicas))
        assert step.canary_replicas == replicas, f"{step.share}: {step.canary_replicas} replicas"
        assert step.canary_latency == expected, f"canary p99 at {step.share:.0%} differs"
        if step.share < 1.0:
            base = latency(workload.with_changes(rate_rps=3000 * (1 - step.share)))
            assert step.baseline_latency == base, f"baseline p99 at {step.share:.0%} differs"
            assert step.extra_replicas == replicas, "own replicas are extra while both run"
        else:
            assert step.baseline_latency is None, "no baseline traffic at 100%"
            assert step.extra_replicas == 0, "the old version is retired at 100%"
        price = price_per_replica_hour(workload)
        assert math.isclose(step.extra_usd_per_hour, step.extra_replicas * price), "extra $/h"
        assert math.isclose(step.extra_usd, step.extra_usd_per_hour * 1800 / 3600), "extra $"


def test_a_shared_fleet_adds_no_replicas_but_carries_the_shadow_load():
    workload = Workload(rate_rps=2000, replicas=4, dynamic_batching=False)
    quiet = plan_rollout(workload, CanaryPlan(placement="shared")).steps[0]
    loud = plan_rollout(workload, CanaryPlan(placement="shared", shadow_share=0.5)).steps[0]
    assert quiet.extra_replicas == loud.extra_replicas == 0, "shared adds replicas"
    assert quiet.canary_latency == latency(workload), "no shadow: the fleet's own p99"
    assert loud.canary_latency.p99_ms > quiet.canary_latency.p99_ms, "shadow load is free?"
    assert loud.baseline_latency == loud.canary_latency, "shared: one queue, one p99"


def test_the_last_step_is_judged_only_by_the_threshold_judges():
    step = plan_rollout(Workload()).steps[-1]
    for verdicts in step.verdicts:
        assert verdicts.sequential is None and verdicts.kayenta is None, "a baseline at 100%?"
        assert "no baseline" in verdicts.note, verdicts.note
        assert len(verdicts.outcomes) == 2, "Flagger and Argo look at the canary alone"


def test_an_unstable_canary_says_so_and_gets_no_p99_verdicts():
    # 1 replica of 16 CPU workers at 20 ms, batching off: ~800 req/s; 5% of 20k is 1,000.
    workload = Workload(rate_rps=20_000, replicas=20, dynamic_batching=False)
    step = plan_rollout(workload, CanaryPlan(step_shares=(0.05,), shadow_share=0.5)).steps[0]
    assert not step.canary_latency.is_stable, "expected an overloaded canary"
    assert [v.streams.metric for v in step.verdicts] == [ERROR_RATE], "p99 verdicts at ∞"
    assert any("unstable (∞)" in note for note in step.notes), step.notes


def test_the_share_past_a_line_meets_the_quantiles_it_is_drawn_through():
    result = latency(Workload(rate_rps=3000, replicas=10))
    for line, share in ((result.p50_ms, 0.5), (result.p95_ms, 0.05), (result.p99_ms, 0.01)):
        assert math.isclose(share_slower_than(result, line), share), f"S({line}) != {share}"
    assert share_slower_than(result, 2 * result.p99_ms) < 0.01, "no tail past the p99"


@pytest.mark.parametrize("regression", [0.05, 0.2, 1.0])
def test_a_tail_confined_regression_moves_fewer_requests_past_the_p99(regression):
    result = latency(Workload(rate_rps=3000, replicas=10))
    line = result.p99_ms
    whole = regressed_share_slower_than(result, line, regression, None)
    tail = regressed_share_slower_than(result, line, regression, 0.02)
    assert BASELINE_TAIL_SHARE < tail <= 0.02 + 1e-12, f"slowest 2% slowed: {tail}"
    assert tail <= whole, f"+{regression:.0%}: the tail moves {tail}, every request {whole}"
    unchanged = regressed_share_slower_than(result, line, regression, 0.01)
    assert math.isclose(unchanged, BASELINE_TAIL_SHARE), "slowing the slowest 1% moved the p99"


def _verdicts(step, metric):
    return next(v for v in step.verdicts if v.streams.metric == metric)


def test_the_sequential_judge_holds_its_false_alarms_to_the_plan():
    plan = CanaryPlan(baseline="same-size", false_alarm=0.02)
    for step in plan_rollout(Workload(rate_rps=2000, replicas=8), plan).steps[:-1]:
        for verdicts in step.verdicts:
            fa = verdicts.sequential.false_alarm
            assert abs(fa - 0.02) < 1e-3, f"{step.share:.0%} {verdicts.streams.metric}: {fa}"


def test_more_canary_traffic_flags_an_error_rise_sooner():
    plan = CanaryPlan(baseline="same-size", step_shares=(0.01, 0.05, 0.25))
    steps = plan_rollout(Workload(rate_rps=2000, replicas=8), plan).steps
    means = [_verdicts(step, ERROR_RATE).sequential.mean_s for step in steps]
    assert means[0] > means[1] > means[2], f"mean times to flag {means}"


def test_a_same_size_baseline_flags_errors_later_than_all_live_traffic():
    # Issue 25: the rest of live traffic is a near-exact baseline; one of the canary's size
    # doubles the comparison's noise, so the same regression takes longer to flag.
    workload = Workload(rate_rps=2000, replicas=8)
    live = _verdicts(plan_rollout(workload).steps[0], ERROR_RATE).sequential
    same = _verdicts(
        plan_rollout(workload, CanaryPlan(baseline="same-size")).steps[0], ERROR_RATE
    ).sequential
    assert same.mean_s > live.mean_s, f"same-size {same.mean_s} s, live {live.mean_s} s"
    assert same.detected < live.detected, f"flagged {same.detected} vs {live.detected}"


def test_flaggers_99_percent_never_catches_errors_doubling_from_a_tenth_of_a_percent():
    for step in plan_rollout(Workload(rate_rps=2000, replicas=8)).steps:
        flagger = _verdicts(step, ERROR_RATE).flagger
        assert flagger.detected < 1e-3 and flagger.p90_s is None, f"{step.share:.0%}: {flagger}"


def test_a_same_size_baseline_adds_its_replicas_and_compares_equal_loads():
    workload = Workload(rate_rps=2000, replicas=8)
    step = plan_rollout(workload, CanaryPlan(baseline="same-size")).steps[1]
    assert step.baseline_rps == pytest.approx(0.05 * 2000), "baseline gets the canary's share"
    assert step.extra_replicas == 2 * step.canary_replicas, "canary and baseline are extra"
    assert step.baseline_latency == step.canary_latency, "equal loads, equal p99"
    null = _verdicts(step, P99_SLOWEST).streams
    assert null.canary_null_share == pytest.approx(BASELINE_TAIL_SHARE), "a biased null"
    assert _verdicts(step, P99_EVERY_REQUEST).sequential.false_alarm == pytest.approx(
        0.05, abs=1e-3
    )


BAD_PLANS = {
    "share 0": ({"step_shares": (0.0, 0.5)}, "step_shares[0]=0.0 is outside"),
    "share above 1": ({"step_shares": (0.5, 1.5)}, "step_shares[1]=1.5 is outside"),
    "shares fall": ({"step_shares": (0.5, 0.1)}, "must increase"),
    "no steps": ({"step_shares": ()}, "1 to 10 shares"),
    "error rate 1": ({"regressed_error_rate": 1.0}, "regressed_error_rate=1.0 is outside"),
    "baseline error 0.7": ({"baseline_error_rate": 0.7}, "baseline_error_rate=0.7 is outside"),
    "no rise": ({"regressed_error_rate": 0.001}, "must be above baseline_error_rate"),
    "negative regression": ({"p99_regression": -0.1}, "p99_regression=-0.1 is outside"),
    "false alarm 0.6": ({"false_alarm": 0.6}, "false_alarm=0.6 is outside"),
    "tail share 0": ({"tail_share": 0.0}, "tail_share=0.0 is outside"),
    "interval over window": ({"interval_s": 300.0, "window_s": 120.0}, "longer than window_s"),
    "baseline": ({"baseline": "prod"}, "baseline='prod' is not one of"),
    "nan window": ({"window_s": math.nan}, "window_s must be a finite number"),
    "placement": ({"placement": "moon"}, "placement='moon' is not one of"),
}


@pytest.mark.parametrize("name", BAD_PLANS)
def test_bad_inputs_raise_a_message_naming_field_and_value(name):
    changes, message = BAD_PLANS[name]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        CanaryPlan(**changes)
