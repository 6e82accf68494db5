"""Aggregated against disaggregated serving: one pool doing both phases, or a prefill pool and a
decode pool with the KV cache sent between them (DistServe, Zhong et al., OSDI 2024; Splitwise,
Patel et al., ISCA 2024).

Each instance is ``tensor_parallel`` GPUs of the base workload's GPU; the deployment has
``instances`` of them, aggregated (every one a full engine, ``llm_grid``) or split into
``prefill`` + ``decode`` instances. The router spreads requests evenly (random).

- Prefill instances run the engine of ``analytic`` with one output token per request: their
  TTFT is the deployment's (the first token comes from the prefill instance).
- The KV cache of a prompt, P × KV bytes per token (its prefix-cache hits included: the decode
  instance is not assumed to hold them), then crosses ``kv_link_gb_per_s`` (default
  50 GB/s: one 400 Gb/s InfiniBand NDR port, as between machines in Splitwise; within an
  NVLink node it is faster); the decode instance starts when it has arrived.
- Decode instances only decode: N sequences each, iteration t_d(N + 1), N = λ_d E[O − 1] t_d
  (Little: a mean, blind to bursty arrivals). With no prefill chunks in the way, a request's
  TPOT is t_d plus its KV transfer spread over its O − 1 steps; the p99 is over the
  output-length distribution. Stable while N fits the KV cache and the running-sequence cap.

Goodput per GPU is the highest rate meeting the TTFT and TPOT p99 targets, over the GPUs used.
The comparison is analytic only (no disaggregated simulator): treat it as the model's
judgement, strongest when the two phases interfere (long prompts, tight TPOT targets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdlab_model.llm.analytic import llm_grid
from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.capacity import max_rate_at_targets, search_rate
from sdlab_model.llm.iteration import EngineEfficiency
from sdlab_model.llm.lengths import NODE_WEIGHTS
from sdlab_model.llm.workload import LlmWorkload

DEFAULT_KV_LINK_GB_PER_S = 50.0
_BISECTIONS = 50


@dataclass(frozen=True)
class SplitGoodput:
    """One deployment's best rate at the targets and its goodput per GPU."""

    prefill_instances: int
    decode_instances: int
    max_rate_rps: float
    goodput_rps_per_gpu: float


@dataclass(frozen=True)
class DisaggregationComparison:
    """Aggregated against every prefill/decode split of the same instances."""

    aggregated: SplitGoodput
    splits: tuple[SplitGoodput, ...]

    @property
    def best_split(self) -> SplitGoodput:
        return max(self.splits, key=lambda split: split.max_rate_rps)

    @property
    def disaggregation_wins(self) -> bool:
        """Whether the best split serves more goodput per GPU than aggregated serving."""
        return self.best_split.goodput_rps_per_gpu > self.aggregated.goodput_rps_per_gpu


def decode_pool_tpot_p99(
    workload: LlmWorkload,
    rates_per_instance: np.ndarray,
    efficiency: EngineEfficiency = DEFAULT_EFFICIENCY,
    kv_link_gb_per_s: float = DEFAULT_KV_LINK_GB_PER_S,
) -> np.ndarray:
    """TPOT p99 (ms) of a decode-only instance at each rate; ∞ where it cannot keep up."""
    model = workload.model
    cost = workload.iteration_cost(efficiency)
    capacity = workload.kv_capacity()
    cap = max(2, min(model.max_context_tokens, capacity.tokens))
    prompt = workload.length_nodes("prompt", cap - 1)
    output = workload.length_nodes("output", cap)
    decodes = np.maximum(output - 1.0, 0.0)
    mean_decodes = decodes @ NODE_WEIGHTS
    context = prompt @ NODE_WEIGHTS + (decodes * output / 2.0) @ NODE_WEIGHTS / max(
        mean_decodes, 1e-9
    )
    limit = min(workload.max_running_sequences, capacity.tokens / context) - 1.0
    transfer_ms = (prompt @ NODE_WEIGHTS) * capacity.bytes_per_token / (kv_link_gb_per_s * 1e6)
    several = output >= 1.5
    tpot = np.full(len(rates_per_instance), np.inf)
    for index, rate in enumerate(rates_per_instance):
        per_ms = rate / 1000.0

        def excess(n, per_ms=per_ms):
            seen = n + 1.0
            return n - per_ms * mean_decodes * cost.iteration_ms(
                seen, seen * context, seen * context
            )

        if limit <= 0 or excess(limit) < 0:
            continue
        low, high = 0.0, limit
        for _ in range(_BISECTIONS):
            middle = (low + high) / 2.0
            low, high = (low, middle) if excess(middle) >= 0 else (middle, high)
        seen = high + 1.0
        step = cost.iteration_ms(seen, seen * context, seen * context)
        per_node = step + transfer_ms / np.maximum(decodes, 1.0)
        order = np.argsort(per_node)
        weights = (NODE_WEIGHTS * several)[order]
        cumulative = np.cumsum(weights) / weights.sum()
        tpot[index] = per_node[order][np.searchsorted(cumulative, 0.99)]
    return tpot


def compare_disaggregation(
    workload: LlmWorkload,
    instances: int,
    efficiency: EngineEfficiency = DEFAULT_EFFICIENCY,
    kv_link_gb_per_s: float = DEFAULT_KV_LINK_GB_PER_S,
) -> DisaggregationComparison:
    """Goodput per GPU at ``workload``'s TTFT and TPOT targets: ``instances`` aggregated
    engines against every split into prefill and decode instances."""
    if not isinstance(instances, int) or not 2 <= instances <= 64:
        raise ValueError(f"instances must be a whole number in [2, 64], got {instances!r}")
    if kv_link_gb_per_s <= 0:
        raise ValueError(f"kv_link_gb_per_s must be > 0, got {kv_link_gb_per_s!r}")
    gpus = instances * workload.tensor_parallel
    unbounded = workload.with_changes(replicas=instances, e2e_p99_target_ms=3_600_000.0)
    aggregated_rate = max_rate_at_targets(unbounded, efficiency)
    aggregated = SplitGoodput(0, 0, aggregated_rate, aggregated_rate / gpus)
    sample = workload.length_sample  # measured prompts stay measured in the prefill pool
    prefill_only = workload.with_changes(
        replicas=1,
        output_tokens_mean=1.0,
        output_tokens_cv=0.0,
        e2e_p99_target_ms=3_600_000.0,
        length_sample=None if sample is None else sample.with_outputs(1),
    )
    splits = []
    for prefill in range(1, instances):
        decode = instances - prefill
        # One prefill instance sees 1/prefill of the Gamma stream: its gaps' cv, as one replica.
        spread = workload.with_changes(replicas=prefill).arrival_scv_per_replica ** 0.5
        pool = prefill_only.with_changes(arrival_cv=spread)

        def passes_at(rates, prefill=prefill, decode=decode, pool=pool):
            grid = llm_grid(
                [pool.with_changes(rate_rps=float(r / prefill)) for r in rates],
                efficiency,
                quantiles=(0.99,),
                with_e2e=False,
            )
            ttft_ok = grid.stable & (grid.ttft_ms[:, 0] <= workload.ttft_p99_target_ms)
            tpot = decode_pool_tpot_p99(workload, rates / decode, efficiency, kv_link_gb_per_s)
            return ttft_ok & (tpot <= workload.tpot_p99_target_ms)

        rate = search_rate(passes_at)
        splits.append(SplitGoodput(prefill, decode, rate, rate / gpus))
    return DisaggregationComparison(aggregated=aggregated, splits=tuple(splits))
