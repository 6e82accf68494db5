"""Retries as a fixed point on the offered load: the storm without a budget, the budget that
holds it, and the equation itself."""

from __future__ import annotations

import pytest

from sdlab_model.overload import OverloadPolicy, Station, retry_fixed_point
from sdlab_model.overload.retries import wanted_retries

STATION = Station(servers=16, service_ms=20.0)
CAPACITY = STATION.capacity_rps
LIMITED = OverloadPolicy(queue_limit=32, deadline_ms=100.0, max_retries=3)


@pytest.mark.parametrize("multiple", [0.9, 1.2, 2.0])
def test_the_attempt_rate_solves_the_fixed_point(multiple):
    fresh = multiple * CAPACITY
    point = retry_fixed_point(STATION, fresh, LIMITED, 100.0)
    p = point.queue.failed_share
    expected = fresh * (1 + p + p**2 + p**3)
    assert point.attempt_rps == pytest.approx(expected, rel=1e-6), "not fresh (1 + p + p² + p³)"


def test_without_a_budget_overload_multiplies_the_attempts():
    point = retry_fixed_point(STATION, 3 * CAPACITY, LIMITED, 100.0)
    assert point.amplification > 3.3, f"only {point.amplification:.2f} attempts per request"


def test_a_budget_holds_retries_to_its_share():
    budget = OverloadPolicy(queue_limit=32, deadline_ms=100.0, max_retries=3, retry_budget=0.2)
    for multiple in (1.5, 3.0):
        point = retry_fixed_point(STATION, multiple * CAPACITY, budget, 100.0)
        assert point.amplification == pytest.approx(1.2, rel=1e-6), multiple


def test_below_capacity_retries_barely_add():
    point = retry_fixed_point(STATION, 0.5 * CAPACITY, LIMITED, 100.0)
    assert point.amplification == pytest.approx(1.0, abs=1e-6)


def test_a_deadline_without_a_limit_has_a_storm_that_the_budget_removes():
    """Below capacity a second fixed point: every attempt late, each retried three times. With
    a 20% budget the attempts cannot reach capacity, so there is none."""
    storm = OverloadPolicy(deadline_ms=100.0, max_retries=3)
    point = retry_fixed_point(STATION, 0.75 * CAPACITY, storm, 100.0)
    assert point.amplification == pytest.approx(1.0, abs=1e-3), "the low fixed point first"
    assert point.storm_attempt_rps == pytest.approx(4 * 0.75 * CAPACITY, rel=1e-3), "no storm"
    budgeted = OverloadPolicy(deadline_ms=100.0, max_retries=3, retry_budget=0.2)
    assert retry_fixed_point(STATION, 0.75 * CAPACITY, budgeted, 100.0).storm_attempt_rps is None


def test_wanted_retries_is_the_geometric_series_within_the_budget():
    assert wanted_retries(100.0, 0.5, OverloadPolicy(max_retries=2)) == pytest.approx(75.0)
    capped = OverloadPolicy(max_retries=2, retry_budget=0.1)
    assert wanted_retries(100.0, 0.5, capped) == pytest.approx(10.0)
    assert wanted_retries(100.0, 1.0, OverloadPolicy(max_retries=3)) == pytest.approx(300.0)
