"""The overload model's queue: its limits against the theory it reduces to (the unbounded M/D/c,
the M/M/c/K closed form, Erlang B, a small case by hand) and the direction of every knob."""

from __future__ import annotations

import math

import pytest

from sdlab_model.overload import OverloadPolicy, Station, overload, shed, shedding
from sdlab_model.queues.erlang import erlang_b
from sdlab_model.queues.mdc import MdcWait
from sdlab_model.workload import Workload

ONE_SERVER = Station(servers=1, service_ms=10.0)
FOUR = Station(servers=4, service_ms=20.0)


def _mmck_blocking(c: int, k: int, a: float) -> float:
    """M/M/c/K blocking from the closed form (Gross & Harris §2.5): ``p_n`` for ``n = 0 ..
    c+k`` with ``p_n ∝ a^n / n!`` up to ``c`` and ``a^c / c! rho^(n-c)`` beyond; blocking is
    ``p_{c+k}``."""
    rho = a / c
    terms = [a**n / math.factorial(n) for n in range(c + 1)]
    terms += [terms[-1] * rho**j for j in range(1, k + 1)]
    return terms[-1] / sum(terms)


@pytest.mark.parametrize("rate_rps", [50.0, 120.0, 185.0])
def test_without_limit_or_deadline_the_queue_is_the_unbounded_mdc(rate_rps):
    """K -> inf, T -> inf: the exact M/D/c p99 and nothing turned away."""
    result = shed(FOUR, rate_rps, OverloadPolicy(), target_ms=1e9)
    a = rate_rps / 1000.0 * FOUR.service_ms
    exact = FOUR.service_ms * (1.0 + MdcWait.solve(4, a).wait_quantile(0.99))
    assert result.served_p99_ms == pytest.approx(exact, rel=1e-12), "not the M/D/c p99"
    assert result.rejected_share == result.timed_out_share == 0.0, "an unbounded queue shed"
    assert result.approximate_because is None, "the unbounded M/D/c is exact, not approximate"


def test_a_long_limit_converges_to_the_unbounded_queue():
    unbounded = shed(FOUR, 170.0, OverloadPolicy(), target_ms=1e9)
    for limit, tolerance in ((16, 0.02), (64, 1e-6)):
        bounded = shed(FOUR, 170.0, OverloadPolicy(queue_limit=limit), target_ms=1e9)
        assert bounded.served_p99_ms == pytest.approx(unbounded.served_p99_ms, rel=0.2), limit
        assert bounded.rejected_share < tolerance, f"K={limit}: {bounded.rejected_share}"


@pytest.mark.parametrize("c,k,multiple", [(1, 3, 0.6), (3, 5, 0.9), (8, 10, 1.5), (4, 2, 3.0)])
def test_exponential_service_gives_the_mmck_closed_form(c, k, multiple):
    """With exponential service (scv 1) the scaled birth-death is M/M/c/K itself."""
    station = Station(servers=c, service_ms=10.0)
    rate = multiple * station.capacity_rps
    result = shed(station, rate, OverloadPolicy(queue_limit=k), target_ms=1e9, scv=1.0)
    expected = _mmck_blocking(c, k, rate / 1000.0 * 10.0)
    assert result.rejected_share == pytest.approx(expected, rel=1e-9), "not the M/M/c/K blocking"


def test_no_waiting_room_with_exponential_service_is_erlang_b():
    station = Station(servers=6, service_ms=10.0)
    result = shed(station, 700.0, OverloadPolicy(queue_limit=0), target_ms=1e9, scv=1.0)
    assert result.rejected_share == pytest.approx(erlang_b(6, 7.0), rel=1e-9), "not Erlang B"


def test_one_server_one_place_by_hand():
    """M/D/1 with one waiting place at rho = 2 (past capacity), by hand: the scaled birth-death
    has states 0, 1 (busy) and two scaled places: p ∝ 1, 2, 4, 8, so 8/15 are rejected, and the
    one place waits at most one service (10 ms): a served p99 under 20 ms."""
    result = shed(ONE_SERVER, 200.0, OverloadPolicy(queue_limit=1), target_ms=1e9)
    assert result.rejected_share == pytest.approx(8 / 15, rel=1e-12), "not 8/15"
    assert 10.0 < result.served_p99_ms <= 20.0, f"served p99 {result.served_p99_ms}"


def test_past_capacity_the_limit_serves_capacity_and_rejects_the_rest():
    for multiple in (1.5, 3.0):
        result = shed(FOUR, multiple * FOUR.capacity_rps, OverloadPolicy(queue_limit=8), 1e9)
        assert result.rejected_share == pytest.approx(1 - 1 / multiple, abs=1e-3), multiple
        # the full queue waits about K / c services: 2 x 20 ms, then 20 ms of service
        assert 55.0 < result.served_p99_ms <= 60.0, result.served_p99_ms


def test_no_limit_no_deadline_past_capacity_is_unstable():
    result = shed(FOUR, FOUR.capacity_rps, OverloadPolicy(), 100.0)
    assert not result.is_stable and math.isinf(result.served_p99_ms), "no steady state expected"
    assert result.good_share == 0.0


def test_a_deadline_without_a_limit_collapses_into_late_work():
    """Past capacity the queue holds everyone for the deadline: what starts ends after it."""
    result = shed(FOUR, 2 * FOUR.capacity_rps, OverloadPolicy(deadline_ms=60.0), 100.0)
    assert result.timed_out_share == pytest.approx(0.5, abs=1e-3), "half must time out at 2x"
    assert result.late_share > 0.45 and result.good_share < 0.01, result


@pytest.mark.parametrize("multiple", [0.5, 0.9, 1.2])
def test_a_longer_limit_rejects_less_and_waits_longer(multiple):
    rate = multiple * FOUR.capacity_rps
    short = shed(FOUR, rate, OverloadPolicy(queue_limit=4), 1e9)
    long = shed(FOUR, rate, OverloadPolicy(queue_limit=16), 1e9)
    assert long.rejected_share <= short.rejected_share, "a longer queue rejected more"
    assert long.served_p99_ms >= short.served_p99_ms, "a longer queue served faster"


def test_overload_of_the_labs_design_reads_its_replicas():
    workload = Workload(dynamic_batching=False, replicas=2, cpu_workers_per_replica=16)
    result = overload(workload, OverloadPolicy(queue_limit=32), fresh_rps=2 * 1600.0)
    assert result.capacity_rps == pytest.approx(1600.0), "2 x 16 workers of 20 ms"
    assert result.goodput_rps == pytest.approx(1600.0, rel=1e-3), "goodput should be capacity"


def test_policy_names_the_bad_field():
    with pytest.raises(ValueError, match="queue_limit"):
        OverloadPolicy(queue_limit=-1)
    with pytest.raises(ValueError, match="deadline_ms must be a number"):
        OverloadPolicy(deadline_ms=float("nan"))
    with pytest.raises(ValueError, match="max_retries must be a whole number"):
        OverloadPolicy(max_retries=1.5)


@pytest.mark.parametrize("multiple", [1.05, 2.0])
def test_summing_places_into_blocks_keeps_the_answer(monkeypatch, multiple):
    """A long deadline past capacity: 4,000 blocks give what every place one by one gives."""
    policy = OverloadPolicy(deadline_ms=5_000.0)
    rate = multiple * FOUR.capacity_rps
    fine = shed(FOUR, rate, policy, 6_000.0)  # 2,000 places: no blocks
    monkeypatch.setattr(shedding, "MAX_BLOCKS", 100)
    coarse = shed(FOUR, rate, policy, 6_000.0)
    assert coarse.timed_out_share == pytest.approx(fine.timed_out_share, rel=1e-9), "lost share"
    assert coarse.served_p99_ms == pytest.approx(fine.served_p99_ms, rel=0.01), "served p99"
    assert coarse.good_share == pytest.approx(fine.good_share, rel=0.01, abs=1e-4), "good share"
