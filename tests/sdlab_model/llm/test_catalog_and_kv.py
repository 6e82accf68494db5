"""The catalog's figures and the KV cache arithmetic against hand computations."""

from __future__ import annotations

import pytest

from sdlab_model.llm import GPUS, MODELS, gpu_by_id, kv_bytes_per_token, kv_capacity, model_by_id


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_kv_bytes_per_token_is_the_formula(model):
    for element_bytes in (1, 2):
        expected = 2 * model.layers * model.kv_heads * model.head_dim * element_bytes
        got = kv_bytes_per_token(model, element_bytes)
        assert got == expected, f"{model.id}: {got} bytes per token, formula gives {expected}"


def test_kv_bytes_per_token_known_values():
    # Llama 3.1 70B in BF16: 2 × 80 × 8 × 128 × 2 = 327,680 bytes (320 KiB) per token.
    assert kv_bytes_per_token(model_by_id("llama-3.1-70b"), 2) == 327_680, "70B GQA KV size"
    # Llama 2 13B has no GQA: 2 × 40 × 40 × 128 × 2 = 819,200 bytes per token.
    assert kv_bytes_per_token(model_by_id("llama-2-13b"), 2) == 819_200, "13B MHA KV size"


def test_tensor_parallel_beyond_kv_heads_replicates_them():
    model = model_by_id("llama-3.1-8b")
    assert kv_bytes_per_token(model, 2, 8) == kv_bytes_per_token(model, 2), "8 heads over 8 GPUs"
    assert kv_bytes_per_token(model, 2, 16) == 2 * kv_bytes_per_token(model, 2), (
        "with 16 GPUs and 8 KV heads each head is kept twice"
    )


@pytest.mark.parametrize("gpu", GPUS, ids=lambda g: g.id)
def test_tokens_that_fit_match_a_hand_computation(gpu):
    model = model_by_id("llama-3.1-8b")
    capacity = kv_capacity(
        model,
        gpu,
        precision="bf16",
        tensor_parallel=1,
        memory_utilization=0.9,
        activation_reserve_gb=1.0,
        block_tokens=16,
    )
    # By hand: memory × 0.9 − 8.03e9 × 2 bytes of weights − 1 GB, over 131,072 bytes a token
    # (2 × 32 layers × 8 heads × 128 × 2), in whole blocks of 16.
    free_bytes = gpu.memory_gb * 1e9 * 0.9 - 8.03e9 * 2 - 1e9
    blocks = max(0, int(free_bytes // (131_072 * 16)))
    assert capacity.blocks == blocks, f"{gpu.id}: {capacity.blocks} blocks, by hand {blocks}"
    assert capacity.tokens == blocks * 16, "tokens are whole blocks"
    assert capacity.fits == (blocks > 0), "fits means at least one block"


def test_tokens_that_fit_with_tensor_parallel_by_hand():
    capacity = kv_capacity(
        model_by_id("llama-2-70b"),
        gpu_by_id("h100-sxm-80gb"),
        precision="fp8",
        tensor_parallel=8,
        memory_utilization=0.9,
        activation_reserve_gb=2.0,
        block_tokens=32,
    )
    # 8 × 80 GB × 0.9 = 576 GB; − 69 GB of FP8 weights − 16 GB reserve = 491 GB;
    # KV per token in FP8: 2 × 80 × 8 × 128 = 163,840 bytes; blocks of 32.
    expected_blocks = int(491e9 // (163_840 * 32))
    assert capacity.blocks == expected_blocks, f"{capacity.blocks} != {expected_blocks}"


def test_a_model_too_big_for_the_gpu_has_no_cache():
    capacity = kv_capacity(
        model_by_id("llama-3.1-70b"),
        gpu_by_id("l4"),
        precision="bf16",
        tensor_parallel=1,
        memory_utilization=0.9,
        activation_reserve_gb=1.0,
        block_tokens=16,
    )
    assert not capacity.fits and capacity.tokens == 0, "141 GB of weights on a 24 GB L4"


def test_every_entry_is_sourced_and_moe_is_sparse():
    for entry in (*MODELS, *GPUS):
        assert entry.source.strip() and entry.source_date, f"{entry.id} has no source or date"
    mixtral = model_by_id("mixtral-8x7b")
    assert mixtral.active_parameters < mixtral.parameters / 3, "Mixtral's active share"


def test_prices_come_from_the_hardware_catalog():
    assert gpu_by_id("h100-sxm-80gb").usd_per_gpu_hour == pytest.approx(11.0612), "GCP a3 price"
    assert gpu_by_id("h200-sxm-141gb").usd_per_gpu_hour is None, "no H200 instance is listed"


def test_unknown_ids_and_missing_fp8_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown model 'gpt-5'"):
        model_by_id("gpt-5")
    with pytest.raises(ValueError, match="unknown GPU"):
        gpu_by_id("tpu")
    with pytest.raises(ValueError, match="no FP8"):
        gpu_by_id("a100-80gb").peak_flops("fp8")
