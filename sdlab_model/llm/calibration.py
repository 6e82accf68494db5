"""The default efficiency factors, fitted on one published measurement (and only that one).

The measurement: NVIDIA NIM for LLMs benchmarking guide, "Performance", Llama-3.3-70b-instruct,
NIM 1.8.0, 2 × H100 80G, FP8, TP2, 5000 input / 500 output tokens, concurrency 1:
TTFT 406.77 ms, ITL 18.58 ms (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance, read
2026-12-02). Llama 3.3 70B has Llama 3.1 70B's architecture, so the catalog's ``llama-3.1-70b``
stands for it.

At concurrency 1 each figure isolates one factor. The inter-token latency is a decode step of
one sequence (context 5,000 to 5,500 tokens, 5,250 on average): memory-bound, so it fixes the
bandwidth efficiency. The time to first token is one 5,000-token prefill iteration (the engine's
token budget, 8,192 by default, takes the prompt whole): compute-bound, so it fixes the compute
efficiency. The fixed costs are not fitted: 1 ms per iteration, 8 µs per all-reduce, 80% of the
link's bandwidth are assumptions (``EngineEfficiency``'s defaults) the fit is conditional on.

The published comparisons (``scripts/llm_published.py``: MLPerf Inference v4.1 Llama-2-70B on
8 × H100, kipply's 13B decode on A100) use these factors unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdlab_model.llm.catalog import gpu_by_id, model_by_id
from sdlab_model.llm.iteration import EngineEfficiency, iteration_cost


@dataclass(frozen=True)
class DecodeAndPrefillMeasurement:
    """A concurrency-1 measurement: one prompt's time to first token and its inter-token time."""

    name: str
    source: str
    model_id: str
    gpu_id: str
    precision: str
    tensor_parallel: int
    prompt_tokens: int
    output_tokens: int
    ttft_ms: float
    itl_ms: float


FIT_MEASUREMENT = DecodeAndPrefillMeasurement(
    name="NIM 1.8.0, Llama-3.3-70B, 2×H100 FP8 TP2, 5000 in / 500 out, concurrency 1",
    source=(
        "NVIDIA NIM for LLMs benchmarking guide, 'Performance' "
        "(docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance), read 2026-12-02"
    ),
    model_id="llama-3.1-70b",
    gpu_id="h100-sxm-80gb",
    precision="fp8",
    tensor_parallel=2,
    prompt_tokens=5000,
    output_tokens=500,
    ttft_ms=406.77,
    itl_ms=18.58,
)


def fit_efficiency(
    measurement: DecodeAndPrefillMeasurement = FIT_MEASUREMENT,
    fixed: EngineEfficiency | None = None,
) -> EngineEfficiency:
    """Compute and bandwidth efficiency that reproduce ``measurement`` exactly.

    With the roofline at full efficiency (``ideal``), the decode step is
    ``fixed costs + ideal memory / bandwidth efficiency`` and the prefill
    ``fixed costs + ideal compute / compute efficiency``; each is solved for its factor. The
    other factors come from ``fixed`` (``EngineEfficiency``'s defaults when None).
    """
    fixed = fixed or EngineEfficiency(compute_efficiency=1.0, bandwidth_efficiency=1.0)
    ideal = iteration_cost(
        model_by_id(measurement.model_id),
        gpu_by_id(measurement.gpu_id),
        precision=measurement.precision,
        tensor_parallel=measurement.tensor_parallel,
        efficiency=EngineEfficiency(
            compute_efficiency=1.0,
            bandwidth_efficiency=1.0,
            interconnect_efficiency=fixed.interconnect_efficiency,
            allreduce_latency_us=fixed.allreduce_latency_us,
            iteration_overhead_ms=fixed.iteration_overhead_ms,
        ),
    )
    prompt = measurement.prompt_tokens
    context = prompt + measurement.output_tokens / 2.0
    decode_fixed = ideal.overhead_ms + ideal.allreduce_fixed_ms + ideal.allreduce_ms_per_token
    decode_memory = ideal.weights_read_ms + ideal.kv_ms_per_token * context
    prefill_fixed = ideal.overhead_ms + ideal.allreduce_fixed_ms
    prefill_fixed += ideal.allreduce_ms_per_token * prompt + fixed.request_overhead_ms
    prefill_compute = ideal.compute_ms_per_token * prompt
    prefill_compute += ideal.compute_ms_per_pair * prompt * (prompt + 1) / 2.0
    return EngineEfficiency(
        compute_efficiency=prefill_compute / (measurement.ttft_ms - prefill_fixed),
        bandwidth_efficiency=decode_memory / (measurement.itl_ms - decode_fixed),
        interconnect_efficiency=fixed.interconnect_efficiency,
        allreduce_latency_us=fixed.allreduce_latency_us,
        iteration_overhead_ms=fixed.iteration_overhead_ms,
        request_overhead_ms=fixed.request_overhead_ms,
    )


DEFAULT_EFFICIENCY = fit_efficiency()
"""The factors every estimate uses unless given others: ``fit_efficiency()`` of the NIM point."""
