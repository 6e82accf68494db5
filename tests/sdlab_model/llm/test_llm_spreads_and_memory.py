"""The length spreads and the engine's memory knobs reach both the analytic model and the
token-level simulator, which agree where the model says it is accurate; where the checks found
it off (wide prompt spreads, a KV cache that preempts) it says approximate, and is off there."""

from __future__ import annotations

import pytest

from sdlab_model.llm import LlmWorkload, llm_latency, simulate_llm
from sdlab_model.llm.analytic import (
    APPROXIMATE_KV_SLOT_LOAD,
    APPROXIMATE_OUTPUT_CV,
    APPROXIMATE_PROMPT_CV,
)

SPREADS = LlmWorkload(rate_rps=6.0, prompt_tokens_cv=0.2, output_tokens_cv=1.0)
SMALL_CACHE = LlmWorkload(
    model_id="llama-3.1-70b",
    tensor_parallel=4,
    rate_rps=2.0,
    gpu_memory_utilization=0.55,
    kv_block_tokens=32,
    activation_reserve_gb=6.0,
)
"""A 70B model with a cache a third of what vLLM's defaults leave: the KV cache sets the slots."""


def _p99s(workload: LlmWorkload) -> tuple[tuple[float, float], tuple[float, float]]:
    estimate = llm_latency(workload)
    result = simulate_llm(workload, requests=4000, max_requests=4000, seed=1)
    return (estimate.ttft_p99_ms, estimate.tpot_p99_ms), (result.ttft.p99_ms, result.tpot.p99_ms)


@pytest.mark.parametrize("workload", [SPREADS, SMALL_CACHE], ids=["spreads", "small-cache"])
def test_non_default_inputs_agree_with_the_simulator_and_are_not_flagged(workload):
    estimate = llm_latency(workload)
    assert not estimate.approximate, "the point is meant to be inside the model's accuracy"
    analytic, simulated = _p99s(workload)
    for name, a, s in zip(("TTFT", "TPOT"), analytic, simulated, strict=True):
        assert abs(a / s - 1.0) <= 0.15, f"{name} p99: analytic {a:.1f} ms, simulated {s:.1f} ms"


@pytest.mark.parametrize(
    "field, value",
    [
        ("prompt_tokens_cv", 1.5),
        ("output_tokens_cv", 2.0),
        ("gpu_memory_utilization", 0.54),
        ("kv_block_tokens", 256),
        ("activation_reserve_gb", 7.0),
    ],
)
def test_each_input_changes_both_the_model_and_the_simulation(field, value):
    base = SMALL_CACHE.with_changes(rate_rps=2.5)  # busy: the cache decides admissions
    changed = base.with_changes(**{field: value})
    model = [llm_latency(w) for w in (base, changed)]
    simulated = [simulate_llm(w, requests=1000, max_requests=1000, seed=1) for w in (base, changed)]
    assert (model[0].ttft_ms, model[0].tpot_ms, model[0].kv_tokens) != (
        model[1].ttft_ms,
        model[1].tpot_ms,
        model[1].kv_tokens,
    ), f"{field}={value} did not reach the analytic model"
    assert (simulated[0].ttft, simulated[0].tpot) != (simulated[1].ttft, simulated[1].tpot), (
        f"{field}={value} did not reach the simulator"
    )


def test_less_memory_for_the_cache_holds_fewer_tokens():
    tokens = [
        llm_latency(SMALL_CACHE.with_changes(**change)).kv_tokens
        for change in ({}, {"gpu_memory_utilization": 0.54}, {"activation_reserve_gb": 7.0})
    ]
    assert tokens[1] < tokens[0] and tokens[2] < tokens[0], f"KV tokens {tokens}"
    blocks = llm_latency(SMALL_CACHE.with_changes(kv_block_tokens=256)).kv_tokens
    assert blocks % 256 == 0 and blocks <= tokens[0] + 256, "whole blocks of 256 tokens"


def test_a_wide_prompt_spread_is_flagged_where_the_model_falls_short():
    wide = LlmWorkload(prompt_tokens_mean=3000.0, rate_rps=2.0, prompt_tokens_cv=0.8)
    assert wide.prompt_tokens_cv > APPROXIMATE_PROMPT_CV
    estimate = llm_latency(wide)
    assert estimate.approximate, "a spread wider than the checks covered is not flagged"
    analytic, simulated = _p99s(wide)
    assert analytic[1] < 0.85 * simulated[1], "the flag's reason is gone: review the threshold"
    assert not llm_latency(wide.with_changes(prompt_tokens_cv=APPROXIMATE_PROMPT_CV)).approximate
    long_tail = llm_latency(LlmWorkload(output_tokens_cv=APPROXIMATE_OUTPUT_CV + 0.5))
    assert long_tail.approximate, "an output spread no grid checked is not flagged"
    for flagged in (estimate, long_tail):
        assert flagged.approximate_because == "the lengths spread wider than the checks covered"


def test_a_kv_cache_that_preempts_is_flagged_where_the_model_falls_short():
    busy = SMALL_CACHE.with_changes(rate_rps=3.0)
    estimate = llm_latency(busy)
    assert estimate.binding == "KV memory" and estimate.slot_load > APPROXIMATE_KV_SLOT_LOAD
    assert estimate.approximate, "a preempting cache is not flagged"
    assert "preempt" in estimate.approximate_because, estimate.approximate_because
    analytic, simulated = _p99s(busy)
    assert analytic[0] < 0.85 * simulated[0], "the flag's reason is gone: review the threshold"


def test_the_flag_says_why_and_is_silent_when_not_raised():
    assert llm_latency(LlmWorkload()).approximate_because == "", "a reason without a flag"
    busy = llm_latency(LlmWorkload(rate_rps=16.0))
    assert busy.approximate and "near the rate" in busy.approximate_because, busy
    short = llm_latency(LlmWorkload(output_tokens_mean=2.0, output_tokens_cv=0.0))
    assert "a few tokens" in short.approximate_because, short.approximate_because
