"""The autoscaled timeline against the fixed fleet for the peak: its numbers are the two runs'
totals, and its sentence says which way each went."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sdlab_model.timeline import (
    AutoscalerConfig,
    ColdStart,
    TimelineInputs,
    TrafficShape,
    run_fixed_for_peak,
    run_timeline,
)
from sdlab_model.timeline.comparison import FixedFleetComparison, compare_with_fixed
from sdlab_model.workload import Workload

SPIKE = TrafficShape(kind="spike", base_rate_rps=200, factor=75, at_s=60, spike_duration_s=300)


def _inputs(kind: str, traffic: TrafficShape = SPIKE) -> TimelineInputs:
    return TimelineInputs(
        workload=Workload(),
        traffic=traffic,
        autoscaler=AutoscalerConfig(kind=kind, min_replicas=2, max_replicas=100),
        cold_start=ColdStart(35.0, 2.0, 2.0),
        duration_s=1200,
    )


@pytest.mark.parametrize("kind", ["none", "hpa", "kpa", "ray"])
def test_the_comparison_is_the_two_runs_totals(kind):
    inputs = _inputs(kind)
    autoscaled, fixed = run_timeline(inputs), run_fixed_for_peak(inputs)
    comparison = compare_with_fixed(autoscaled, fixed)
    assert comparison.autoscaled_usd == autoscaled.totals.usd
    assert comparison.fixed_usd == fixed.totals.usd
    assert comparison.autoscaled_minutes_over == autoscaled.totals.minutes_over_target
    assert comparison.fixed_minutes_over == fixed.totals.minutes_over_target
    assert comparison.fixed_replicas == fixed.fixed_replicas
    said = comparison.sentence
    assert f"fixed fleet of {fixed.fixed_replicas} replicas" in said, said
    assert f"of {autoscaled.totals.minutes} over the 100 ms p99 target" in said, said
    assert ("saved" in said) == (fixed.totals.usd - autoscaled.totals.usd > 0.005), said


def test_the_hpa_on_a_spike_saves_money_for_minutes_over_the_target():
    inputs = _inputs("hpa")
    comparison = compare_with_fixed(run_timeline(inputs), run_fixed_for_peak(inputs))
    assert comparison.saved_usd > 0 and comparison.extra_minutes_over > 0, comparison
    assert "It paid for that with" in comparison.sentence, comparison.sentence


BASE = FixedFleetComparison("Kubernetes HPA", 5, 20, 3, 0, 2.0, 2.5, 100.0)


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({}, ["saved $0.50 (20%): $2.00 against $2.50", "paid for that with 3 minutes of 20"]),
        ({"autoscaled_usd": 3.0}, ["cost $0.50 (20%) more", "also worse on the target"]),
        ({"autoscaled_minutes_over": 0, "fixed_minutes_over": 2}, ["bought 2 minutes fewer"]),
        ({"autoscaled_minutes_over": 1, "fixed_minutes_over": 1}, ["did as well: 1 minute of"]),
        ({"autoscaled_usd": 2.5}, ["cost the same: $2.50 against $2.50"]),
        ({"fixed_replicas": None}, ["fixed fleet of 500 replicas (none up to it meets"]),
        ({"fixed_usd": 250.0}, ["saved $248 (99%): $2.00 against $250."]),
    ],
)
def test_the_sentence_says_which_way_each_total_went(changes, words):
    said = replace(BASE, **changes).sentence
    for word in words:
        assert word in said, f"{word!r} not in: {said}"


def test_timelines_of_different_traffic_are_not_compared():
    other = replace(SPIKE, factor=10)
    with pytest.raises(ValueError, match="same traffic"):
        compare_with_fixed(run_timeline(_inputs("hpa")), run_fixed_for_peak(_inputs("hpa", other)))
