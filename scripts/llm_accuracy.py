"""The analytic LLM serving model against the token-level simulator, out of sample.

Two grids of deployments and loads: the TUNING grid, on which the ``approximate`` thresholds of
``sdlab_model/llm/analytic.py`` were chosen, and the HELD-OUT grid (other models, GPUs,
parallelism, lengths and spreads), on which they are only reported. A load is a share of the
analytic model's largest stable rate. For each point: TTFT p99 and TPOT p99 from both, the
relative error, and whether the analytic model flagged the point approximate. The claim
checked: every point not flagged is within 15% on both p99s.

    python scripts/llm_accuracy.py [--grid tuning|held-out|both] [--requests 4000]

Takes a couple of minutes on two cores (the simulator runs each point to ≥ 4,000 requests,
doubling up to 16,000 while the p99 interval is wider than 10%).
"""

from __future__ import annotations

import argparse
import math
import time

from sdlab_model.llm import LlmWorkload, llm_estimates, simulate_llm
from sdlab_model.llm.capacity import max_stable_rate

TOLERANCE = 0.15
SEED = 2026


def _tuning() -> list[tuple[LlmWorkload, float]]:
    bases = [
        LlmWorkload(model_id="llama-3.1-8b", gpu_id="h100-sxm-80gb"),
        LlmWorkload(model_id="llama-3.1-70b", gpu_id="h100-sxm-80gb", tensor_parallel=4),
        LlmWorkload(model_id="mistral-7b", gpu_id="a100-80gb"),
    ]
    points = []
    for base in bases:
        for prompt in (200.0, 1000.0, 3000.0):
            for output in (50.0, 250.0):
                workload = base.with_changes(prompt_tokens_mean=prompt, output_tokens_mean=output)
                points += [(workload, load) for load in (0.2, 0.5, 0.8)]
    return points


def _held_out() -> list[tuple[LlmWorkload, float]]:
    bases = [
        LlmWorkload(model_id="qwen2.5-32b", gpu_id="h100-sxm-80gb", tensor_parallel=2),
        LlmWorkload(model_id="mixtral-8x7b", gpu_id="h100-sxm-80gb", tensor_parallel=2),
        LlmWorkload(model_id="llama-3.1-8b", gpu_id="l4", precision="fp8"),
        LlmWorkload(model_id="llama-3.1-70b", gpu_id="a100-80gb", tensor_parallel=8),
    ]
    points = []
    for base in bases:
        for prompt, output, spread in ((500.0, 400.0, 1.0), (2000.0, 100.0, 0.3)):
            workload = base.with_changes(
                prompt_tokens_mean=prompt,
                output_tokens_mean=output,
                prompt_tokens_cv=spread,
                output_tokens_cv=spread,
            )
            points += [(workload, load) for load in (0.3, 0.6, 0.85)]
    return points


GRIDS = {"tuning": _tuning, "held-out": _held_out}


def _error(analytic: float, simulated: float) -> float:
    if math.isinf(analytic) or math.isinf(simulated) or simulated <= 0:
        return math.nan
    return analytic / simulated - 1.0


def run_grid(name: str, requests: int) -> list[dict]:
    """Every point of grid ``name``: the analytic and simulated p99s and their errors."""
    points = GRIDS[name]()
    workloads = [
        workload.with_changes(rate_rps=load * max_stable_rate(workload))
        for workload, load in points
    ]
    estimates = llm_estimates(workloads)
    rows = []
    for (_, load), workload, estimate in zip(points, workloads, estimates, strict=True):
        result = simulate_llm(workload, seed=SEED, requests=requests, max_requests=4 * requests)
        ttft = _error(estimate.ttft_p99_ms, result.ttft.p99_ms)
        tpot = _error(estimate.tpot_p99_ms, result.tpot.p99_ms)
        rows.append(
            {
                "workload": workload,
                "load": load,
                "estimate": estimate,
                "result": result,
                "ttft_error": ttft,
                "tpot_error": tpot,
                "within": abs(ttft) <= TOLERANCE and abs(tpot) <= TOLERANCE,
            }
        )
    return rows


def _print(name: str, rows: list[dict]) -> None:
    print(f"\n{name} grid")
    header = (
        f"{'model':14} {'gpu':14} tp {'prompt':>6} {'out':>5} cv  load {'rate':>7} "
        f"{'TTFT99 a':>9} {'sim':>9} {'err':>6}  {'TPOT99 a':>8} {'sim':>7} {'err':>6}  "
        f"{'rho':>4} flag  ok"
    )
    print(header)
    for row in rows:
        w, e, r = row["workload"], row["estimate"], row["result"]
        sim_note = "" if r.converged else " (sim not converged)"
        print(
            f"{w.model_id:14} {w.gpu_id:14} {w.tensor_parallel:2} {w.prompt_tokens_mean:6.0f} "
            f"{w.output_tokens_mean:5.0f} {w.prompt_tokens_cv:3.1f} {row['load']:4.2f} "
            f"{w.rate_rps:7.2f} {e.ttft_p99_ms:9.1f} {r.ttft.p99_ms:9.1f} "
            f"{row['ttft_error']:+6.0%}  {e.tpot_p99_ms:8.1f} {r.tpot.p99_ms:7.1f} "
            f"{row['tpot_error']:+6.0%}  {e.prefill_load:4.2f} "
            f"{'yes' if e.approximate else 'no':4} {'yes' if row['within'] else 'NO'}{sim_note}"
        )
    clean = [row for row in rows if not row["estimate"].approximate]
    good = sum(row["within"] for row in clean)
    print(
        f"{name}: {len(rows)} points, {len(rows) - len(clean)} flagged approximate; "
        f"of the {len(clean)} not flagged, {good} within {TOLERANCE:.0%} on both p99s "
        f"({len(clean) - good} outside)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=[*GRIDS, "both"], default="both")
    parser.add_argument("--requests", type=int, default=4000)
    args = parser.parse_args()
    names = list(GRIDS) if args.grid == "both" else [args.grid]
    for name in names:
        start = time.perf_counter()
        rows = run_grid(name, args.requests)
        _print(name, rows)
        print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
