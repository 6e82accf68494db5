"""Aggregated against disaggregated prefill/decode: the decode pool and the comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.llm import DEFAULT_EFFICIENCY, LlmWorkload, gpu_by_id, iteration_cost, model_by_id
from sdlab_model.llm.disaggregation import compare_disaggregation, decode_pool_tpot_p99


def test_an_idle_decode_pool_tpot_is_one_decode_step_plus_the_transfer():
    w = LlmWorkload(prompt_tokens_cv=0.0, output_tokens_cv=0.0, output_tokens_mean=101.0)
    tpot = decode_pool_tpot_p99(w, np.array([1e-6]), kv_link_gb_per_s=1e9)[0]
    cost = iteration_cost(
        model_by_id(w.model_id),
        gpu_by_id(w.gpu_id),
        precision="bf16",
        tensor_parallel=1,
        efficiency=DEFAULT_EFFICIENCY,
    )
    context = 1000.0 + 101.0 / 2.0
    assert tpot == pytest.approx(cost.iteration_ms(1.0, context, context), rel=1e-3), (
        f"idle decode pool TPOT {tpot} ms is not one decode step"
    )
    slow = decode_pool_tpot_p99(w, np.array([1e-6]), kv_link_gb_per_s=1.0)[0]
    # 1,000 tokens × 131,072 bytes over 1 GB/s is 131 ms, spread over 100 decode steps.
    assert slow - tpot == pytest.approx(1.31072, rel=1e-3), "the KV transfer per step"


def test_an_overloaded_decode_pool_is_infinite():
    tpot = decode_pool_tpot_p99(LlmWorkload(), np.array([1.0, 1e4]))
    assert math.isfinite(tpot[0]) and math.isinf(tpot[1]), f"{tpot}"


def test_long_prompts_and_a_tight_tpot_favour_disaggregation():
    w = LlmWorkload(
        prompt_tokens_mean=2000.0,
        output_tokens_mean=200.0,
        ttft_p99_target_ms=1000.0,
        tpot_p99_target_ms=15.0,
    )
    comparison = compare_disaggregation(w, 4)
    assert len(comparison.splits) == 3, "1+3, 2+2, 3+1"
    assert comparison.disaggregation_wins, (
        f"prefill interrupts decodes here: aggregated {comparison.aggregated}, "
        f"best split {comparison.best_split}"
    )


def test_bad_comparison_inputs_raise():
    with pytest.raises(ValueError, match="instances must be"):
        compare_disaggregation(LlmWorkload(), 1)
    with pytest.raises(ValueError, match="kv_link_gb_per_s"):
        compare_disaggregation(LlmWorkload(), 2, kv_link_gb_per_s=0.0)
