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
