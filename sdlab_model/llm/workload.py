"""The inputs of an LLM serving estimate: model, GPU, parallelism, traffic, engine knobs, targets.

One frozen ``LlmWorkload`` holds them, validated once at construction with a message naming the
field, the value and the allowed range (``INPUT_RANGES``, the one declaration of those ranges).
Lengths are drawn from a lognormal with the given mean and coefficient of variation (spread /
mean; 0 is every request the same length), rounded to whole tokens of at least 1 and at most the
model's context; or, given a ``length_sample`` of measured requests, from it (the four length
fields then hold the sample's means and cvs, whatever was passed; ``length_sample``).
Arrivals are a renewal stream at ``rate_rps`` over all replicas with Gamma gaps
of cv ``arrival_cv`` (1: Poisson; above 1 bursty, as the Lab's), and a router that picks a
replica at random gives each replica ``rate_rps / replicas`` of it (Poisson stays Poisson).

A share ``prefix_cache_hit_share`` of each prompt's tokens is served from a prefix cache: vLLM's
automatic prefix caching lets a request that shares a prefix with an earlier one "skip the
computation of the shared part" (docs.vllm.ai, features/automatic_prefix_caching, read
2026-12-02; SGLang's RadixAttention, Zheng et al., arXiv:2312.07104, does the same with a radix
tree). Those tokens skip prefill compute but still occupy KV cache, counted as if each request
held its own copy (conservative where running requests share blocks). The default, 0, is traffic
with no shared prefixes.

Engine knobs follow vLLM's names (``max_num_seqs``, ``max_num_batched_tokens``,
``gpu_memory_utilization``, ``block_size``; vLLM engine arguments, docs.vllm.ai, read
2026-12-02). Defaults: vLLM's for the knobs; a chat assistant for traffic and targets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from sdlab_model.llm.catalog import gpu_by_id, model_by_id
from sdlab_model.llm.iteration import EngineEfficiency, IterationCost, iteration_cost
from sdlab_model.llm.kv_cache import PRECISION_BYTES, KvCapacity, kv_capacity
from sdlab_model.llm.length_sample import LengthSample
from sdlab_model.llm.lengths import length_nodes

INPUT_RANGES: dict[str, tuple[float, float]] = {
    "tensor_parallel": (1, 8),
    "replicas": (1, 64),
    "rate_rps": (0.0, 10_000.0),
    "arrival_cv": (0.5, 8.0),
    "prompt_tokens_mean": (1.0, 131_072.0),
    "prompt_tokens_cv": (0.0, 3.0),
    "output_tokens_mean": (1.0, 32_768.0),
    "output_tokens_cv": (0.0, 3.0),
    "prefix_cache_hit_share": (0.0, 0.99),
    "max_running_sequences": (1, 4096),
    "max_batched_tokens": (16, 131_072),
    "gpu_memory_utilization": (0.1, 0.99),
    "kv_block_tokens": (1, 256),
    "activation_reserve_gb": (0.0, 64.0),
    "ttft_p99_target_ms": (1.0, 600_000.0),
    "tpot_p99_target_ms": (1.0, 10_000.0),
    "e2e_p99_target_ms": (1.0, 3_600_000.0),
}
"""Field -> (lowest, highest) accepted value; the page's sliders take their ranges from here."""
LENGTH_FIELDS = ("prompt_tokens_mean", "prompt_tokens_cv", "output_tokens_mean", "output_tokens_cv")
"""The lognormal's fields, which a length sample sets to its own moments."""

_WHOLE = frozenset(
    {
        "tensor_parallel",
        "replicas",
        "max_running_sequences",
        "max_batched_tokens",
        "kv_block_tokens",
    }
)


@dataclass(frozen=True)
class LlmWorkload:
    """One LLM deployment under one traffic, with its latency targets (p99)."""

    model_id: str = "llama-3.1-8b"
    gpu_id: str = "h100-sxm-80gb"
    precision: str = "bf16"
    tensor_parallel: int = 1
    replicas: int = 1
    rate_rps: float = 4.0
    arrival_cv: float = 1.0
    prompt_tokens_mean: float = 1000.0
    prompt_tokens_cv: float = 0.5
    output_tokens_mean: float = 250.0
    output_tokens_cv: float = 0.5
    prefix_cache_hit_share: float = 0.0
    max_running_sequences: int = 256
    max_batched_tokens: int = 8192
    gpu_memory_utilization: float = 0.9
    kv_block_tokens: int = 16
    activation_reserve_gb: float = 2.0
    ttft_p99_target_ms: float = 2000.0
    tpot_p99_target_ms: float = 100.0
    e2e_p99_target_ms: float = 60_000.0
    length_sample: LengthSample | None = None
    """Measured (prompt, output) lengths, in place of the lognormal; None: the lognormal."""

    def __post_init__(self) -> None:
        model = model_by_id(self.model_id)
        if self.length_sample is not None:
            self._take_sample_moments(model)
        gpu = gpu_by_id(self.gpu_id)
        if self.precision not in PRECISION_BYTES:
            raise ValueError(
                f"precision must be one of {sorted(PRECISION_BYTES)}, got {self.precision!r}"
            )
        gpu.peak_flops(self.precision)
        for name, (low, high) in INPUT_RANGES.items():
            value = getattr(self, name)
            if name in _WHOLE:
                ok = isinstance(value, int) and not isinstance(value, bool)
                kind = "a whole number"
            else:
                ok = isinstance(value, int | float) and not isinstance(value, bool)
                ok = ok and math.isfinite(value)
                kind = "a finite number"
            if not ok or not low <= value <= high:
                raise ValueError(f"{name} must be {kind} in [{low:g}, {high:g}], got {value!r}")
        if self.prompt_tokens_mean + self.output_tokens_mean > model.max_context_tokens:
            raise ValueError(
                f"prompt_tokens_mean + output_tokens_mean ({self.prompt_tokens_mean:g} + "
                f"{self.output_tokens_mean:g}) exceed {model.name}'s context of "
                f"{model.max_context_tokens} tokens"
            )

    def _take_sample_moments(self, model) -> None:
        """Set the four length fields to the sample's moments; ``ValueError`` where the sample's
        longest request overflows the model's context or its moments are out of range."""
        sample = self.length_sample
        if not isinstance(sample, LengthSample):
            raise ValueError(f"length_sample must be a LengthSample, got {type(sample).__name__}")
        if sample.longest_request_tokens > model.max_context_tokens:
            raise ValueError(
                f"the length sample's longest request ({sample.longest_request_tokens:,} tokens, "
                f"prompt and output) exceeds {model.name}'s context of "
                f"{model.max_context_tokens:,} tokens"
            )
        for name in LENGTH_FIELDS:
            column, moment = name.split("_tokens_")
            value = sample.mean(column) if moment == "mean" else sample.cv(column)
            low, high = INPUT_RANGES[name]
            if not low <= value <= high:
                what = "mean" if moment == "mean" else "spread (cv)"
                raise ValueError(
                    f"the length sample's {column} {what}, {value:,.3g}, is outside the "
                    f"{low:g} to {high:g} the model accepts"
                )
            object.__setattr__(self, name, value)  # derived, as the class says

    @property
    def model(self):
        """The catalog architecture served."""
        return model_by_id(self.model_id)

    @property
    def gpu(self):
        """The catalog GPU it runs on."""
        return gpu_by_id(self.gpu_id)

    @property
    def gpus(self) -> int:
        """GPUs in the deployment: tensor parallel × replicas."""
        return self.tensor_parallel * self.replicas

    @property
    def arrival_scv_per_replica(self) -> float:
        """Squared cv of the gaps each replica sees: a random split of a renewal stream with
        squared cv c² keeps 1/R of its requests, whose gaps have 1 + (c² − 1) / R."""
        return 1.0 + (self.arrival_cv**2 - 1.0) / self.replicas

    @property
    def rate_per_replica_rps(self) -> float:
        """Arrival rate each replica sees behind a random router."""
        return self.rate_rps / self.replicas

    def kv_capacity(self) -> KvCapacity:
        """The KV cache of one replica under these engine settings."""
        return kv_capacity(
            self.model,
            self.gpu,
            precision=self.precision,
            tensor_parallel=self.tensor_parallel,
            memory_utilization=self.gpu_memory_utilization,
            activation_reserve_gb=self.activation_reserve_gb,
            block_tokens=self.kv_block_tokens,
        )

    def iteration_cost(self, efficiency: EngineEfficiency) -> IterationCost:
        """The roofline coefficients of one replica."""
        return iteration_cost(
            self.model,
            self.gpu,
            precision=self.precision,
            tensor_parallel=self.tensor_parallel,
            efficiency=efficiency,
        )

    def length_nodes(self, name: str, cap: int) -> np.ndarray:
        """``"prompt"`` or ``"output"`` lengths within ``[1, cap]`` at the quantile nodes
        (``lengths.NODE_WEIGHTS``): the sample's, or the lognormal's."""
        if self.length_sample is not None:
            return self.length_sample.nodes(name, cap)
        if name == "prompt":
            return _lognormal_nodes(self.prompt_tokens_mean, self.prompt_tokens_cv, cap)
        return _lognormal_nodes(self.output_tokens_mean, self.output_tokens_cv, cap)

    def with_changes(self, **changes) -> LlmWorkload:
        """A copy with ``changes`` applied, validated again. A new value for a length field
        of a workload with a length sample leaves the sample: a lognormal with the new value
        (and the sample's other moments)."""
        moved = [
            name
            for name in LENGTH_FIELDS
            if changes.get(name, getattr(self, name)) != getattr(self, name)
        ]
        if self.length_sample is not None and "length_sample" not in changes and moved:
            changes["length_sample"] = None
        return replace(self, **changes)


_lognormal_nodes = lru_cache(maxsize=4096)(length_nodes)
"""The lognormal's nodes, kept: a heatmap's cells share a few."""
