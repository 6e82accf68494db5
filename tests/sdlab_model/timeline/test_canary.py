"""Canary rollout: detection times against a Monte Carlo of the test, per-version p99, cost, inputs.

The Monte Carlo check uses seed 2026; ``scripts/canary_check.py`` reports on seed 0 with other
cases, so neither was tuned on the other.
"""

from __future__ import annotations

import math

import pytest

from sdlab_model.advice.search import price_per_replica_hour
from sdlab_model.queues.queueing import latency
from sdlab_model.timeline.canary import (
    BASELINE_TAIL_SHARE,
    CanaryPlan,
    check_detection,
    detection_seconds,
    normal_detection_seconds,
    plan_rollout,
    tail_share_after_regression,
    z_test_power,
)
from sdlab_model.workload import Workload

CHECK_SEED = 2026
CHECK_TRIALS = 4000

MONTE_CARLO_CASES = [
    # (workload, plan): a slow canary, a busy shared fleet with shadow, a strict test
    (Workload(rate_rps=500, replicas=4), CanaryPlan()),
    (
        Workload(rate_rps=8000, replicas=20, gpu=True),
        CanaryPlan(placement="shared", shadow_share=0.2, p99_regression=0.1),
    ),
    (
        Workload(rate_rps=1500, replicas=6, dynamic_batching=False),
        CanaryPlan(
            step_shares=(0.02, 0.1, 0.5),
            baseline_error_rate=0.01,
            regressed_error_rate=0.013,
            confidence=0.99,
            power=0.9,
        ),
    ),
]


@pytest.mark.parametrize(("workload", "plan"), MONTE_CARLO_CASES)
def test_the_shown_time_is_where_the_simulated_test_reaches_its_power(workload, plan):
    rollout = plan_rollout(workload, plan)
    for step in rollout.steps:
        for detection in (step.error_detection, step.latency_detection):
            if detection.seconds is None:
                continue
            check = check_detection(
                detection, plan.confidence, plan.power, trials=CHECK_TRIALS, seed=CHECK_SEED
            )
            assert check.is_confirmed, (
                f"{detection.test} at {step.share:.0%}: simulated power "
                f"{check.power_before:.3f} at 0.9×, {check.power_after:.3f} at 1.1× the shown "
                f"{detection.seconds:.4g} s: the stated power {plan.power} is not crossed"
            )
            assert abs(check.crossing_s / detection.seconds - 1.0) <= 0.10, (
                f"{detection.test} at {step.share:.0%}: simulated crossing {check.crossing_s:.4g} s"
                f" vs shown {detection.seconds:.4g} s"
            )


def test_the_summed_power_agrees_with_the_textbook_formula_where_counts_are_large():
    # 1,000 req/s canary, 0.1% → 0.2%: hundreds of bad requests, the normal approximation holds.
    args = (0.001, 0.002, 1000.0, 9000.0, 0.95, 0.8)
    summed, normal = detection_seconds(*args), normal_detection_seconds(*args)
    assert abs(summed / normal - 1.0) < 0.03, f"summed {summed:.4g} s vs normal {normal:.4g} s"
    assert abs(z_test_power(*args[:5], summed) - 0.8) < 0.002, "bisection missed the power"


def test_more_canary_traffic_detects_sooner_and_a_stricter_test_later():
    plan = CanaryPlan(step_shares=(0.01, 0.05, 0.25))
    rollout = plan_rollout(Workload(rate_rps=2000, replicas=8), plan)
    times = [step.error_detection.seconds for step in rollout.steps]
    assert times == sorted(times, reverse=True), f"times do not fall as the share grows: {times}"
    strict = plan_rollout(
        Workload(rate_rps=2000, replicas=8), CanaryPlan(step_shares=(0.01,), confidence=0.99)
    )
    assert strict.steps[0].error_detection.seconds > times[0], "99% should take longer than 95%"


def test_shadow_traffic_is_observed_and_detects_sooner():
    workload = Workload(rate_rps=1000, replicas=6)
    plain = plan_rollout(workload, CanaryPlan(step_shares=(0.01,))).steps[0]
    shadowed = plan_rollout(workload, CanaryPlan(step_shares=(0.01,), shadow_share=0.1)).steps[0]
    assert math.isclose(shadowed.shadow_rps, 1000 * 0.1 * 0.99), f"shadow {shadowed.shadow_rps}"
    assert math.isclose(shadowed.error_detection.canary_rate_rps, 10 + 99), "shadow not observed"
    assert shadowed.error_detection.seconds < plain.error_detection.seconds, "no faster with shadow"


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


def test_the_last_step_has_no_baseline_to_compare_with():
    step = plan_rollout(Workload()).steps[-1]
    for detection in (step.error_detection, step.latency_detection):
        assert detection.seconds is None and "no baseline" in detection.note, detection


def test_an_unstable_canary_says_so_instead_of_a_p99_detection_time():
    # 1 replica of 16 CPU workers at 20 ms, batching off: ~800 req/s; 5% of 20k is 1,000.
    workload = Workload(rate_rps=20_000, replicas=20, dynamic_batching=False)
    step = plan_rollout(workload, CanaryPlan(step_shares=(0.05,), shadow_share=0.5)).steps[0]
    assert not step.canary_latency.is_stable, "expected an overloaded canary"
    assert step.latency_detection.seconds is None, "a p99 detection time for an unstable queue"
    assert "unstable (∞)" in step.latency_detection.note, step.latency_detection.note


@pytest.mark.parametrize("regression", [0.01, 0.2, 1.0, 3.0])
def test_the_tail_share_lies_between_one_and_five_percent_and_grows(regression):
    result = latency(Workload(rate_rps=3000, replicas=10))
    share = tail_share_after_regression(result, regression)
    more = tail_share_after_regression(result, regression * 1.5)
    assert BASELINE_TAIL_SHARE < share < more < 0.05, f"{regression}: {share}, then {more}"


BAD_PLANS = {
    "share 0": ({"step_shares": (0.0, 0.5)}, "step_shares[0]=0.0 is outside"),
    "share above 1": ({"step_shares": (0.5, 1.5)}, "step_shares[1]=1.5 is outside"),
    "shares fall": ({"step_shares": (0.5, 0.1)}, "must increase"),
    "no steps": ({"step_shares": ()}, "1 to 10 shares"),
    "error rate 1": ({"regressed_error_rate": 1.0}, "regressed_error_rate=1.0 is outside"),
    "baseline error 0.7": ({"baseline_error_rate": 0.7}, "baseline_error_rate=0.7 is outside"),
    "no rise": ({"regressed_error_rate": 0.001}, "must be above baseline_error_rate"),
    "negative regression": ({"p99_regression": -0.1}, "p99_regression=-0.1 is outside"),
    "power 1": ({"power": 1.0}, "power=1.0 is outside"),
    "nan window": ({"window_s": math.nan}, "window_s must be a finite number"),
    "placement": ({"placement": "moon"}, "placement='moon' is not one of"),
}


@pytest.mark.parametrize("name", BAD_PLANS)
def test_bad_inputs_raise_a_message_naming_field_and_value(name):
    changes, message = BAD_PLANS[name]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        CanaryPlan(**changes)


def test_a_judge_sees_a_regression_at_the_first_metric_point_after_the_test_time():
    from sdlab_model.timeline.canary import first_metric_point_s

    assert first_metric_point_s(0.4, 60.0) == 60.0, "sub-second: the first 60 s point"
    assert first_metric_point_s(60.0, 60.0) == 60.0, "exactly one interval: that point"
    assert first_metric_point_s(61.0, 15.0) == 75.0, "61 s at 15 s points: the 75 s point"
    with pytest.raises(ValueError, match="interval_s"):
        first_metric_point_s(1.0, 0.0)
