"""The overload model against its simulator out of sample: the held-out grid, made after the
last flag rule, has no unflagged point beyond the tolerance; the test grid's one miss is
flagged by the rule it led to."""

from __future__ import annotations

from sdlab_model.overload import overload
from sdlab_model.overload.validation import HELD_OUT_GRID, TEST_GRID, check_overload


def test_the_held_out_grid_has_no_unflagged_miss():
    rows = check_overload(HELD_OUT_GRID, seed=0)
    misses = [(row.point.label, row.errors) for row in rows if row.miss]
    assert not misses, f"unflagged points beyond the tolerance: {misses}"
    assert sum(not row.flagged for row in rows) >= len(rows) // 2, "the grid is mostly flagged"


def test_retries_near_capacity_are_flagged_wherever_the_attempts_settle():
    point = next(p for p in TEST_GRID if p.label == "c=32 D=50ms, K=48 T=180ms 3 retries, 1.05x")
    result = overload(point.workload, point.policy, point.fresh_rps)
    assert result.attempt_rps / result.capacity_rps > 1.5, "the point's attempts moved"
    assert result.flagged_because and "fresh requests at 1.05x" in result.flagged_because, (
        result.flagged_because
    )


def test_a_deadline_on_the_fullest_queues_edge_is_flagged():
    from sdlab_model.overload import OverloadPolicy
    from sdlab_model.overload.validation import replica_design

    design = replica_design(16, 10.0, 100.0)  # the fullest queue of 24 waits 24 x 10 / 16 = 15 ms
    on_edge = overload(design, OverloadPolicy(queue_limit=24, deadline_ms=25.0), 1.6 * 1600.0)
    assert on_edge.flagged_because and "fullest queue" in on_edge.flagged_because, (
        on_edge.flagged_because
    )
    away = overload(design, OverloadPolicy(queue_limit=24, deadline_ms=40.0), 1.6 * 1600.0)
    assert not away.flagged_because or "fullest queue" not in away.flagged_because, (
        away.flagged_because
    )
