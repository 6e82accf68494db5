"""Tied requests: with nothing queued a tied request is one copy, a tie later than every wait
changes nothing, and the closed form agrees with the Monte Carlo of the same assumptions at a
few utilizations and fan-outs (the analytic quantile inside the simulation's 95% interval
widened by its half-width; the duplicated share within four standard errors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.tail import QueuedLeaf, SimQuantile, TiedLeaf, simulate_tied, tie
from sdlab_model.tail.fanout import fanout_quantiles
from sdlab_model.tail.tied_fleet import simulate_tied_fleet

TIMES_MS = np.array([0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0])


def _widened(interval: SimQuantile) -> tuple[float, float]:
    half = 0.5 * (interval.high - interval.low)
    return interval.low - half, interval.high + half


def test_with_nothing_queued_a_tied_request_is_one_copy():
    idle = QueuedLeaf(service_ms=2.0, utilization=0.0)
    for delay in (0.0, 1.0, 5.0):
        tied = TiedLeaf(idle, delay, delay / 2)
        assert tied.sf(TIMES_MS) == pytest.approx(idle.sf(TIMES_MS), rel=1e-12), delay
        assert tied.duplicated_share() == 0.0, f"delay {delay}: idle leaves ran a copy twice"
    outcome = tie(idle, fanout=100)
    assert outcome.tied == pytest.approx(outcome.single, rel=1e-9), "tying idle leaves helped"


def test_a_tie_sent_after_every_wait_is_one_copy():
    leaf = QueuedLeaf(service_ms=1.0, utilization=0.6)
    late = TiedLeaf(leaf, delay_ms=1e4, message_ms=0.0)
    assert late.sf(TIMES_MS) == pytest.approx(leaf.sf(TIMES_MS), rel=1e-9), "not one copy"


@pytest.mark.parametrize("utilization", [0.3, 0.5, 0.8])
def test_tying_shortens_every_quantile_of_a_busy_leaf(utilization):
    outcome = tie(QueuedLeaf(1.0, utilization), fanout=100, tie_delay_ms=0.2)
    for q in (0.99, 0.999):
        assert outcome.tied[q] < outcome.single[q], f"rho {utilization}: p{q * 100:g} not shorter"


@pytest.mark.parametrize(("utilization", "fanout"), [(0.5, 1), (0.5, 100), (0.8, 20)])
def test_the_closed_form_agrees_with_the_simulation(utilization, fanout):
    tied = TiedLeaf(QueuedLeaf(1.0, utilization), delay_ms=1.0, message_ms=0.5)
    requests = 400_000 if fanout == 1 else 40_000
    sim = simulate_tied(tied, fanout, requests, seed=7, quantiles=(0.5, 0.99, 0.999))
    analytic = fanout_quantiles(tied, fanout, (0.5, 0.99, 0.999))
    for q, value in analytic.items():
        low, high = _widened(sim.quantiles[q])
        assert low <= value <= high, (
            f"rho {utilization}, fan-out {fanout}: p{q * 100:g} analytic {value:.3f} ms outside "
            f"the simulated [{low:.3f}, {high:.3f}]"
        )
    share = tied.duplicated_share()
    error = 4.0 * math.sqrt(share * (1 - share) / (requests * fanout))
    assert sim.duplicated_share == pytest.approx(share, abs=error), "duplicated share"


def test_the_fleet_simulation_without_ties_is_m_m_1():
    leaf = QueuedLeaf(1.0, 0.6)
    fleet = simulate_tied_fleet(10, 1.0, 0.6, 60_000, seed=3, tied=False)
    for q in (0.5, 0.99):
        low, high = _widened(fleet.quantiles[q])
        assert low <= leaf.quantile(q) <= high, f"p{q * 100:g}: not M/M/1's {leaf.quantile(q)}"
    assert fleet.duplicated_share == 0.0, "one copy ran twice"
    assert fleet.utilization == pytest.approx(0.6, rel=0.03), fleet.utilization


def test_the_fleet_finds_the_independent_waits_pessimistic_on_the_tail_and_light_on_duplicates():
    """What the flagged approximation misses, pinned in direction (2026-12-02, seed 3): in a
    fleet the tail is shorter than the closed form and more copies run twice."""
    tied = TiedLeaf(QueuedLeaf(1.0, 0.5), delay_ms=1.0, message_ms=0.5)
    fleet = simulate_tied_fleet(10, 1.0, 0.5, 60_000, seed=3, delay_ms=1.0, message_ms=0.5)
    assert fleet.quantiles[0.999].high < tied.quantile(0.999), "the fleet's tail is not shorter"
    assert fleet.duplicated_share > tied.duplicated_share(), "the fleet duplicates no more"
    assert fleet.utilization > 0.5, "the duplicates added no load"
