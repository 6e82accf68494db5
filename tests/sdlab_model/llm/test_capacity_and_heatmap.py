"""The capacity searches, the heatmap, and the analytic kernels against their numpy twins."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.llm import DEFAULT_EFFICIENCY, LlmWorkload, analytic, llm_latency
from sdlab_model.llm import _analytic_kernel as kernel
from sdlab_model.llm.capacity import max_rate_at_targets, max_stable_rate, max_stable_rates
from sdlab_model.llm.heatmap import llm_heatmap


def test_max_stable_rate_is_the_edge_of_stability():
    w = LlmWorkload(model_id="llama-3.1-70b", tensor_parallel=4)
    edge = max_stable_rate(w)
    assert edge > 0, "a 70B model on 4 H100s serves some traffic"
    assert llm_latency(w.with_changes(rate_rps=0.97 * edge)).is_stable, "just below: stable"
    assert not llm_latency(w.with_changes(rate_rps=1.03 * edge)).is_stable, "just above: not"


def test_stable_rates_searched_together_are_each_ones_and_two_rounds_are_near_from_below():
    workloads = [
        LlmWorkload(tensor_parallel=tp, replicas=replicas)
        for tp, replicas in ((1, 1), (2, 3), (8, 1), (4, 16))
    ]
    alone = np.array([max_stable_rate(w) for w in workloads])
    assert np.array_equal(max_stable_rates(workloads), alone), "together, not each one's edge"
    coarse = max_stable_rates(workloads, rounds=2)
    assert np.all(coarse <= alone) and np.all(coarse >= 0.95 * alone), (coarse, alone)


def test_max_rate_at_targets_meets_them_and_tighter_targets_lower_it():
    w = LlmWorkload(rate_rps=1.0, ttft_p99_target_ms=500.0, tpot_p99_target_ms=40.0)
    rate = max_rate_at_targets(w)
    assert llm_latency(w.with_changes(rate_rps=0.97 * rate)).meets_targets, "below: met"
    tighter = max_rate_at_targets(w.with_changes(tpot_p99_target_ms=20.0))
    assert tighter < rate, f"a tighter TPOT target should lower the rate ({tighter} vs {rate})"
    assert max_rate_at_targets(w.with_changes(tpot_p99_target_ms=1.0)) == 0.0, "unmeetable"


def test_heatmap_shape_order_and_instability():
    base = LlmWorkload()
    rates = [1.0, 8.0, 400.0]
    heatmap = llm_heatmap(base, "rate_rps", rates, "prompt_tokens_mean", [200.0, 2000.0])
    assert heatmap.ttft_p99_ms.shape == (2, 3), "rows are y values, columns x values"
    row = heatmap.ttft_p99_ms[1]
    assert row[0] < row[1] and math.isinf(row[2]), f"TTFT rises with the rate, ∞ past it: {row}"
    assert not heatmap.is_stable[0, 2], "400 req/s is unstable"
    single = llm_latency(base.with_changes(rate_rps=8.0, prompt_tokens_mean=2000.0))
    assert heatmap.ttft_p99_ms[1, 1] == pytest.approx(single.ttft_p99_ms), "cell = llm_latency"


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [("rate_rps", "rate_rps", "must differ"), ("rate", "replicas", "unknown input")],
)
def test_heatmap_rejects_bad_axes(x, y, message):
    with pytest.raises(ValueError, match=message):
        llm_heatmap(LlmWorkload(), x, [1.0], y, [1.0])


def test_period_kernel_matches_the_numpy_state():
    workloads = [
        LlmWorkload(rate_rps=r, prompt_tokens_mean=p, prefix_cache_hit_share=share)
        for r, share in ((2.0, 0.0), (9.0, 0.6))
        for p in (300.0, 3000.0)
    ]
    cells = analytic._cells(workloads, DEFAULT_EFFICIENCY)
    cost, budget, _, _, rate, _, output, _, _ = cells
    work, position = analytic._prefill(cells)
    period = np.array([12.0, 15.0, 20.0, 40.0])
    numpy_state = analytic._state(cells, period)
    weights = analytic.NODE_WEIGHTS
    decodes = np.maximum(output - 1.0, 0.0)
    grouped = (work * weights).reshape(4, analytic._GROUPS, -1).sum(axis=2)
    grouped /= analytic._GROUP_WEIGHTS
    mean_work = work @ weights
    for c in range(4):
        args = (
            np.ascontiguousarray(cost[c]),
            budget[c],
            rate[c],
            (decodes @ weights)[c],
            mean_work[c],
            position[c],
            numpy_state.context[c],
            np.ascontiguousarray(grouped[c]),
            analytic._GROUP_WEIGHTS,
            analytic._MAX_PROMPTS,
            period[c],
        )
        compiled, plain = kernel.expected_iteration(*args), kernel._expected_iteration(*args)
        assert compiled == pytest.approx(plain, rel=1e-12), "compiled and plain differ"
        assert compiled == pytest.approx(numpy_state.next_period[c], rel=1e-9), (
            f"kernel {compiled} vs numpy {numpy_state.next_period[c]}"
        )
