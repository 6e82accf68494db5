"""Input validation, the roofline's coefficients and the efficiency fit."""

from __future__ import annotations

import pytest

from sdlab_model.llm import (
    DEFAULT_EFFICIENCY,
    FIT_MEASUREMENT,
    EngineEfficiency,
    LlmWorkload,
    gpu_by_id,
    iteration_cost,
    model_by_id,
)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rate_rps": -1.0}, "rate_rps must be a finite number in"),
        ({"rate_rps": float("nan")}, "rate_rps"),
        ({"tensor_parallel": 0}, "tensor_parallel must be a whole number in"),
        ({"tensor_parallel": 2.0}, "tensor_parallel must be a whole number"),
        ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
        ({"precision": "int4"}, "precision must be one of"),
        ({"gpu_id": "a100-80gb", "precision": "fp8"}, "no FP8"),
        ({"model_id": "nope"}, "unknown model"),
        ({"prompt_tokens_mean": 120_000.0, "output_tokens_mean": 30_000.0}, "context"),
    ],
)
def test_bad_inputs_raise_a_clear_value_error(changes, message):
    with pytest.raises(ValueError, match=message):
        LlmWorkload(**changes)


def test_bad_efficiency_raises():
    with pytest.raises(ValueError, match="compute_efficiency must be in"):
        EngineEfficiency(compute_efficiency=0.0, bandwidth_efficiency=0.5)
    with pytest.raises(ValueError, match="iteration_overhead_ms"):
        EngineEfficiency(0.5, 0.5, iteration_overhead_ms=-1.0)


def test_decode_of_one_sequence_is_the_weights_over_bandwidth():
    ideal = EngineEfficiency(1.0, 1.0, iteration_overhead_ms=0.0)
    cost = iteration_cost(
        model_by_id("llama-2-13b"),
        gpu_by_id("a100-40gb"),
        precision="bf16",
        tensor_parallel=1,
        efficiency=ideal,
    )
    # 13.0e9 × 2 bytes / 1555 GB/s = 16.72 ms, plus 100 tokens of KV at 819,200 bytes each.
    expected = (26.0e9 + 100 * 819_200) / 1555e9 * 1000.0
    got = cost.iteration_ms(1, 100, 100)
    assert got == pytest.approx(expected, rel=1e-9), f"decode step {got} ms, by hand {expected}"
    assert cost.iteration_ms(0, 0, 0) == 0.0, "an empty iteration costs nothing"


def test_prefill_is_compute_bound_and_tensor_parallel_adds_allreduces():
    model, gpu = model_by_id("llama-3.1-70b"), gpu_by_id("h100-sxm-80gb")
    one = iteration_cost(
        model, gpu, precision="bf16", tensor_parallel=1, efficiency=DEFAULT_EFFICIENCY
    )
    eight = iteration_cost(
        model, gpu, precision="bf16", tensor_parallel=8, efficiency=DEFAULT_EFFICIENCY
    )
    assert one.allreduce_fixed_ms == 0.0 and eight.allreduce_fixed_ms > 0.0, (
        "all-reduce only with TP"
    )
    prefill = 4096 * one.compute_ms_per_token
    assert prefill > one.weights_read_ms, "a 4,096-token prefill is compute-bound"
    eight_ms = eight.iteration_ms(4096, 4096 * 2048, 4096)
    one_ms = one.iteration_ms(4096, 4096 * 2048, 4096)
    assert eight_ms < one_ms / 4, f"8-way TP prefill {eight_ms:.1f} ms vs 1 GPU {one_ms:.1f} ms"


def test_the_default_factors_reproduce_their_measurement():
    cost = iteration_cost(
        model_by_id(FIT_MEASUREMENT.model_id),
        gpu_by_id(FIT_MEASUREMENT.gpu_id),
        precision=FIT_MEASUREMENT.precision,
        tensor_parallel=FIT_MEASUREMENT.tensor_parallel,
        efficiency=DEFAULT_EFFICIENCY,
    )
    prompt, context = 5000, 5250
    ttft = cost.iteration_ms(prompt, prompt * (prompt + 1) / 2, prompt)
    itl = cost.iteration_ms(1, context, context)
    assert ttft == pytest.approx(FIT_MEASUREMENT.ttft_ms, rel=1e-6), f"fitted TTFT {ttft}"
    assert itl == pytest.approx(FIT_MEASUREMENT.itl_ms, rel=1e-6), f"fitted ITL {itl}"
    assert 0.3 < DEFAULT_EFFICIENCY.compute_efficiency < 0.8, "a plausible MFU"
    assert 0.5 < DEFAULT_EFFICIENCY.bandwidth_efficiency < 0.95, "a plausible MBU"
