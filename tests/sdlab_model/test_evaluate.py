"""evaluate() end to end: both models on the five cards, and the contract other code relies on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model import Workload, evaluate, min_replicas_for_target, p99_grid
from sdlab_model.scenarios import SCENARIOS

CARDS = {card.id: card for card in SCENARIOS}


@pytest.mark.parametrize("card", SCENARIOS, ids=lambda card: card.id)
def test_queueing_model_recommends_each_cards_own_stage(card):
    assessment = evaluate(card.workload(), "queueing")
    assert assessment.stage.number == card.step, (
        f"card {card.id} (step {card.step}) recommends stage {assessment.stage.number} "
        f"({assessment.stage.title!r}) in the queueing model"
    )


@pytest.mark.parametrize("card", SCENARIOS, ids=lambda card: card.id)
def test_queueing_model_meets_each_cards_target_or_says_what_does(card):
    assessment = evaluate(card.workload(), "queueing")
    needed = assessment.min_replicas_for_target
    if assessment.meets_target:
        assert needed is not None and needed <= card.workload().replicas, (
            f"card {card.id} meets its target at {card.workload().replicas} replicas "
            f"but min_replicas_for_target says {needed}"
        )
    else:
        assert needed is not None and needed > card.workload().replicas, (
            f"card {card.id} misses its target (p99 {assessment.p99_ms:.1f} ms > "
            f"{card.workload().p99_target_ms} ms) and min_replicas_for_target gives {needed}"
        )
        met = evaluate(card.workload().with_changes(replicas=needed), "queueing")
        assert met.meets_target, f"{needed} replicas were said to meet card {card.id}'s target"


@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_min_replicas_is_the_smallest_count_that_meets_the_target(model):
    # Card 2's traffic unbatched: 3,000 req/s of a 20 ms model needs at least 60 CPU workers.
    workload = (
        CARDS["batching"]
        .workload()
        .with_changes(replicas=1, p99_target_ms=60, dynamic_batching=False)
    )
    needed = min_replicas_for_target(workload, model)
    assert needed is not None, (
        f"{model}: no replica count meets a 60 ms target for card 2 unbatched"
    )
    assert evaluate(workload.with_changes(replicas=needed), model).meets_target, (
        f"{model}: {needed} replicas do not meet the target they were chosen for"
    )
    if needed > 1:
        fewer = evaluate(workload.with_changes(replicas=needed - 1), model)
        assert not fewer.meets_target, f"{model}: {needed - 1} replicas already meet the target"


def test_min_replicas_is_none_when_no_count_meets_the_target():
    # A 500 ms model can never meet a 5 ms p99: compute alone exceeds it.
    workload = Workload(model_latency_ms=500, p99_target_ms=5, dynamic_batching=False)
    assert min_replicas_for_target(workload) is None, (
        "a target below compute time was said to be met"
    )


def test_unstable_load_reports_infinity_not_a_capped_number():
    workload = Workload(rate_rps=500_000, replicas=1, dynamic_batching=False)
    assessment = evaluate(workload, "queueing")
    assert not assessment.is_stable, "500k req/s on one CPU replica was called stable"
    assert math.isinf(assessment.p99_ms), f"unstable p99 should be inf, got {assessment.p99_ms}"
    assert assessment.utilization >= 1.0, (
        f"utilization {assessment.utilization} below 1 at overload"
    )


def test_models_disagree_where_the_seed_heuristic_is_wrong():
    # Four CPU replicas near saturation: the seed's sqrt(R) relief is a heuristic, the queueing
    # model is not, so the two p99s must differ.
    workload = Workload(rate_rps=3_000, model_latency_ms=20, dynamic_batching=False, replicas=4)
    teaching_p99 = evaluate(workload, "teaching").p99_ms
    queueing_p99 = evaluate(workload, "queueing").p99_ms
    assert not math.isclose(teaching_p99, queueing_p99, rel_tol=0.05), (
        f"teaching {teaching_p99:.2f} ms and queueing {queueing_p99:.2f} ms should differ"
    )


def test_unknown_model_is_a_clear_error():
    with pytest.raises(ValueError, match="model='mm1'"):
        evaluate(Workload(), "mm1")


@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_grid_cell_equals_point_evaluation(model):
    workload = CARDS["gpu-autoscale"].workload()
    rates = np.array([1_000.0, workload.rate_rps, 40_000.0])
    replicas = np.array([2.0, float(workload.replicas), 9.0])
    grid = p99_grid(workload, rates, replicas, model)
    assert grid.shape == (3, 3), f"grid shape {grid.shape}, expected (len(replicas), len(rates))"
    point = evaluate(workload, model)
    expected = point.p99_ms if point.is_stable else math.inf
    assert grid[1, 1] == pytest.approx(expected, rel=0.03), (
        f"{model}: grid cell {grid[1, 1]} differs from the point model {expected}"
    )


_MEMO_CASES = [
    *(card.workload() for card in SCENARIOS),
    Workload(rate_rps=4_321.0, replicas=3, p99_target_ms=45.0),
    Workload(rate_rps=900.0, replicas=40, dynamic_batching=False, lb_policy="random"),
    Workload(rate_rps=12_000.0, replicas=7, gpu=True, models_hosted=30, arrival_cv=2.0),
]


@pytest.mark.parametrize("model", ["queueing", "teaching"])
@pytest.mark.parametrize("workload", _MEMO_CASES, ids=range(len(_MEMO_CASES)))
def test_memoized_replica_search_equals_a_sweep_of_the_workload_itself(workload, model):
    """The memo keys the p99 column without the replicas and the target: neither may matter."""
    counts = np.arange(1, 501, dtype=float)
    for changes in ({}, {"replicas": 1}, {"replicas": 333}, {"p99_target_ms": 30.0}):
        moved = workload.with_changes(**changes)
        p99 = p99_grid(moved, np.array([moved.rate_rps]), counts, model)[:, 0]
        meets = np.flatnonzero(p99 <= moved.p99_target_ms)
        swept = int(counts[meets[0]]) if meets.size else None
        assert min_replicas_for_target(moved, model) == swept, (
            f"{model}, {changes}: the memo says {min_replicas_for_target(moved, model)}, "
            f"a sweep of the workload itself {swept}"
        )


def test_moving_the_target_or_the_replicas_reuses_what_they_do_not_change(monkeypatch):
    """A visitor moves one input at a time: the target changes no latency and no p99-over-replica
    column, the replicas no column (issue 13: a Lab rerun with new inputs was 8x a bare page)."""
    from sdlab_model import assessment
    from sdlab_model.queues import queueing

    latencies, grids = [], []
    real_latency, real_grid = queueing.latency, queueing.p99_grid
    monkeypatch.setattr(queueing, "latency", lambda w: latencies.append(w) or real_latency(w))
    monkeypatch.setattr(queueing, "p99_grid", lambda w, *a: grids.append(w) or real_grid(w, *a))
    first = Workload(rate_rps=3_137.0, replicas=5, p99_target_ms=80.0)  # in no other test
    evaluate(first, "queueing")
    assert latencies and grids, "the first evaluation computed nothing: the test is void"
    latencies.clear(), grids.clear()
    target_moved = evaluate(first.with_changes(p99_target_ms=120.0), "queueing")
    assert latencies == [] and grids == [], (
        f"moving the target recomputed {len(latencies)} latencies and {len(grids)} columns"
    )
    replicas_moved = evaluate(first.with_changes(replicas=9), "queueing")
    assert grids == [], f"moving the replicas recomputed {len(grids)} p99-over-replica columns"
    assert len(latencies) == 2, f"expected this workload's and its batching toggle's: {latencies}"
    assessment._queueing_latency.cache_clear(), assessment._p99_over_replica_counts.cache_clear()
    for memoized, workload in (
        (target_moved, first.with_changes(p99_target_ms=120.0)),
        (replicas_moved, first.with_changes(replicas=9)),
    ):
        assert memoized == evaluate(workload, "queueing"), "a memoized evaluation differs"
