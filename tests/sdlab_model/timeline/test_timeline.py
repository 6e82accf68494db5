"""The time-stepped model: steady state, the HPA's and the KPA's step responses, the traffic
shapes and the uploaded CSV."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from sdlab_model import evaluate
from sdlab_model.timeline import (
    AutoscalerConfig,
    ColdStart,
    TimelineInputs,
    TrafficShape,
    parse_trace_csv,
    run_fixed_for_peak,
    run_timeline,
)
from sdlab_model.timeline.model import hpa_metric_delay_s, replicas_at_target, time_in_system_s
from sdlab_model.timeline.traffic import trace_to_csv
from sdlab_model.workload import Workload


def _decisions(result) -> list[tuple[float, int]]:
    return [
        (float(t), int(n)) for t, n in zip(result.times_s, result.decisions, strict=False) if n >= 0
    ]


@pytest.mark.parametrize(
    "workload",
    [
        Workload(rate_rps=3000, replicas=4),  # batched, round robin (the lab's defaults)
        Workload(rate_rps=1000, replicas=2, dynamic_batching=False, lb_policy="central_queue"),
    ],
    ids=["batched-round-robin", "unbatched-central"],
)
def test_constant_traffic_on_a_fixed_fleet_gives_evaluates_p99_at_every_step(workload):
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="constant", base_rate_rps=workload.rate_rps),
        autoscaler=AutoscalerConfig(kind="none", min_replicas=1, max_replicas=500),
        duration_s=300,
    )
    result = run_timeline(inputs)
    expected = evaluate(workload).p99_ms
    assert math.isfinite(expected), "the chosen workloads are stable"
    assert np.all(result.p99_ms == expected), (
        f"per-step p99 {np.unique(result.p99_ms)} differs from evaluate's {expected}"
    )
    assert np.all(result.minute_p99_ms == expected), "a steady minute's p99 is the step p99"
    assert np.all(result.backlog_requests == 0), "a stable fleet builds no backlog"
    assert np.all(result.ready_replicas == workload.replicas), "a fixed fleet does not move"
    hours = workload.replicas * 300 / 3600
    assert result.totals.replica_hours == pytest.approx(hours), "replica-hours of a fixed fleet"


# The HPA on a 3x step. 15 unbatched replicas at exactly the 70% target (C = one replica's
# capacity, so the offered rate is 10.5 C), the rate triples to 31.5 C at t = 30 s; a new
# replica takes 45 s to serve. By hand, from kubernetes/kubernetes
# pkg/controller/podautoscaler/replica_calculator.go (GetResourceReplicas, groupPods; read
# 2026-11-30 at commit 0006726) and horizontal.go (the default behavior's rate limit):
#   t=15, 30   utilization 0.7: ratio 1.0, inside the 10% tolerance: stay at 15.
#   t=45       window [30, 45) saturated (15 C < 31.5 C), utilization 1.0:
#              ceil(15 x 1.0 / 0.7) = ceil(21.43) = 22 (limit max(15 + 4, 2 x 15) = 30).
#   t=60..90   the 7 new pods are Pending or not Ready: groupPods ignores them and, on a
#              scale-up, the calculator counts them at 0%: 15 / (0.7 x 22) = 0.974, inside the
#              tolerance: stay at 22. The 7 serve from t = 90, but they are within the 5-minute
#              CPU initialization period of their StartTime, where a metric is ignored until a
#              whole metric window (15 s) was collected after the pod turned ready: they count
#              from t = 105 (hpa_metric_delay_s).
#   t=105      22 counted, still saturated (22 C < 31.5 C): ceil(22 / 0.7) = ceil(31.43) = 32.
#   t=165      32 counted; 32 C is just above 31.5 C but the backlog built since t = 30
#              (990 C + 570 C - 30 C = 1530 C requests) keeps them busy: ceil(32 / 0.7) = 46.
#   t=225      backlog 1530 C - 14.5 C x 15 s > 0, still saturated: ceil(46 / 0.7) = 66.
#   t=285      backlog at t=270 is 1530 C - 14.5 C x 60 = 660 C, drained at 34.5 C/s only
#              after t = 289: saturated through [270, 285): ceil(66 / 0.7) = ceil(94.3) = 95.
# Why not the "15 -> 22 -> 32 -> 43 over ~135 s": its decisions are one cold start
# (45 s) apart, which needs new pods' CPU to count the moment they turn ready; groupPods waits
# one 15 s metric window, so they are 60 s apart. And 43 = ceil(32 x u / 0.7) needs the 32
# replicas at u = 92-94% busy; at the 3x rate they are at 31.5 / 32 = 98% without a backlog
# (-> 45, where the fleet settles) and at 100% with the backlog they have (-> 46).
HPA_STEP_DECISIONS = [(45.0, 22), (105.0, 32), (165.0, 46), (225.0, 66), (285.0, 95)]


def _hpa_step_inputs() -> TimelineInputs:
    base = Workload(replicas=15, dynamic_batching=False, lb_policy="central_queue")
    per_replica = base.with_changes(replicas=1).capacity_rps
    return TimelineInputs(
        workload=base,
        traffic=TrafficShape(kind="step", base_rate_rps=10.5 * per_replica, factor=3, at_s=30),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=15, max_replicas=100),
        cold_start=ColdStart(node_provision_s=45, model_size_gb=0, load_bandwidth_gbps=1),
        duration_s=300,
    )


def test_hpa_step_response_matches_the_hand_computed_sequence():
    result = run_timeline(_hpa_step_inputs())
    assert _decisions(result) == HPA_STEP_DECISIONS, f"HPA decisions {_decisions(result)}"


def test_hpa_counts_a_new_pods_cpu_one_metric_window_after_it_is_ready():
    # The 5-minute CPU initialization period runs from the pod's StartTime, after its node is
    # provisioned: a 150 s model load on a 180 s node is still inside it when the pod turns
    # ready (330 s after the decision), so the pod waits the 15 s window.
    inside = ColdStart(node_provision_s=180, model_size_gb=150, load_bandwidth_gbps=1)
    assert hpa_metric_delay_s(inside, 15.0) == 15.0, "a pod ready within its first 5 min waits 15 s"
    # A 400 s load outlasts the period: the metric counts as soon as the pod is ready.
    outside = ColdStart(node_provision_s=35, model_size_gb=400, load_bandwidth_gbps=1)
    assert hpa_metric_delay_s(outside, 15.0) == 0.0, "past the period a ready pod counts at once"
    # 290 s of load: the period ends 10 s after readiness, before the window would.
    edge = ColdStart(node_provision_s=35, model_size_gb=290, load_bandwidth_gbps=1)
    assert hpa_metric_delay_s(edge, 15.0) == pytest.approx(10.0), "the period's end comes first"
    # The window is metrics-server's --metric-resolution: a 30 s one is waited in full inside
    # the period, and cut short by the period's end at the edge just as a 15 s one.
    assert hpa_metric_delay_s(inside, 30.0) == 30.0, "a 30 s window is waited in full"
    assert hpa_metric_delay_s(edge, 30.0) == pytest.approx(10.0), "the period's end, not 30 s"


def test_hpa_settles_where_the_formula_rests_without_a_backlog():
    inputs = _hpa_step_inputs()
    peak = inputs.traffic.peak_rate_rps(inputs.duration_s)
    assert replicas_at_target(inputs, peak) == 45, "31.5 C at 70% of C per replica: 45"
    long_run = run_timeline(replace(inputs, duration_s=1800))
    settled = int(long_run.ready_replicas[-1] + long_run.starting_replicas[-1])
    # At rest the utilization 31.5 / n is within 10% of 70%: n in [41, 50]. Coming down from
    # the ramp's overshoot (95), each recommendation is ceil(n x u / 0.7) >= 45.
    assert 45 <= settled <= 50, f"the HPA settled at {settled}, not in [45, 50]"


def test_hpa_capacity_arrives_exactly_one_cold_start_after_each_decision():
    inputs = _hpa_step_inputs()
    result = run_timeline(inputs)
    cold = inputs.cold_start.cold_start_s
    total_before = 15
    for decided_at, total in HPA_STEP_DECISIONS:
        serving_at = decided_at + cold
        if serving_at >= inputs.duration_s:
            continue
        before = result.ready_replicas[int(serving_at) - 1]
        after = result.ready_replicas[int(serving_at)]
        assert before == total_before, f"{total} ready already at {serving_at - 1:g} s ({before})"
        assert after == total, f"{total} not ready at {serving_at:g} s, one cold start later"
        starting = result.starting_replicas[int(decided_at)]
        assert starting == total - total_before, f"starting at {decided_at:g} s: {starting}"
        total_before = total
    assert np.all(result.backlog_requests[31:200] > 0), "the backlog grows while replicas start"
    assert np.all(np.isinf(result.p99_ms) == False), "every step has a ready fleet"  # noqa: E712
    assert result.totals.minutes_over_target >= 4, "the ramp costs minutes over the target"


# KPA panic mode. 4 unbatched replicas (16 workers x 20 ms, 800 req/s each), container
# concurrency 10, so the per-pod target is 7; a request spends 20 ms in the system, so 500 req/s
# keep 10 requests in flight and 2,500 req/s keep 50. A 5x spike from t = 20 to 40 s; 10 s cold
# start. Ticks every 2 s see the steps before them; panic window 6 s, stable window 60 s.
#   t=22  panic mean (4 x 10 + 2 x 50) / 6 = 23.3: ceil(23.3 / 7) = 4, 4/4 < 2.
#   t=24  (2 x 10 + 4 x 50) / 6 = 36.7: 6 pods, 6/4 = 1.5 < 2.
#   t=26  all 50: ceil(50 / 7) = 8, 8/4 = 2: panic. Stable (20 x 10 + 6 x 50) / 26 = 19.2
#         wants 3; panicking takes the larger: 8.  Ready at t = 36.
#   t=28..34 still 8/4 >= 2 (4 ready): panic extended to t = 34; from t = 42 the spike is gone
#         and both counts fall below 8, but no scale-down while panicking.
#   t=96  the first tick more than 60 s after the last over-threshold one (34): panic ends;
#         stable wants ceil((4 x 50 + 56 x 10) / 60 / 7) = 2, max scale-down floor(8 / 2) = 4,
#         min 4: back to 4.
KPA_PANIC_DECISIONS = [(26.0, 8), (96.0, 4)]


def test_kpa_panic_mode_matches_the_hand_computed_sequence():
    workload = Workload(
        replicas=4,
        dynamic_batching=False,
        model_latency_ms=20,
        cpu_workers_per_replica=16,
        lb_policy="central_queue",
    )
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(
            kind="spike", base_rate_rps=500, factor=5, at_s=20, spike_duration_s=20
        ),
        autoscaler=AutoscalerConfig(
            kind="kpa", min_replicas=4, max_replicas=100, kpa_container_concurrency=10
        ),
        cold_start=ColdStart(node_provision_s=10, model_size_gb=0, load_bandwidth_gbps=1),
        duration_s=150,
    )
    assert time_in_system_s(inputs) == pytest.approx(0.02), "the hand count assumes 20 ms"
    result = run_timeline(inputs)
    assert _decisions(result) == KPA_PANIC_DECISIONS, f"KPA decisions {_decisions(result)}"
    assert result.ready_replicas[35] == 4 and result.ready_replicas[36] == 8, (
        "the 4 panic replicas serve exactly one cold start (10 s) after t = 26"
    )
    assert np.all(result.ready_replicas[36:96] == 8), "no scale-down while panicking"


def test_ray_serve_waits_its_upscale_delay():
    workload = Workload(replicas=2, dynamic_batching=False, lb_policy="central_queue")
    inputs = TimelineInputs(
        workload=workload,
        traffic=TrafficShape(kind="step", base_rate_rps=100, factor=20, at_s=10),
        autoscaler=AutoscalerConfig(kind="ray", min_replicas=2, max_replicas=50),
        cold_start=ColdStart(node_provision_s=5, model_size_gb=0, load_bandwidth_gbps=1),
        duration_s=120,
    )
    result = run_timeline(inputs)
    first = _decisions(result)[0]
    # The look-back mean exceeds the target from the first step after t=10; the decision acts
    # once it has been wanted for more than 30 steps: at t = 11 + 30 = 41.
    assert first[0] == 41.0, f"Ray scaled up at {first[0]} s, not after its 30 s delay"


def test_a_fixed_fleet_for_the_peak_meets_the_target_at_the_peak():
    inputs = _hpa_step_inputs()
    fixed = run_fixed_for_peak(inputs)
    assert fixed.fixed_replicas is not None, "some fleet meets the target at 31.5 C"
    assert np.all(fixed.ready_replicas == fixed.fixed_replicas), "the fixed fleet never moves"
    assert fixed.totals.minutes_over_target == 0, "sized for the peak, no minute misses"
    autoscaled = run_timeline(inputs)
    assert autoscaled.totals.minutes_over_target > 0, "the HPA ramp misses minutes"


@pytest.mark.parametrize("kind", ["constant", "step", "spike", "diurnal"])
def test_each_shape_reaches_its_stated_peak(kind):
    shape = TrafficShape(kind=kind, base_rate_rps=100, factor=4, at_s=50, peak_to_trough=3)
    times = np.arange(0, 86_400, 1.0)
    rates = shape.rates_rps(times)
    assert rates.max() == pytest.approx(shape.peak_rate_rps(86_400)), f"{kind} peak"
    if kind == "diurnal":
        assert rates.mean() == pytest.approx(100, rel=1e-6), "a diurnal day averages the base"
        assert rates.max() / rates.min() == pytest.approx(3, rel=1e-6), "peak / trough"


def test_an_uploaded_trace_holds_each_rate_until_the_next_row():
    trace = parse_trace_csv("time_s,rate_rps\n0,100\n10,300\n20,50\n")
    assert parse_trace_csv(trace_to_csv(trace)) == trace, "CSV round trip"
    shape = TrafficShape(kind="uploaded", uploaded=trace)
    rates = shape.rates_rps(np.array([0, 9.9, 10, 19, 20, 500]))
    assert list(rates) == [100, 100, 300, 300, 50, 50], f"rates {rates}"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("when,how_many\n0,1\n", "header must be 'time_s,rate_rps'"),
        ("time_s,rate_rps\n", "no rows"),
        ("time_s,rate_rps\n0,abc\n", "row 2: rate_rps 'abc' is not a number"),
        ("time_s,rate_rps\n0,10\n5,10\n5,20\n", "row 4: time_s 5 does not come after 5"),
        ("time_s,rate_rps\n1,10\n", "first row's time_s must be 0"),
        ("time_s,rate_rps\n0,-3\n", "row 2: rate_rps -3 is outside"),
        ("time_s,rate_rps\n0,1,2\n", "row 2 has 3 cells"),
        ("time_s,rate_rps\n0,nan\n", "finite"),
    ],
)
def test_a_bad_trace_file_says_what_is_wrong(text, says):
    with pytest.raises(ValueError, match=None) as raised:
        parse_trace_csv(text)
    assert says in str(raised.value), f"message {raised.value!r} lacks {says!r}"


def test_inputs_are_validated_with_the_field_and_range():
    with pytest.raises(ValueError, match="factor=-1"):
        TrafficShape(factor=-1)
    with pytest.raises(ValueError, match="max_replicas=2 is below min_replicas=5"):
        AutoscalerConfig(min_replicas=5, max_replicas=2)
    with pytest.raises(ValueError, match="steps"):
        TimelineInputs(duration_s=86_400, step_s=0.1)
