"""The fallback model: off it is ``overload`` itself, a hand case (two Erlang loss systems in
series), the simulation agrees where unflagged, and the diagram carries the result's shares."""

from __future__ import annotations

import math

import pytest

from sdlab_model.overload import (
    FallbackModel,
    OverloadPolicy,
    overload,
    simulate_fallback,
    with_fallback,
)
from sdlab_model.overload.diagram import ms_text, overload_dot, share_text
from sdlab_model.overload.fallback_validation import TUNING_GRID, check_fallback_point
from sdlab_model.overload.validation import replica_design
from sdlab_model.workload import Workload


@pytest.mark.parametrize(
    "policy",
    [
        OverloadPolicy(queue_limit=20),
        OverloadPolicy(deadline_ms=80.0, max_retries=3),
        OverloadPolicy(),
    ],
)
@pytest.mark.parametrize("multiple", [0.5, 1.5])
def test_no_fallback_is_the_overload_result_exactly(policy, multiple):
    workload = Workload()
    rate = multiple * 8302.7
    alone = overload(workload, policy, rate)
    result = with_fallback(workload, policy, FallbackModel(replicas=0), rate)
    assert result.primary == alone, "off, the primary is not overload's own result"
    assert result.goodput_rps == alone.goodput_rps, "off, goodput differs from overload's"
    assert result.fallback_share == 0.0 and result.overflow_rps == 0.0, "off, yet overflow"
    assert result.lost_share == pytest.approx(alone.client_failure_share, abs=1e-15), "lost"
    assert result.flagged_because == alone.flagged_because, "off, a different flag"


def test_hand_case_two_loss_systems_in_series():
    """One server of 10 ms without a queue at 50 req/s loses a / (1 + a) = 1/3 (Erlang B,
    insensitive to the service law); the fallback, one server of 1 ms without a queue, sees
    50/3 req/s and loses a_f / (1 + a_f), a_f = 1/60; its answers take exactly 1 ms."""
    workload = replica_design(1, 10.0, 100.0)
    fallback = FallbackModel(1, 1, 1.0, queue_limit=0, usd_per_replica_hour=0.25)
    result = with_fallback(workload, OverloadPolicy(queue_limit=0), fallback, 50.0)
    fallback_loss = (1 / 60) / (1 + 1 / 60)
    assert result.primary.rejected_share == pytest.approx(1 / 3, rel=1e-9), "primary loss"
    assert result.overflow_rps == pytest.approx(50 / 3, rel=1e-9), "overflow rate"
    assert result.fallback_share == pytest.approx(1 / 3 * (1 - fallback_loss), rel=1e-9)
    assert result.lost_share == pytest.approx(1 / 3 * fallback_loss, rel=1e-9), "lost"
    assert result.primary_share == pytest.approx(2 / 3, rel=1e-9), "primary share"
    assert result.fallback_p99_ms == pytest.approx(1.0, rel=1e-5), "fallback answers in 1 ms"
    assert result.primary_p99_ms == pytest.approx(10.0, rel=1e-9), "primary answers in 10 ms"
    assert result.answered_p99_ms == pytest.approx(10.0, rel=1e-5), "every answer within 10 ms"
    assert result.goodput_rps == pytest.approx(50 * (1 - 1 / 3 * fallback_loss), rel=1e-9)
    assert result.fallback_usd_per_hour == pytest.approx(0.25), "one fallback replica's price"


def test_an_unstable_fallback_answers_nothing_and_says_so():
    workload = replica_design(8, 20.0, 100.0)
    fallback = FallbackModel(1, 1, 10.0)  # 100 req/s against an overflow of 400
    result = with_fallback(workload, OverloadPolicy(queue_limit=8), fallback, 800.0)
    assert not result.fallback_is_stable, "a fallback past capacity without a limit is unstable"
    assert result.fallback_share == 0.0 and math.isinf(result.fallback_p99_ms), "answers"
    assert result.lost_share == pytest.approx(0.5, rel=1e-3), "the overflow is lost"
    assert math.isfinite(result.answered_p99_ms), "the primary's answers still have a p99"


@pytest.mark.parametrize("index", [1, 2])  # 1.2x and 2x capacity, a fallback of 4 x 5 ms
def test_the_simulation_agrees_where_unflagged(index):
    point = TUNING_GRID[index]
    row = check_fallback_point(point)
    assert not row.flagged, f"{point.label} is flagged: {row.analytic.flagged_because}"
    assert not row.miss, f"{point.label}: errors {row.errors} beyond {row.tolerance:.0%}"


def test_the_simulation_refuses_a_fallback_that_is_off():
    with pytest.raises(ValueError, match="off"):
        simulate_fallback(Workload(), OverloadPolicy(queue_limit=4), FallbackModel(replicas=0))


def test_the_diagram_carries_the_results_shares():
    workload = replica_design(8, 20.0, 100.0)
    policy = OverloadPolicy(queue_limit=8, deadline_ms=60.0)
    result = with_fallback(workload, policy, FallbackModel(1, 2, 10.0, queue_limit=4), 960.0)
    dot = overload_dot(result, policy)
    for share in (result.primary_share, result.fallback_share, result.lost_share):
        assert share_text(share) in dot, f"{share_text(share)} is not on the diagram"
    assert f"p99 {ms_text(result.fallback_p99_ms)}" in dot, "the fallback's p99 is missing"
    assert "queue limit 8" in dot and "deadline 60 ms" in dot, "the primary's shedding is missing"
    assert "Fallback model" in dot, "no fallback box"
    off = with_fallback(workload, policy, FallbackModel(replicas=0), 960.0)
    assert "Fallback model" not in overload_dot(off, policy), "a fallback box with it off"


def test_the_tuning_grid_has_no_unflagged_miss():
    misses = [p.label for p in TUNING_GRID if check_fallback_point(p).miss]
    assert not misses, f"unflagged misses on the grid the flag rule was set on: {misses}"


def test_the_pages_inputs_are_the_models_ranges_and_make_a_valid_model():
    from dataclasses import fields

    from sdlab_model.overload.fallback import FALLBACK_RANGES
    from sdlab_model.page_params import FALLBACK_INPUTS

    model_fields = {f.name for f in fields(FallbackModel)}
    for spec in FALLBACK_INPUTS:
        assert spec.source in model_fields, f"{spec.name}: {spec.source} is no FallbackModel field"
        if spec.source in FALLBACK_RANGES:
            assert (spec.minimum, spec.maximum) == FALLBACK_RANGES[spec.source], spec.name
        assert spec.minimum <= spec.default <= spec.maximum, f"{spec.name}: default out of range"
    defaults = {spec.source: spec.default for spec in FALLBACK_INPUTS}
    model = FallbackModel(
        replicas=int(defaults["replicas"]),
        workers_per_replica=int(defaults["workers_per_replica"]),
        model_latency_ms=defaults["model_latency_ms"],
        queue_limit=int(defaults["queue_limit"]) or None,
        take_timed_out=bool(defaults["take_timed_out"]),
        usd_per_replica_hour=defaults["usd_per_replica_hour"],
    )
    assert model.is_on, "the page's default fallback should be on"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("replicas", -1),
        ("workers_per_replica", 0),
        ("model_latency_ms", math.nan),
        ("queue_limit", 2.5),
    ],
)
def test_a_bad_fallback_is_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        FallbackModel(**{"replicas": 1, field: value})
