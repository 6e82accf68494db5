#!/usr/bin/env python3
"""Time ``sdlab_model.p99_grid`` over 200 log-spaced rates x 128 replica counts (target <= 20 ms).

Prints the best of several runs, in ms, for the default workload (dynamic batching on), the same
with batching off (the tabulated exact M/D/c), and GPU; then one ``min_replicas_for_target``
(replicas 1..500 at one rate).

    python3 scripts/bench_grid.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model import Workload, min_replicas_for_target, p99_grid

RUNS = 15


def best_ms(function) -> float:
    function()  # warm caches (fill_load, imports) outside the timing
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return 1000.0 * min(times)


def main() -> None:
    rates = np.geomspace(1, 500_000, 200)
    replicas = np.geomspace(1, 500, 128).round()  # as a heatmap's rows: log-spaced, rounded
    cases = {
        "default (round robin, CPU, batching on, window 5 ms)": Workload(),
        "round robin, batching off (tabulated M/D/c)": Workload(dynamic_batching=False),
        "round robin, GPU, batching on": Workload(gpu=True),
        "random, CPU, batching on": Workload(lb_policy="random"),
        "round robin, 50 models (Zipf 1), CPU batching": Workload(models_hosted=50),
        "central queue, CPU, batching on": Workload(lb_policy="central_queue"),
    }
    print(f"p99_grid over {rates.size} rates x {replicas.size} replica counts, best of {RUNS}:")
    for label, workload in cases.items():
        grid = p99_grid(workload, rates, replicas)
        assert grid.shape == (replicas.size, rates.size) and not np.isnan(grid).any()
        ms = best_ms(lambda w=workload: p99_grid(w, rates, replicas))
        print(f"  {label:42} {ms:7.2f} ms")
    for label, workload in (
        ("batching on", Workload(rate_rps=20_000)),
        ("batching off", Workload(rate_rps=20_000, dynamic_batching=False)),
    ):
        ms = best_ms(lambda w=workload: min_replicas_for_target(w))
        print(f"min_replicas_for_target ({label}, replicas 1..500): {ms:7.2f} ms")


if __name__ == "__main__":
    main()
