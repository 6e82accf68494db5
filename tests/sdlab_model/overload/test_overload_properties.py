"""Invariants of the analytic model over random designs, policies and loads (Hypothesis): shares
are probabilities that add up, goodput never beats the attempts or the capacity, and the served
p99 never passes what a full queue or the deadline allows."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sdlab_model.overload import OverloadPolicy, Station, retry_fixed_point, shed

stations = st.builds(
    Station,
    servers=st.integers(1, 48),
    service_ms=st.floats(1.0, 200.0),
)
policies = st.builds(
    OverloadPolicy,
    queue_limit=st.none() | st.integers(0, 400),
    deadline_ms=st.none() | st.floats(1.0, 2_000.0),
    max_retries=st.integers(0, 4),
    retry_budget=st.none() | st.floats(0.0, 1.0),
)


@settings(max_examples=60, deadline=None)
@given(stations, policies, st.floats(0.05, 4.0), st.floats(1.0, 5_000.0))
def test_shares_goodput_and_p99_stay_within_their_bounds(station, policy, multiple, target_ms):
    rate = multiple * station.capacity_rps
    result = shed(station, rate, policy, target_ms)
    shares = (result.rejected_share, result.timed_out_share, result.late_share, result.good_share)
    assert all(-1e-12 <= s <= 1 + 1e-12 for s in shares), f"a share outside [0, 1]: {shares}"
    assert result.failed_share + result.good_share <= 1 + 1e-9, f"shares add past 1: {result}"
    if not result.is_stable:
        assert not policy.sheds and multiple >= 1.0, "unstable while shedding or below capacity"
        assert math.isinf(result.served_p99_ms), "an unstable queue with a finite p99"
        return
    goodput = rate * result.good_share
    assert goodput <= station.capacity_rps * (1 + 1e-6), f"goodput {goodput} over capacity"
    d, c = station.service_ms, station.servers
    ceiling = math.inf
    if policy.queue_limit is not None:
        ceiling = (math.ceil(policy.queue_limit / c) + 1) * d
    if policy.deadline_ms is not None:
        ceiling = min(ceiling, policy.deadline_ms + d)
    assert result.served_p99_ms <= ceiling * (1 + 1e-6), (result.served_p99_ms, ceiling)
    assert result.served_p99_ms >= d * (1 - 1e-9), "served faster than one service time"


@settings(max_examples=40, deadline=None)
@given(stations, policies, st.floats(0.05, 4.0))
def test_retries_multiply_attempts_at_most_by_their_count_or_budget(station, policy, multiple):
    point = retry_fixed_point(station, multiple * station.capacity_rps, policy, 1_000.0)
    most = 1.0 + policy.max_retries
    if policy.retry_budget is not None and policy.max_retries:
        most = min(most, 1.0 + policy.retry_budget)
    assert 1.0 - 1e-9 <= point.amplification <= most * (1 + 1e-9), (point.amplification, most)
    if point.storm_attempt_rps is not None:
        assert point.storm_attempt_rps > point.attempt_rps, "a storm below the first fixed point"
