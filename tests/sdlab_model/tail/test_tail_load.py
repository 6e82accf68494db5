"""Hedging's load fed back into the leaves: the fixed point it settles at, and where none exists."""

from __future__ import annotations

import math

import pytest

from sdlab_model.tail import fit_leaf, hedge, hedge_under_load
from sdlab_model.tail.paper import TABLE_1_ONE_LEAF

LEAF = fit_leaf(*TABLE_1_ONE_LEAF)
DELAY_MS = LEAF.quantile(0.95)


def test_idle_leaves_feel_no_load():
    loaded = hedge_under_load(LEAF, DELAY_MS, 100, base_utilization=0.0)
    assert loaded.scale == 1.0
    assert loaded.hedged_loaded == pytest.approx(hedge(LEAF, DELAY_MS, 100).request_after)


@pytest.mark.parametrize("base", [0.3, 0.5, 0.7])
def test_the_settled_point_is_a_fixed_point(base):
    loaded = hedge_under_load(LEAF, DELAY_MS, 100, base_utilization=base)
    assert loaded.stable
    assert loaded.hedged_share == pytest.approx(float(LEAF.sf(DELAY_MS / loaded.scale)), rel=1e-9)
    assert loaded.utilization == pytest.approx(base * (1.0 + loaded.hedged_share))
    assert loaded.scale == pytest.approx((1.0 - base) / (1.0 - loaded.utilization), rel=1e-9)
    # busier leaves cross the fixed delay more often: more than the unloaded 5% is hedged
    assert loaded.hedged_share > 0.05


def test_load_costs_some_of_the_gain_and_more_as_the_leaves_fill():
    p999 = [
        hedge_under_load(LEAF, DELAY_MS, 100, base_utilization=base).hedged_loaded[0.999]
        for base in (0.0, 0.3, 0.5, 0.7)
    ]
    assert p999 == sorted(p999)
    unhedged = hedge_under_load(LEAF, DELAY_MS, 100, base_utilization=0.7).unhedged[0.999]
    assert p999[-1] < unhedged  # still a gain at 70% busy


def test_a_fixed_delay_runs_away_where_the_static_estimate_looks_safe():
    # 80% busy plus 5% more requests is 84%, yet slower leaves pass the 5 ms delay more often,
    # which adds load, which slows them further: no steady state under this model
    assert 0.8 * 1.05 < 1.0
    loaded = hedge_under_load(LEAF, DELAY_MS, 100, base_utilization=0.8)
    assert not loaded.stable
    assert math.isinf(loaded.hedged_loaded[0.999])
    assert loaded.utilization >= 1.0
