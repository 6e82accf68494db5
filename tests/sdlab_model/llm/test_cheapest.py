"""The cheapest deployment search: what it returns meets the targets, cheapest first."""

from __future__ import annotations

import pytest

from sdlab_model.llm import LlmWorkload, llm_latency
from sdlab_model.llm.cheapest import cheapest_deployments


def test_the_cheapest_option_meets_every_target_at_the_rate():
    w = LlmWorkload(rate_rps=30.0, ttft_p99_target_ms=1000.0, tpot_p99_target_ms=30.0)
    options = cheapest_deployments(w)
    assert options, "an 8B model at 30 req/s is servable"
    prices = [option.usd_per_hour for option in options]
    assert prices == sorted(prices), "cheapest first"
    best = options[0]
    deployed = w.with_changes(
        gpu_id=best.gpu_id,
        precision=best.precision,
        tensor_parallel=best.tensor_parallel,
        replicas=best.replicas,
    )
    estimate = llm_latency(deployed)
    assert estimate.meets_targets, f"{best} misses a target: {estimate.ttft_ms}, {estimate.tpot_ms}"
    assert estimate.usd_per_hour == pytest.approx(best.usd_per_hour), "the same price"
    assert all(option.gpu_id != "h200-sxm-141gb" for option in options), "unpriced GPUs are out"


def test_a_zero_rate_cannot_be_sized():
    with pytest.raises(ValueError, match="rate_rps must be > 0"):
        cheapest_deployments(LlmWorkload(rate_rps=0.0))
