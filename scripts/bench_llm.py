"""Speed of the LLM serving model: a 40 × 40 analytic heatmap and a 10,000-request simulation.

Budgets (issue 23): the heatmap in ≤ 1 s; the simulator serves 10,000 requests of a 70B model
on 8 GPUs in ≤ 2 s. Each is timed after one warm-up call (numba compiles, or loads its cache,
on the first), best and median of ``--repeats``; the machine's load average is printed, since
the budgets assume a quiet machine.

    python scripts/bench_llm.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from sdlab_model.llm import LlmWorkload, simulate_llm
from sdlab_model.llm.heatmap import llm_heatmap

HEATMAP_BUDGET_S = 1.0
SIMULATOR_BUDGET_S = 2.0


def _time(function, repeats: int) -> tuple[float, float, float]:
    start = time.perf_counter()
    function()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return first, min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    base = LlmWorkload(model_id="llama-3.1-8b", gpu_id="h100-sxm-80gb")
    rates = np.linspace(0.5, 20.0, 40)
    prompts = np.linspace(100.0, 4000.0, 40)

    def heatmap():
        llm_heatmap(base, "rate_rps", rates, "prompt_tokens_mean", prompts)

    first, best, median = _time(heatmap, args.repeats)
    verdict = "within" if median <= HEATMAP_BUDGET_S else "OVER"
    print(
        f"40 × 40 TTFT/TPOT p99 heatmap: first call {first:.2f} s, best {best:.2f} s, "
        f"median {median:.2f} s ({verdict} the {HEATMAP_BUDGET_S:.0f} s budget)"
    )
    big = LlmWorkload(model_id="llama-3.1-70b", gpu_id="h100-sxm-80gb", tensor_parallel=8)
    big = big.with_changes(rate_rps=10.0)

    def simulate():
        simulate_llm(big, requests=10_000, max_requests=10_000)

    first, best, median = _time(simulate, args.repeats)
    verdict = "within" if median <= SIMULATOR_BUDGET_S else "OVER"
    print(
        f"simulator, 10,000 requests, Llama 3.1 70B on 8 × H100 at 10 req/s: first call "
        f"{first:.2f} s, best {best:.3f} s, median {median:.3f} s "
        f"({verdict} the {SIMULATOR_BUDGET_S:.0f} s budget)"
    )


if __name__ == "__main__":
    main()
