"""Fan-out arithmetic: the paper's slow-request shares, and order statistics against sampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.tail import fanout_quantiles, fit_leaf, simulate_tail, slow_request_probability
from sdlab_model.tail.fanout import leaves_needed, order_statistic_tail
from sdlab_model.tail.paper import SLOW_EXAMPLES


def test_must_show_2_the_papers_arithmetic():
    # Dean & Barroso 2013, "Why Variability Is Amplified by Scale": 63% and "almost one in five"
    assert slow_request_probability(0.01, 100) == pytest.approx(0.634, abs=5e-4)
    assert slow_request_probability(1e-4, 2000) == pytest.approx(0.181, abs=5e-4)
    for p, fanout, published in SLOW_EXAMPLES:
        assert round(slow_request_probability(p, fanout), 2) == published


def test_slow_request_probability_edges():
    assert slow_request_probability(0.0, 1000) == 0.0
    assert slow_request_probability(1.0, 3) == 1.0
    assert slow_request_probability(0.2, 1) == pytest.approx(0.2)
    # tiny p over a large N keeps its digits: N p to first order
    assert slow_request_probability(1e-12, 1000) == pytest.approx(1e-9, rel=1e-6)
    with pytest.raises(ValueError):
        slow_request_probability(0.1, 0)


@pytest.mark.parametrize(("fanout", "done"), [(1, 1), (10, 3), (100, 95), (100, 99)])
def test_order_statistic_tail_solves_the_binomial_sum(fanout, done):
    for q in (0.5, 0.95, 0.99):
        tail = order_statistic_tail(fanout, done, q)
        at_most = sum(
            math.comb(fanout, j) * tail**j * (1.0 - tail) ** (fanout - j)
            for j in range(fanout - done + 1)
        )
        assert at_most == pytest.approx(q, rel=1e-9)


def test_waiting_for_all_is_the_leaf_quantile_at_q_to_the_one_over_n():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    for fanout in (1, 7, 100, 2000):
        got = fanout_quantiles(leaf, fanout, (0.5, 0.99))
        for q, value in got.items():
            assert value == pytest.approx(leaf.quantile(q ** (1.0 / fanout)), rel=1e-9)


def test_more_leaves_wait_longer_and_fewer_needed_wait_less():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    p99_all = [fanout_quantiles(leaf, n, (0.99,))[0.99] for n in (1, 10, 100, 1000)]
    assert p99_all == sorted(p99_all)
    assert len(set(p99_all)) == len(p99_all)
    some = fanout_quantiles(leaf, 100, (0.99,), done_share=0.95)[0.99]
    assert some < p99_all[2]


def test_leaves_needed_rounds_shares_of_leaves_up():
    assert leaves_needed(100, 0.95) == 95
    assert leaves_needed(10, 0.95) == 10
    assert leaves_needed(3, 0.01) == 1
    assert leaves_needed(2000, 1.0) == 2000


@pytest.mark.parametrize("done_share", [1.0, 0.95])
def test_order_statistics_agree_with_the_monte_carlo(done_share):
    leaf = fit_leaf(1.0, 5.0, 10.0)
    quantiles = (0.5, 0.95, 0.99)
    exact = fanout_quantiles(leaf, 100, quantiles, done_share=done_share)
    sim = simulate_tail(leaf, 100, 60_000, seed=11, done_share=done_share, quantiles=quantiles)
    for q in quantiles:
        # the interval is 95%: three quantiles each miss 5% of the time; widen by its own half-width
        interval = sim.quantiles[q]
        slack = 0.5 * (interval.high - interval.low)
        assert interval.low - slack <= exact[q] <= interval.high + slack, (q, exact[q], interval)


def test_simulation_is_seeded():
    leaf = fit_leaf(1.0, 5.0, 10.0)
    first = simulate_tail(leaf, 20, 5_000, seed=3, delay_ms=5.0)
    again = simulate_tail(leaf, 20, 5_000, seed=3, delay_ms=5.0)
    other = simulate_tail(leaf, 20, 5_000, seed=4, delay_ms=5.0)
    assert first == again
    assert first != other
    assert np.isfinite(first.quantiles[0.999].estimate)
