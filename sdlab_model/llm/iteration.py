"""Time of one engine iteration (one forward pass over a batch of tokens), from a roofline.

An iteration processes ``tokens`` new tokens: prompt chunks being prefilled and one token for
each sequence decoding. It costs

    overhead + max(compute, memory) + all-reduce

- compute = (2 × active parameters × tokens + 4 × layers × heads × head dim × attention pairs)
  / (tp × peak FLOP/s × compute efficiency). A token attends to every token before it: the
  attention pairs are the sum, over the tokens processed, of the context each one sees (kipply,
  "Transformer inference arithmetic", 2022, "flops counting").
- memory = (weight bytes + KV bytes per token × KV tokens read and written)
  / (tp × HBM bandwidth × bandwidth efficiency). Every iteration reads all the weights once
  (that is why decode is bandwidth-bound at small batches) and the KV cache of every context.
- all-reduce: tensor parallelism all-reduces the activations twice per layer (after attention
  and after the MLP; Shoeybi et al., "Megatron-LM", arXiv:1909.08053); a ring moves
  2 (tp − 1) / tp of the message over each link, plus a fixed latency per all-reduce.
- overhead: the scheduler, sampling and kernel launches, a fixed time per iteration.

The roofline takes the larger of compute and memory as if the two overlapped perfectly; the
efficiency factors absorb what real kernels lose (defaults fitted in ``calibration``). A mixture
of experts reads all its weights each iteration (true once a batch touches every expert, an
overestimate at batch 1) and computes with its active parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sdlab_model.llm.catalog import Gpu, ModelArchitecture
from sdlab_model.llm.kv_cache import PRECISION_BYTES, kv_bytes_per_token

ACTIVATION_BYTES = 2
"""Activations are all-reduced in 16 bits even when weights are FP8 (TensorRT-LLM and vLLM
quantize weights and KV cache, not the all-reduce)."""
MS_PER_S = 1000.0


@dataclass(frozen=True)
class EngineEfficiency:
    """What a real engine achieves against the hardware's peaks, and its fixed costs.

    ``compute_efficiency`` and ``bandwidth_efficiency`` are shares of peak dense FLOP/s and of
    HBM bandwidth; ``interconnect_efficiency`` of the link's bandwidth; ``allreduce_latency_us``
    is the fixed cost of one all-reduce; ``iteration_overhead_ms`` is added to every iteration
    and ``request_overhead_ms`` to every request's time to first token.
    """

    compute_efficiency: float
    bandwidth_efficiency: float
    interconnect_efficiency: float = 0.8
    allreduce_latency_us: float = 8.0
    iteration_overhead_ms: float = 1.0
    request_overhead_ms: float = 0.0

    def __post_init__(self) -> None:
        for name in ("compute_efficiency", "bandwidth_efficiency", "interconnect_efficiency"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {value!r}")
        for name in ("allreduce_latency_us", "iteration_overhead_ms", "request_overhead_ms"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class IterationCost:
    """The roofline's coefficients for one replica, in milliseconds (see the module doc).

    ``iteration_ms(tokens, pairs, kv_tokens)`` is
    ``overhead + max(per_token·tokens + per_pair·pairs, weights + per_kv_token·kv_tokens)
    + allreduce_fixed + allreduce_per_token·tokens``; an iteration with no tokens costs nothing.
    The simulator's kernel evaluates the same expression from these fields.
    """

    compute_ms_per_token: float
    compute_ms_per_pair: float
    weights_read_ms: float
    kv_ms_per_token: float
    allreduce_fixed_ms: float
    allreduce_ms_per_token: float
    overhead_ms: float

    def iteration_ms(self, tokens: float, pairs: float, kv_tokens: float) -> float:
        """Milliseconds of an iteration over ``tokens`` with these attention pairs and KV."""
        if tokens <= 0:
            return 0.0
        compute = self.compute_ms_per_token * tokens + self.compute_ms_per_pair * pairs
        memory = self.weights_read_ms + self.kv_ms_per_token * kv_tokens
        allreduce = self.allreduce_fixed_ms + self.allreduce_ms_per_token * tokens
        return self.overhead_ms + max(compute, memory) + allreduce

    def as_tuple(self) -> tuple[float, ...]:
        """The coefficients in the order the simulator's kernel takes them."""
        return (
            self.compute_ms_per_token,
            self.compute_ms_per_pair,
            self.weights_read_ms,
            self.kv_ms_per_token,
            self.allreduce_fixed_ms,
            self.allreduce_ms_per_token,
            self.overhead_ms,
        )


def iteration_cost(
    model: ModelArchitecture,
    gpu: Gpu,
    *,
    precision: str,
    tensor_parallel: int,
    efficiency: EngineEfficiency,
) -> IterationCost:
    """The roofline coefficients of one replica of ``model`` on ``tensor_parallel`` GPUs."""
    element_bytes = PRECISION_BYTES[precision]
    flops_per_ms = tensor_parallel * gpu.peak_flops(precision) * efficiency.compute_efficiency
    flops_per_ms /= MS_PER_S
    bytes_per_ms = tensor_parallel * gpu.hbm_bandwidth_gb_per_s * 1e9
    bytes_per_ms *= efficiency.bandwidth_efficiency / MS_PER_S
    allreduces = 2 * model.layers if tensor_parallel > 1 else 0
    link_bytes_per_ms = gpu.interconnect_gb_per_s * 1e9 * efficiency.interconnect_efficiency
    link_bytes_per_ms /= MS_PER_S
    ring_share = 2.0 * (tensor_parallel - 1) / tensor_parallel
    message_bytes_per_token = model.hidden_size * ACTIVATION_BYTES
    return IterationCost(
        compute_ms_per_token=2.0 * model.active_parameters / flops_per_ms,
        compute_ms_per_pair=4.0
        * model.layers
        * model.attention_heads
        * model.head_dim
        / flops_per_ms,
        weights_read_ms=model.parameters * element_bytes / bytes_per_ms,
        kv_ms_per_token=kv_bytes_per_token(model, element_bytes, tensor_parallel) / bytes_per_ms,
        allreduce_fixed_ms=allreduces * efficiency.allreduce_latency_us / MS_PER_S,
        allreduce_ms_per_token=allreduces
        * ring_share
        * message_bytes_per_token
        / link_bytes_per_ms,
        overhead_ms=efficiency.iteration_overhead_ms,
    )
