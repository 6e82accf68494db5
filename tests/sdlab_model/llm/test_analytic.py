"""The analytic model: limits, monotonicity, unstable is infinite, and agreement with the
token-level simulator on a few points (within 15% or flagged approximate)."""

from __future__ import annotations

import math

import pytest

from sdlab_model.llm import LlmWorkload, llm_estimates, llm_latency, simulate_llm


def test_an_idle_engine_ttft_is_one_prefill_and_tpot_one_decode_step():
    estimate = llm_latency(LlmWorkload(rate_rps=0.01, prompt_tokens_cv=0.0, output_tokens_cv=0.0))
    result = simulate_llm(
        LlmWorkload(rate_rps=0.01, prompt_tokens_cv=0.0, output_tokens_cv=0.0),
        requests=200,
        max_requests=200,
    )
    assert estimate.ttft_ms[0] == pytest.approx(result.ttft.p50_ms, rel=0.02), "idle TTFT"
    assert estimate.tpot_ms[0] == pytest.approx(result.tpot.p50_ms, rel=0.02), "idle TPOT"


@pytest.mark.parametrize("field", ["ttft_p99_ms", "tpot_p99_ms", "e2e_p99_ms"])
def test_more_traffic_never_lowers_a_p99(field):
    rates = [0.5, 2.0, 6.0, 12.0, 18.0]
    values = [getattr(e, field) for e in llm_estimates([LlmWorkload(rate_rps=r) for r in rates])]
    for low, high, a, b in zip(rates, rates[1:], values, values[1:], strict=False):
        assert b >= a * 0.999, f"{field} fell from {a:.1f} at {low} req/s to {b:.1f} at {high}"


def test_more_gpus_and_replicas_serve_more():
    one = llm_latency(LlmWorkload(model_id="llama-3.1-70b", tensor_parallel=4, rate_rps=8.0))
    two = llm_latency(
        LlmWorkload(model_id="llama-3.1-70b", tensor_parallel=4, replicas=2, rate_rps=8.0)
    )
    assert two.ttft_p99_ms < one.ttft_p99_ms, "two replicas halve each one's load"
    assert two.usd_per_hour == pytest.approx(2 * one.usd_per_hour), "and cost twice as much"


def test_overload_is_infinite_and_not_stable():
    estimate = llm_latency(LlmWorkload(rate_rps=400.0))
    assert not estimate.is_stable, "400 req/s of 1,000-token prompts on one H100"
    assert math.isinf(estimate.ttft_p99_ms) and math.isinf(estimate.tpot_p99_ms), "∞ when unstable"
    assert estimate.goodput_rps == 0.0, "nothing meets a target when unstable"
    assert estimate.usd_per_million_output_tokens is None, "no price per token without throughput"


def test_a_model_that_does_not_fit_is_unstable():
    estimate = llm_latency(LlmWorkload(model_id="llama-3.1-70b", gpu_id="l4", rate_rps=0.1))
    assert not estimate.is_stable and estimate.kv_tokens == 0, "70B on one 24 GB L4"


def test_ttfts_parts_are_a_wait_that_grows_with_traffic_and_the_own_prefill():
    idle = llm_latency(LlmWorkload(rate_rps=0.01, prompt_tokens_cv=0.0, output_tokens_cv=0.0))
    assert idle.mean_wait_ms < 0.01 * idle.ttft_ms[0], "an idle engine makes nobody wait"
    assert idle.mean_prefill_ms == pytest.approx(idle.ttft_ms[0], rel=0.02), "idle TTFT"
    rates = [0.5, 4.0, 12.0, 18.0]
    estimates = llm_estimates([LlmWorkload(rate_rps=r) for r in rates])
    waits = [e.mean_wait_ms for e in estimates]
    assert waits == sorted(waits) and waits[-1] > 5 * waits[0], f"waits {waits}"
    for e in estimates:
        assert 0 < e.mean_wait_ms + e.mean_prefill_ms < e.ttft_p99_ms, "parts of a mean TTFT"
    overloaded = llm_latency(LlmWorkload(rate_rps=400.0))
    assert math.isinf(overloaded.mean_wait_ms) and math.isinf(overloaded.mean_prefill_ms)


def test_the_kv_tokens_in_use_fit_in_the_cache_and_grow_with_traffic():
    rates = [0.5, 4.0, 12.0]
    in_use = [e.kv_tokens_in_use for e in llm_estimates([LlmWorkload(rate_rps=r) for r in rates])]
    assert in_use == sorted(in_use) and in_use[-1] > 10 * in_use[0], f"in use {in_use}"
    # Where the cache binds, the slots are the cache's: nearly full slots, nearly full cache.
    full = llm_latency(
        LlmWorkload(
            gpu_id="l4", rate_rps=0.035, prompt_tokens_mean=2000.0, output_tokens_mean=2000.0
        )
    )
    assert full.binding == "KV memory" and full.is_stable, full.binding
    assert 0.5 * full.kv_tokens < full.kv_tokens_in_use < full.kv_tokens, full.kv_tokens_in_use
    assert full.kv_tokens_in_use / full.kv_tokens == pytest.approx(full.slot_load, rel=0.15)
    assert math.isinf(llm_latency(LlmWorkload(rate_rps=400.0)).kv_tokens_in_use), "∞ when unstable"


def test_throughput_goodput_and_price_add_up():
    w = LlmWorkload(rate_rps=4.0)
    estimate = llm_latency(w)
    assert estimate.output_tokens_per_s == pytest.approx(4.0 * 250.0), "rate × mean output"
    assert estimate.goodput_rps <= 4.0, "goodput is at most the rate"
    per_million = estimate.usd_per_hour / (1000.0 * 3600.0) * 1e6
    assert estimate.usd_per_million_output_tokens == pytest.approx(per_million), "$ / 1M tokens"


@pytest.mark.parametrize(
    "workload",
    [
        LlmWorkload(rate_rps=8.0),
        LlmWorkload(model_id="llama-3.1-70b", tensor_parallel=4, rate_rps=4.0),
        LlmWorkload(
            model_id="mistral-7b", gpu_id="a100-80gb", rate_rps=3.0, output_tokens_mean=100
        ),
    ],
    ids=["8b-h100", "70b-tp4", "mistral-a100"],
)
def test_analytic_p99s_agree_with_the_simulator_or_are_flagged(workload):
    estimate = llm_latency(workload)
    result = simulate_llm(workload, requests=4000, max_requests=4000, seed=1)
    for name, analytic, simulated in (
        ("TTFT", estimate.ttft_p99_ms, result.ttft.p99_ms),
        ("TPOT", estimate.tpot_p99_ms, result.tpot.p99_ms),
    ):
        error = abs(analytic / simulated - 1.0)
        assert estimate.approximate or error <= 0.15, (
            f"{name} p99: analytic {analytic:.1f} ms, simulated {simulated:.1f} ms "
            f"({error:.0%} off) and not flagged approximate"
        )
