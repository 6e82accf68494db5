"""The prefix-cache hit share: prefill work is (1 − share) × prompt tokens while the KV cache
holds them all, in the analytic model and in the token-level simulator alike."""

from __future__ import annotations

from itertools import pairwise

import pytest

from sdlab_model.llm import LlmWorkload, llm_estimates, llm_latency, simulate_llm

SHARES = (0.0, 0.25, 0.5, 0.75, 0.9)


@pytest.mark.parametrize("prompt", [1000.0, 4000.0])
def test_ttft_falls_as_the_share_rises(prompt):
    base = LlmWorkload(prompt_tokens_mean=prompt, rate_rps=2.0)
    estimates = llm_estimates([base.with_changes(prefix_cache_hit_share=s) for s in SHARES])
    ttfts = [e.ttft_p99_ms for e in estimates]
    assert all(b < a for a, b in pairwise(ttfts)), f"TTFT p99s {ttfts}"
    simulated = [
        simulate_llm(base.with_changes(prefix_cache_hit_share=s), seed=1).ttft.p99_ms
        for s in (0.0, 0.75)
    ]
    assert simulated[1] < 0.5 * simulated[0], f"simulated TTFT p99s {simulated}"


@pytest.mark.parametrize("share", [0.5, 0.8])
def test_analytic_and_simulated_p99s_agree_with_a_prefix_cache(share):
    workload = LlmWorkload(rate_rps=6.0, prefix_cache_hit_share=share)
    estimate = llm_latency(workload)
    assert not estimate.approximate, "the point is meant to be inside the model's accuracy"
    result = simulate_llm(workload, requests=4000, max_requests=4000, seed=1)
    for name, analytic, simulated in (
        ("TTFT", estimate.ttft_p99_ms, result.ttft.p99_ms),
        ("TPOT", estimate.tpot_p99_ms, result.tpot.p99_ms),
    ):
        error = abs(analytic / simulated - 1.0)
        assert error <= 0.15, f"{name} p99 at share {share}: {analytic:.1f} against {simulated:.1f}"


def test_cached_tokens_still_take_kv_cache():
    small = LlmWorkload(
        model_id="llama-3.1-70b",
        tensor_parallel=4,
        rate_rps=1.0,
        gpu_memory_utilization=0.55,
        activation_reserve_gb=6.0,
    )
    plain, cached = llm_estimates([small, small.with_changes(prefix_cache_hit_share=0.8)])
    assert plain.binding != "running-sequence cap" and plain.slots < 256, "the cache sets slots"
    assert cached.slots == plain.slots, "a hit frees no KV: as many sequences fit"
    assert cached.kv_tokens == plain.kv_tokens, "nor does it change the cache"
    assert cached.mean_prefill_ms < 0.5 * plain.mean_prefill_ms, "but it skips the prefill"


def test_a_share_out_of_range_is_refused_with_its_name():
    with pytest.raises(ValueError, match="prefix_cache_hit_share"):
        LlmWorkload(prefix_cache_hit_share=1.0)
