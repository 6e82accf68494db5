"""The Tail at scale page's judgement: validated inputs, the heatmap grid against
``hedge_under_load`` cell by cell, and the simulation check of bounded size."""

from __future__ import annotations

import math

import pytest

from sdlab_model.tail import TailInputs, check_tail, hedge_under_load, judge_tail, tail_heatmap
from sdlab_model.tail.judgement import SIM_REQUESTS, check_requests


def test_the_defaults_are_table_1s_first_row_at_fan_out_100_hedged_at_p95():
    inputs = TailInputs()
    assert (inputs.leaf_p50_ms, inputs.leaf_p95_ms, inputs.leaf_p99_ms) == (1.0, 5.0, 10.0)
    assert (inputs.fanout, inputs.hedge_percentile) == (100, 95.0)
    assert inputs.delay_ms() == pytest.approx(5.0)


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"leaf_p95_ms": 0.5}, "must increase"),
        ({"leaf_p99_ms": 5.0}, "must increase"),
        ({"fanout": 0}, "outside"),
        ({"fanout": 2.5}, "whole number"),
        ({"hedge_percentile": 99.99}, "outside"),
        ({"base_utilization": 0.99}, "outside"),
        ({"leaf_p50_ms": math.nan}, "outside"),
    ],
)
def test_inputs_the_model_cannot_run_are_refused_with_a_reason(changes, words):
    with pytest.raises(ValueError, match=words):
        TailInputs(**changes)


def test_the_judgement_is_hedge_under_loads():
    inputs = TailInputs(fanout=1000, hedge_percentile=90.0, base_utilization=0.6)
    judged = judge_tail(inputs)
    loaded = hedge_under_load(inputs.leaf(), inputs.delay_ms(), 1000, 0.6, (0.99, 0.999))
    assert judged.hedged == loaded.hedged_loaded and judged.unhedged == loaded.unhedged
    assert judged.hedged_share == loaded.hedged_share and judged.stable
    assert judged.slow_share == pytest.approx(1.0 - 0.99**1000)


def test_no_steady_state_is_unstable_with_no_extra_work():
    judged = judge_tail(TailInputs(hedge_percentile=50.0, base_utilization=0.9))
    assert not judged.stable and judged.extra_work is None
    assert judged.hedged == {0.99: math.inf, 0.999: math.inf}


@pytest.mark.parametrize("base", [0.0, 0.5, 0.8])
def test_every_heatmap_cell_is_hedge_under_loads_p999(base):
    inputs = TailInputs(base_utilization=base)
    fanouts, percentiles = (1, 10, 100, 3000, 10_000), (50.0, 80.0, 95.0, 99.9)
    grid = tail_heatmap(inputs, fanouts, percentiles)
    leaf = inputs.leaf()
    for row, percentile in enumerate(percentiles):
        for column, fanout in enumerate(fanouts):
            delay = leaf.quantile(percentile / 100)
            loaded = hedge_under_load(leaf, delay, fanout, base, (0.999,))
            assert grid.stable[row, column] == loaded.stable
            expected = loaded.hedged_loaded[0.999]
            assert grid.quantile_ms[row, column] == pytest.approx(expected, rel=1e-9)


def test_the_check_is_bounded_and_agrees_at_the_defaults():
    assert check_requests(1) == SIM_REQUESTS[1] and check_requests(10_000) == SIM_REQUESTS[0]
    check = check_tail(TailInputs())
    assert check.requests == check_requests(100)
    assert check.agrees, [(r.label, r.quantile, r.analytic_ms, r.simulated) for r in check.rows]
    assert check.simulated_hedged_share == pytest.approx(check.hedged_share, abs=0.002)
