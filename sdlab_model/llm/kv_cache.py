"""The KV cache: bytes per token, and how many tokens fit beside the weights.

Every token in a running sequence keeps a key and a value vector per layer per KV head:
``bytes per token = 2 × layers × KV heads × head dim × bytes per element``
(kipply, "Transformer inference arithmetic", 2022; grouped-query attention shares one KV head
among several query heads, Ainslie et al., arXiv:2305.13245, 2023).

With tensor parallelism over ``tp`` GPUs the KV heads are split among them; when ``tp`` exceeds
the KV heads, each GPU keeps a copy of one head (vLLM replicates them), so the group stores
``max(KV heads, tp)`` heads per layer.

Tokens that fit: ``(GPU memory × memory utilization × tp − weights − activation reserve × tp)
/ bytes per token``, rounded down to whole blocks of ``block_tokens`` (vLLM's PagedAttention,
Kwon et al., SOSP 2023: the cache is allocated in fixed-size blocks; its ``gpu_memory_utilization``
is the share of each GPU's memory the engine may use for weights, activations and cache).
"""

from __future__ import annotations

from dataclasses import dataclass

from sdlab_model.llm.catalog import GIGA, Gpu, ModelArchitecture

PRECISION_BYTES = {"bf16": 2, "fp8": 1}
"""Bytes per weight, activation and cache element at each serving precision."""


def kv_bytes_per_token(
    model: ModelArchitecture, element_bytes: int, tensor_parallel: int = 1
) -> int:
    """KV cache bytes one token takes across the tensor-parallel group (see the module doc)."""
    stored_heads = max(model.kv_heads, tensor_parallel)
    return 2 * model.layers * stored_heads * model.head_dim * element_bytes


@dataclass(frozen=True)
class KvCapacity:
    """What the KV cache of one replica (``tensor_parallel`` GPUs) holds."""

    bytes_per_token: int
    weights_gb: float
    cache_gb: float
    blocks: int
    block_tokens: int

    @property
    def tokens(self) -> int:
        """Tokens the cache holds: whole blocks only."""
        return self.blocks * self.block_tokens

    @property
    def fits(self) -> bool:
        """Whether the weights leave room for at least one block."""
        return self.blocks > 0


def kv_capacity(
    model: ModelArchitecture,
    gpu: Gpu,
    *,
    precision: str,
    tensor_parallel: int,
    memory_utilization: float,
    activation_reserve_gb: float,
    block_tokens: int,
) -> KvCapacity:
    """The KV cache of one replica: the formula of the module docstring, in whole blocks."""
    element_bytes = PRECISION_BYTES[precision]
    per_token = kv_bytes_per_token(model, element_bytes, tensor_parallel)
    weights_bytes = model.parameters * element_bytes
    usable = gpu.memory_gb * GIGA * memory_utilization * tensor_parallel
    cache_bytes = usable - weights_bytes - activation_reserve_gb * GIGA * tensor_parallel
    blocks = max(0, int(cache_bytes // (per_token * block_tokens)))
    return KvCapacity(
        bytes_per_token=per_token,
        weights_gb=weights_bytes / GIGA,
        cache_gb=max(0.0, cache_bytes) / GIGA,
        blocks=blocks,
        block_tokens=block_tokens,
    )
