"""The token-level simulator against hand-worked cases, its plain-Python twin, and its summary."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model.llm import IterationCost, LlmWorkload, simulate_llm
from sdlab_model.llm import _engine_kernel as kernel

COST = IterationCost(
    compute_ms_per_token=0.01,
    compute_ms_per_pair=0.0,
    weights_read_ms=2.0,
    kv_ms_per_token=0.001,
    allreduce_fixed_ms=0.0,
    allreduce_ms_per_token=0.0,
    overhead_ms=0.5,
)


def _serve(
    arrivals,
    prompts,
    outputs,
    *,
    running=8,
    budget=8192,
    blocks=1000,
    block=16,
    twin=False,
    cached=None,
):
    count = len(arrivals)
    first = np.full(count, -1.0)
    finish = np.full(count, -1.0)
    preempted = np.zeros(count, dtype=np.int64)
    function = kernel._serve if twin else kernel.serve
    counters = function(
        np.array(arrivals, dtype=float),
        np.array(prompts, dtype=np.int64),
        np.array(outputs, dtype=np.int64),
        np.zeros(count, dtype=np.int64) if cached is None else np.array(cached, dtype=np.int64),
        running,
        budget,
        blocks,
        block,
        np.array(COST.as_tuple()),
        first,
        finish,
        preempted,
    )
    return first, finish, preempted, counters


def test_one_request_ttft_is_its_prefill_and_it_decodes_output_minus_one_steps():
    first, finish, _, counters = _serve([10.0], [100], [5])
    prefill = COST.iteration_ms(100, 100 * 101 / 2, 100)
    assert first[0] == pytest.approx(10.0 + prefill), f"TTFT {first[0] - 10} != prefill {prefill}"
    decodes = sum(COST.iteration_ms(1, 100 + k, 100 + k) for k in range(1, 5))
    assert finish[0] == pytest.approx(first[0] + decodes), "4 decode steps after the first token"
    assert counters[0] == 5, f"1 prefill + 4 decode iterations, got {counters[0]}"


def test_chunked_prefill_splits_a_prompt_over_the_token_budget():
    first, _, _, counters = _serve([0.0], [100], [1], budget=40)
    chunks = [
        COST.iteration_ms(40, 40 * 41 / 2, 40),
        COST.iteration_ms(40, 40 * 40 + 40 * 41 / 2, 80),
        COST.iteration_ms(20, 20 * 80 + 20 * 21 / 2, 100),
    ]
    assert counters[0] == 3, f"100 tokens in chunks of 40: 3 iterations, got {counters[0]}"
    assert first[0] == pytest.approx(sum(chunks)), "first token after the last chunk"


def test_max_running_one_serves_requests_one_after_another():
    first, finish, _, _ = _serve([0.0, 0.0], [50, 50], [3, 3], running=1)
    assert first[1] > finish[0], "the second request starts only after the first leaves"
    _, alone_finish, _, _ = _serve([0.0], [50], [3])
    assert finish[0] == pytest.approx(alone_finish[0]), "the first is served as if alone"


def test_a_full_cache_preempts_the_latest_request_and_it_recomputes():
    # 6 blocks of 16 tokens: two 40-token prompts take 3 blocks each; the first decode that
    # needs a 4th block preempts the second request.
    _, finish, preempted, counters = _serve([0.0, 0.0], [40, 40], [20, 20], blocks=6)
    assert counters[1] >= 1 and preempted[1] >= 1, "the later request is preempted"
    assert preempted[0] == 0, "the earlier request is never the victim"
    assert np.all(finish > 0), "both finish despite the preemption"
    assert finish[1] > finish[0], "the recomputed request finishes later"


def test_a_cached_prefix_is_not_computed_but_is_attended_to_and_held():
    first, finish, _, counters = _serve([10.0], [100], [3], cached=[60], block=16)
    prefill = COST.iteration_ms(40, 40 * 60 + 40 * 41 / 2, 100)
    assert first[0] == pytest.approx(10.0 + prefill), "40 tokens computed over a 60-token prefix"
    decodes = sum(COST.iteration_ms(1, 100 + k, 100 + k) for k in range(1, 3))
    assert finish[0] == pytest.approx(first[0] + decodes), "decodes read the whole context"
    assert counters[0] == 3, f"1 prefill + 2 decode iterations, got {counters[0]}"
    # Seven 16-token blocks hold the 100 prompt tokens, the cached 60 included; six do not.
    _, _, _, enough = _serve([0.0], [100], [1], cached=[60], blocks=7)
    _, _, _, short = _serve([0.0], [100], [1], cached=[60], blocks=6)
    assert enough[3] == 0 and short[3] == 1, "the cached prefix took no blocks"


def test_the_compiled_kernel_matches_its_python_twin():
    rng = np.random.default_rng(7)
    arrivals = np.cumsum(rng.exponential(20.0, 200))
    prompts = rng.integers(1, 300, 200)
    outputs = rng.integers(1, 60, 200)
    cached = prompts * rng.uniform(0.0, 0.9, 200) // 1
    kw = {"running": 16, "budget": 256, "blocks": 120, "cached": cached}
    compiled = _serve(arrivals, prompts, outputs, **kw)
    plain = _serve(arrivals, prompts, outputs, twin=True, **kw)
    for a, b, name in zip(
        compiled, plain, ("first", "finish", "preempted", "counters"), strict=True
    ):
        assert np.array_equal(a, b), f"compiled and plain {name} differ"


def test_an_overloaded_engine_is_reported_unstable():
    workload = LlmWorkload(rate_rps=400.0)
    result = simulate_llm(workload, requests=2000, max_requests=2000)
    assert not result.is_stable, "400 req/s of 1,000-token prompts on one H100 cannot be served"
    assert math.isinf(result.ttft.p99_ms), "unstable is infinite"


def test_summary_is_seeded_and_says_when_not_converged():
    workload = LlmWorkload(rate_rps=2.0)
    a = simulate_llm(workload, seed=3, requests=400, max_requests=400, rel_half_width=0.001)
    b = simulate_llm(workload, seed=3, requests=400, max_requests=400, rel_half_width=0.001)
    assert a.ttft == b.ttft, "same seed, same result"
    assert not a.converged and "not converged" in a.note, "a 0.1% interval is out of reach"
    assert a.ttft.p99_low_ms <= a.ttft.p99_ms <= a.ttft.p99_high_ms, "interval holds the p99"


def test_bad_run_sizes_raise():
    with pytest.raises(ValueError, match="requests must be"):
        simulate_llm(LlmWorkload(), requests=10)
    with pytest.raises(ValueError, match="max_requests"):
        simulate_llm(LlmWorkload(), requests=1000, max_requests=500)
