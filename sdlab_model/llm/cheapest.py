"""The cheapest deployment that serves a workload within its targets.

For every priced GPU of the catalog, precision it supports and tensor-parallel degree the model
fits at, ``rates_at_targets`` finds the highest rate one replica serves with every p99 within
the targets; the replicas needed are the workload's rate over that, rounded up (a random router
splits a Poisson stream evenly), and the price is replicas × GPUs × the GPU-hour price. Options
come sorted by $/h; the engine knobs are the workload's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.capacity import rates_at_targets
from sdlab_model.llm.catalog import GPUS
from sdlab_model.llm.iteration import EngineEfficiency
from sdlab_model.llm.workload import INPUT_RANGES, LlmWorkload

TENSOR_PARALLEL = (1, 2, 4, 8)
PRECISIONS = ("bf16", "fp8")


@dataclass(frozen=True)
class DeploymentOption:
    """One way to serve the workload within its targets, and what it costs."""

    gpu_id: str
    precision: str
    tensor_parallel: int
    replicas: int
    rate_per_replica_rps: float
    usd_per_hour: float
    usd_per_million_output_tokens: float


def _candidates(workload: LlmWorkload) -> list[LlmWorkload]:
    candidates = []
    for gpu in GPUS:
        if gpu.usd_per_gpu_hour is None:
            continue
        for precision in PRECISIONS:
            if precision == "fp8" and gpu.peak_fp8_tflops is None:
                continue
            for tp in TENSOR_PARALLEL:
                option = workload.with_changes(
                    gpu_id=gpu.id, precision=precision, tensor_parallel=tp, replicas=1
                )
                if option.kv_capacity().fits:
                    candidates.append(option)
    return candidates


def cheapest_deployments(
    workload: LlmWorkload, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> list[DeploymentOption]:
    """Every deployment meeting ``workload``'s targets at its rate, cheapest first."""
    if workload.rate_rps <= 0:
        raise ValueError("rate_rps must be > 0 to size a deployment")
    candidates = _candidates(workload)
    rates = rates_at_targets(candidates, efficiency)
    options = []
    for candidate, rate in zip(candidates, rates, strict=True):
        if rate <= 0:
            continue
        replicas = math.ceil(workload.rate_rps / rate)
        if replicas > INPUT_RANGES["replicas"][1]:
            continue
        usd_per_hour = replicas * candidate.tensor_parallel * candidate.gpu.usd_per_gpu_hour
        output_per_hour = workload.rate_rps * workload.output_tokens_mean * 3600.0
        options.append(
            DeploymentOption(
                gpu_id=candidate.gpu_id,
                precision=candidate.precision,
                tensor_parallel=candidate.tensor_parallel,
                replicas=replicas,
                rate_per_replica_rps=float(rate),
                usd_per_hour=usd_per_hour,
                usd_per_million_output_tokens=usd_per_hour / output_per_hour * 1e6,
            )
        )
    return sorted(options, key=lambda option: option.usd_per_hour)
