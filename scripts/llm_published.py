"""The LLM serving model against published measurements it was not fitted to.

The efficiency factors come from one other measurement (``sdlab_model/llm/calibration.py``: NVIDIA
NIM, Llama-3.3-70B on 2 × H100, FP8, concurrency 1); nothing here is fitted.

1. kipply, "Transformer inference arithmetic" (kipp.ly, 2022), "comparing against real
   benchmarks": a 13B model decoding on A100s, 22.0 ms per token on 1 GPU and 13.5 ms on 2
   (NVIDIA FasterTransformer's figures). Assumed: Llama 2 13B's shape (40 layers, d_model 5,120,
   the same as the GPT 13B measured), FP16, A100 40 GB (the post's 1.5 TB/s), batch 1, a
   512-token context.
2. MLPerf Inference v4.1, Llama-2-70B (99.9%), 8 × H100-SXM-80GB, TensorRT-LLM: server
   74.42 samples/s with TTFT p99 ≤ 2 s and TPOT p99 ≤ 200 ms; offline 84.48 samples/s
   (MLCommons results, 2024-08-28). Lengths: the dataset's 24,576 prompts have 5,463,976 input
   tokens (mean 222.3, 48 to 1,021), as tabulated from MLCommons' pickle
   (open_orca_gpt4_tokenized_llama.sampled_24576.pkl) in FlashLab-MBZUAI/HBFSim
   validation/calibration/h100-llama2-70b-calibration-protocol.json (read 2026-12-02); the model
   generates 294.45 tokens per sample on average ("Tokens per sample" of the reference FP16 run,
   mlcommons/inference language/llama2-70b/README.md). Spreads (cv) 0.7 are assumed. Engine:
   NVIDIA's configuration as recorded in the same HBFSim file (a later round, TensorRT 10.8):
   4 replicas of 2 GPUs, FP8 weights and KV cache, max_num_tokens 1,024, batch 1,024. Those 2
   GPUs are pipeline-parallel there; this model knows only tensor parallelism, so TP2 stands in
   (the other splits and an 8,192-token budget are shown as sensitivity).

    python scripts/llm_published.py
"""

from __future__ import annotations

from sdlab_model.llm import (
    DEFAULT_EFFICIENCY,
    LlmWorkload,
    gpu_by_id,
    iteration_cost,
    llm_latency,
    model_by_id,
    simulate_llm,
)
from sdlab_model.llm.capacity import max_rate_at_targets, max_stable_rate

KIPPLY_MS = {1: 22.0, 2: 13.5}
KIPPLY_CONTEXT = 512
MLPERF_SERVER = 74.42
MLPERF_OFFLINE = 84.48
MLPERF_OUTPUT_MEAN = 294.45
MLPERF_INPUT_MEAN = 5_463_976 / 24_576
BUDGETS = (1024, 8192)
SPLITS = ((2, 4), (4, 2), (8, 1))


def kipply() -> list[tuple[int, float, float]]:
    """(GPUs, predicted ms per token, published ms) for the 13B decode at batch 1."""
    rows = []
    for gpus, published in KIPPLY_MS.items():
        cost = iteration_cost(
            model_by_id("llama-2-13b"),
            gpu_by_id("a100-40gb"),
            precision="bf16",
            tensor_parallel=gpus,
            efficiency=DEFAULT_EFFICIENCY,
        )
        predicted = cost.iteration_ms(1, KIPPLY_CONTEXT, KIPPLY_CONTEXT)
        rows.append((gpus, predicted, published))
    return rows


def mlperf_workload(tensor_parallel: int, replicas: int, budget: int) -> LlmWorkload:
    """The MLPerf Llama-2-70B deployment as assumed in the module docstring."""
    return LlmWorkload(
        model_id="llama-2-70b",
        gpu_id="h100-sxm-80gb",
        precision="fp8",
        tensor_parallel=tensor_parallel,
        replicas=replicas,
        prompt_tokens_mean=MLPERF_INPUT_MEAN,
        prompt_tokens_cv=0.7,
        output_tokens_mean=MLPERF_OUTPUT_MEAN,
        output_tokens_cv=0.7,
        max_running_sequences=1024,
        max_batched_tokens=budget,
        ttft_p99_target_ms=2000.0,
        tpot_p99_target_ms=200.0,
        e2e_p99_target_ms=3_600_000.0,
    )


def main() -> None:
    print("kipply 13B decode, batch 1, A100 40 GB, FP16 (ms per token)")
    print(f"{'GPUs':>4} {'predicted':>10} {'published':>10} {'error':>7}")
    for gpus, predicted, published in kipply():
        print(f"{gpus:4} {predicted:10.1f} {published:10.1f} {predicted / published - 1:+7.0%}")
    print(
        f"\nMLPerf v4.1 Llama-2-70B, 8 × H100, FP8 (samples/s; published server "
        f"{MLPERF_SERVER}, offline {MLPERF_OFFLINE})"
    )
    print(
        f"{'TP×replicas':>11} {'budget':>6} {'server':>8} {'err':>6} {'offline':>8} {'err':>6} "
        f"{'binding at offline':>22}"
    )
    for tp, replicas in SPLITS:
        for budget in BUDGETS:
            w = mlperf_workload(tp, replicas, budget)
            server = max_rate_at_targets(w)
            offline = max_stable_rate(w)
            binding = llm_latency(w.with_changes(rate_rps=0.98 * offline)).binding
            print(
                f"{tp:>5}×{replicas:<5} {budget:6} {server:8.1f} "
                f"{server / MLPERF_SERVER - 1:+6.0%} {offline:8.1f} "
                f"{offline / MLPERF_OFFLINE - 1:+6.0%} {binding:>22}"
            )
    w = mlperf_workload(2, 4, 1024)
    for rate in (MLPERF_SERVER, max_rate_at_targets(w)):
        at_rate = w.with_changes(rate_rps=rate)
        estimate = llm_latency(at_rate)
        result = simulate_llm(at_rate, requests=8000, max_requests=16000, seed=7)
        simulated = (
            f"TTFT p99 {result.ttft.p99_ms:.0f} ms, TPOT p99 {result.tpot.p99_ms:.0f} ms"
            if result.is_stable
            else result.note
        )
        print(
            f"\nTP2×4, budget 1,024, at {rate:.1f}/s: analytic TTFT p99 {estimate.ttft_p99_ms:.0f} "
            f"ms, TPOT p99 {estimate.tpot_p99_ms:.0f} ms (approximate: {estimate.approximate}); "
            f"simulator {simulated}{'' if result.converged else ' (not converged)'}"
        )


if __name__ == "__main__":
    main()
