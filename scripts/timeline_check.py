#!/usr/bin/env python3
"""The time-stepped timeline model against the discrete-event simulator on three traces.

    PYTHONPATH=. python3 scripts/timeline_check.py [--seed 1]

Each trace runs the model (``sdlab_model.timeline.run_timeline``) with the Kubernetes HPA and its
defaults, then simulates the same Poisson arrivals on the ready fleet the model scheduled
(``sdlab_model.timeline.check.simulate_timeline``): an unbatched 20 ms model on 2-worker CPU
replicas (100 req/s each) behind one queue, target p99 100 ms, 4 replicas at the start. It
prints, per trace, the minutes over the target
and the requests over it by both, and the p99 of every minute (every 30th of the day) with the
model's relative error; minutes with fewer than 200 requests are not compared. Nothing in the
model was fitted to these traces or this seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.timeline import (
    AutoscalerConfig,
    TimelineInputs,
    TrafficShape,
    run_timeline,
)
from sdlab_model.timeline.check import simulate_timeline
from sdlab_model.workload import Workload

WORKLOAD = Workload(
    rate_rps=300,
    replicas=4,
    dynamic_batching=False,
    lb_policy="central_queue",
    model_latency_ms=20,
    cpu_workers_per_replica=2,
)
TRACES = {
    "step ×3 at 2 min (15 min)": (
        TrafficShape(kind="step", base_rate_rps=300, factor=3, at_s=120),
        900.0,
        1,
    ),
    "spike ×4 for 2 min at 2 min (15 min)": (
        TrafficShape(kind="spike", base_rate_rps=300, factor=4, at_s=120, spike_duration_s=120),
        900.0,
        1,
    ),
    "diurnal day, peak/trough 4, mean 300 req/s (24 h)": (
        TrafficShape(kind="diurnal", base_rate_rps=300, peak_to_trough=4),
        86_400.0,
        30,
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name, (traffic, duration_s, every) in TRACES.items():
        inputs = TimelineInputs(
            workload=WORKLOAD.with_changes(rate_rps=traffic.base_rate_rps),
            traffic=traffic,
            autoscaler=AutoscalerConfig(kind="hpa", min_replicas=1, max_replicas=100),
            duration_s=duration_s,
        )
        started = time.perf_counter()
        result = run_timeline(inputs)
        model_s = time.perf_counter() - started
        started = time.perf_counter()
        check = simulate_timeline(result, seed=args.seed)
        simulate_s = time.perf_counter() - started
        errors = check.p99_errors
        print(
            f"\n== {name}: {check.requests:,} requests, HPA, cold start "
            f"{inputs.cold_start.cold_start_s:.0f} s (model {model_s:.2f} s, "
            f"simulation {simulate_s:.2f} s)"
        )
        print(
            f"minutes over target: model {check.model_minutes_over}, "
            f"simulation {check.simulated_minutes_over} (of {len(check.minute_starts_s)})"
        )
        rel = (check.model_requests_over - check.simulated_requests_over) / max(
            1, check.simulated_requests_over
        )
        print(
            f"requests over target: model {check.model_requests_over:,.0f}, simulation "
            f"{check.simulated_requests_over:,} ({rel:+.1%})"
        )
        print(
            f"p99 per minute, |error| over {errors.size} compared minutes: median "
            f"{check.median_abs_error:.1%}, 90th percentile "
            f"{float(np.quantile(np.abs(errors), 0.9)):.1%}, worst {check.worst_abs_error:.1%}"
        )
        print(f"{'minute':>6} {'requests':>9} {'model p99':>11} {'sim p99':>11} {'error':>8}")
        for index in range(0, len(check.minute_starts_s), every):
            model = check.model_p99_ms[index]
            simulated = check.simulated_p99_ms[index]
            error = (model - simulated) / simulated if simulated > 0 else float("nan")
            flag = "" if check.compared[index] else "  (not compared)"
            print(
                f"{check.minute_starts_s[index] / 60:6.0f} "
                f"{check.requests_per_minute[index]:9,d} {model:9.1f}ms {simulated:9.1f}ms "
                f"{error:+8.1%}{flag}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
