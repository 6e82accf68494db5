#!/usr/bin/env python3
"""The time-stepped timeline model against the discrete-event simulator on three traces.

    PYTHONPATH=. python3 scripts/timeline_check.py [--seed 1] [--fleet unbatched-central]

Each trace runs the model (``sdlab_model.timeline.run_timeline``) with the Kubernetes HPA and its
defaults, then simulates the same Poisson arrivals on the ready fleet the model scheduled
(``sdlab_model.timeline.check.simulate_timeline``). Fleets (``--fleet``, default all):

- ``unbatched-central``: an unbatched 20 ms model on 2-worker CPU replicas (100 req/s each)
  behind one queue, target p99 100 ms, 4 replicas at the start (the first round's check);
- ``batched-round-robin``, ``batched-random``, ``batched-central``: the lab's default batched
  model (20 ms, max batch 32, 5 ms window) on 8-worker CPU replicas (2,076 req/s each), the
  step and spike from 600 req/s, behind each balancer.

It prints, per fleet and trace, the minutes over the target and the requests over it by both,
and the p99 of every minute (every 30th of the day) with the model's relative error; minutes
with fewer than 200 requests are not compared. Nothing in the model was fitted to these traces
or this seed.
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

UNBATCHED = Workload(
    rate_rps=300,
    replicas=4,
    dynamic_batching=False,
    lb_policy="central_queue",
    model_latency_ms=20,
    cpu_workers_per_replica=2,
)
BATCHED = Workload(rate_rps=600, replicas=4, cpu_workers_per_replica=8)
FLEETS = {
    "unbatched-central": UNBATCHED,
    "batched-round-robin": BATCHED.with_changes(lb_policy="round_robin"),
    "batched-random": BATCHED.with_changes(lb_policy="random"),
    "batched-central": BATCHED.with_changes(lb_policy="central_queue"),
}
DIURNAL_MEAN_RPS = 300.0
"""A day at 300 req/s is 26 M requests: checked whole (``MAX_REQUESTS``)."""
MAX_REQUESTS = 30_000_000
"""Above the page's cap: a report checks every minute; streamed, ~0.25 GB of latencies."""


def traces(base_rps: float) -> dict[str, tuple[TrafficShape, float, int]]:
    """Name -> (shape, duration s, print every n-th minute) at ``base_rps`` (the step and the
    spike; the diurnal day averages ``DIURNAL_MEAN_RPS``)."""
    return {
        f"step ×3 at 2 min from {base_rps:g} req/s (15 min)": (
            TrafficShape(kind="step", base_rate_rps=base_rps, factor=3, at_s=120),
            900.0,
            1,
        ),
        f"spike ×4 for 2 min at 2 min from {base_rps:g} req/s (15 min)": (
            TrafficShape(
                kind="spike", base_rate_rps=base_rps, factor=4, at_s=120, spike_duration_s=120
            ),
            900.0,
            1,
        ),
        f"diurnal day, peak/trough 4, mean {DIURNAL_MEAN_RPS:g} req/s (24 h)": (
            TrafficShape(kind="diurnal", base_rate_rps=DIURNAL_MEAN_RPS, peak_to_trough=4),
            86_400.0,
            30,
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fleet", choices=sorted(FLEETS), action="append")
    parser.add_argument("--every-minute", action="store_true", help="print every minute's row")
    args = parser.parse_args()
    for fleet in args.fleet or list(FLEETS):
        _check_fleet(fleet, FLEETS[fleet], args.seed, args.every_minute)
    return 0


def _check_fleet(fleet: str, workload: Workload, seed: int, every_minute: bool) -> None:
    print(
        f"\n##### {fleet}: max batch {workload.effective_max_batch_size}, "
        f"{workload.lb_policy}, {workload.with_changes(replicas=1).capacity_rps:,.0f} req/s "
        "per replica"
    )
    for name, (traffic, duration_s, every) in traces(workload.rate_rps).items():
        inputs = TimelineInputs(
            workload=workload.with_changes(rate_rps=traffic.base_rate_rps),
            traffic=traffic,
            autoscaler=AutoscalerConfig(kind="hpa", min_replicas=1, max_replicas=100),
            duration_s=duration_s,
        )
        started = time.perf_counter()
        result = run_timeline(inputs)
        model_s = time.perf_counter() - started
        started = time.perf_counter()
        check = simulate_timeline(result, seed=seed, max_requests=MAX_REQUESTS)
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
        for index in range(0, len(check.minute_starts_s), 1 if every_minute else every):
            model = check.model_p99_ms[index]
            simulated = check.simulated_p99_ms[index]
            error = (model - simulated) / simulated if simulated > 0 else float("nan")
            flag = "" if check.compared[index] else "  (not compared)"
            print(
                f"{check.minute_starts_s[index] / 60:6.0f} "
                f"{check.requests_per_minute[index]:9,d} {model:9.1f}ms {simulated:9.1f}ms "
                f"{error:+8.1%}{flag}"
            )


if __name__ == "__main__":
    raise SystemExit(main())
