#!/usr/bin/env python3
"""How fast is the timeline model? A 24 h day at 1 s steps, and the simulator check of a spike.

    PYTHONPATH=. python3 scripts/bench_timeline.py [--repeats 5]

1. ``run_timeline`` on a diurnal day (peak/trough 4, mean 2,000 req/s, the lab's default batched
   round-robin workload, Kubernetes HPA): 86,400 steps. Printed: the first call in this process
   (numba loads its compiled loop from the disk cache, or compiles it), then the median and
   best of ``--repeats`` warm calls.
2. The simulator check of a 10-minute spike (×4 for 2 min, 1,500 req/s base, unbatched central
   queue): the model's run, then ``simulate_timeline`` on the same arrivals and fleet, first
   call and warm median; then the same spike on the lab's default batched round-robin fleet
   (each replica its own batching queue behind the balancer).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.timeline import (
    AutoscalerConfig,
    TimelineInputs,
    TrafficShape,
    run_timeline,
)
from sdlab_model.timeline.check import simulate_timeline
from sdlab_model.workload import Workload


def _timed(function, repeats: int) -> tuple[float, list[float]]:
    started = time.perf_counter()
    function()
    first = time.perf_counter() - started
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return first, times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    day = TimelineInputs(
        workload=Workload(rate_rps=2000),
        traffic=TrafficShape(kind="diurnal", base_rate_rps=2000, peak_to_trough=4),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=1, max_replicas=100),
        duration_s=86_400,
        step_s=1,
    )
    first, warm = _timed(lambda: run_timeline(day), args.repeats)
    result = run_timeline(day)
    print(
        f"24 h diurnal day at 1 s steps ({day.steps:,} steps, "
        f"{result.totals.requests:,.0f} requests): first call {first:.3f} s, "
        f"warm median {statistics.median(warm):.3f} s, best {min(warm):.3f} s "
        f"({args.repeats} runs)"
    )
    spike = TimelineInputs(
        workload=Workload(
            rate_rps=1500, replicas=4, dynamic_batching=False, lb_policy="central_queue"
        ),
        traffic=TrafficShape(
            kind="spike", base_rate_rps=1500, factor=4, at_s=120, spike_duration_s=120
        ),
        autoscaler=AutoscalerConfig(kind="hpa", min_replicas=1, max_replicas=100),
        duration_s=600,
    )
    for label, workload in (
        ("unbatched central queue", spike.workload),
        ("batched round robin", Workload(rate_rps=1500, replicas=4)),
    ):
        _spike_check(replace(spike, workload=workload), label, args.repeats)
    return 0


def _spike_check(spike: TimelineInputs, label: str, repeats: int) -> None:
    spike_result = run_timeline(spike)
    first_model, warm_model = _timed(lambda: run_timeline(spike), repeats)
    first_sim, warm_sim = _timed(lambda: simulate_timeline(spike_result, seed=0), repeats)
    check = simulate_timeline(spike_result, seed=0)
    print(
        f"10-minute spike, {label}: model first {first_model:.3f} s, warm median "
        f"{statistics.median(warm_model):.3f} s; simulator check of {check.requests:,} "
        f"requests first {first_sim:.3f} s, warm median {statistics.median(warm_sim):.3f} s "
        f"(p99 per minute: median |error| {check.median_abs_error:.1%}, worst "
        f"{check.worst_abs_error:.1%}; minutes over target model {check.model_minutes_over}, "
        f"simulation {check.simulated_minutes_over})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
