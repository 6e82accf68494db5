#!/usr/bin/env python3
"""Fleet model p99 against the simulator, per LB policy x batching x arrival CV, out of sample.

Cells are drawn at random (replicas, slots, models hosted, popularity skew, window, max batch,
model latency, utilization) for each of 4 policies x 3 batching modes (off, CPU, GPU) x arrival
CV 1, 2, 4. Two grids come from two seeds: ``--grid tune`` is the one the accuracy flags in
``sdlab_model.queues.fleet.accuracy`` were set on; ``--grid test`` is drawn independently and is
the one to report. A cell is *outside* its target (5% without batching, 15% with) when the model's
error exceeds it and the model is also outside the simulation's 95% interval widened by the target.

    python3 scripts/fleet_accuracy.py --grid test             # the report (a few minutes)
    python3 scripts/fleet_accuracy.py --grid tune --json out.json

The summary's last column, cells outside the target that the model did not flag approximate,
must be 0 on the test grid.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.params import LB_POLICIES, NUMERIC_BY_NAME
from sdlab_model.queues import queueing
from sdlab_model.simulation.simulator import simulate
from sdlab_model.workload import Workload

# Each test grid that found a cell outside its target unflagged led to a change and was then
# retired; the report is always on a grid drawn after the last change:
# - seed 2 found round robin, CV 2, 5 replicas of one slot (1.25 pooled servers):
#   MIN_VALIDATED_POOLED_SERVERS;
# - seed 3 found four models on a 2-replica GPU fleet at saturation 0.43: the multi-model
#   saturation limit;
# - seed 4 found a random split whose slot queue made 18% of the p99, 16% high:
#   MAX_VALIDATED_QUEUE_SHARE;
# - seed 5 found none, but the slot-limited regime changed after it (holding time from the
#   real batch rate, checked on the tuning grid and card 5), so the report moved on.
GRID_SEEDS = {"tune": 1, "test": 6}
MODES = ("off", "CPU", "GPU")
CVS = (1.0, 2.0, 4.0)
TARGET = {"off": 0.05, "CPU": 0.15, "GPU": 0.15}
MAX_RATE = NUMERIC_BY_NAME["rate_rps"].maximum


def draw_workload(rng: np.random.Generator, policy: str, mode: str, cv: float) -> Workload:
    """One random cell of the given group (rate set from a drawn utilization)."""
    models = 1 if rng.random() < 0.5 else round(math.exp(rng.uniform(0.0, math.log(100))))
    base = Workload(
        lb_policy=policy,
        arrival_cv=cv,
        dynamic_batching=mode != "off",
        gpu=mode == "GPU",
        replicas=round(math.exp(rng.uniform(0.0, math.log(200)))),
        cpu_workers_per_replica=int(rng.choice([1, 4, 16])),
        gpu_instances_per_replica=int(rng.choice([1, 2, 4])),
        models_hosted=models,
        popularity_skew=float(np.round(rng.uniform(0.0, 2.0), 2)),
        batch_window_ms=float(np.round(rng.uniform(1.0, 20.0), 1)),
        max_batch_size=int(rng.choice([8, 16, 32, 64, 128])),
        model_latency_ms=float(np.round(math.exp(rng.uniform(math.log(5), math.log(100))), 1)),
    )
    utilization = float(np.round(rng.uniform(0.1, 0.9), 3))
    rate = min(MAX_RATE, max(1.0, utilization * base.capacity_rps))
    return base.with_changes(rate_rps=float(np.round(rate, 1)))


def simulated(workload: Workload, seed: int):
    """Simulated p99 and its 95% interval; longer runs where each replica sees few requests."""
    per_replica = 4_000 if workload.is_central_queue else 4_000 * workload.replicas
    n_requests = int(min(2_000_000, max(300_000, per_replica)))
    sim = simulate(workload, n_requests=n_requests, seed=seed, replications=5)
    return sim.p99_ms, sim.p99_ci_ms


def run(grid: str, cells_per_group: int) -> list[dict]:
    rng = np.random.default_rng(GRID_SEEDS[grid])
    rows = []
    for policy in LB_POLICIES:
        for mode in MODES:
            for cv in CVS:
                for _ in range(cells_per_group):
                    workload = draw_workload(rng, policy, mode, cv)
                    model = queueing.latency(workload)
                    if not model.is_stable:
                        continue
                    sim_p99, (low, high) = simulated(workload, seed=int(rng.integers(1 << 30)))
                    target = TARGET[mode]
                    error = model.p99_ms / sim_p99 - 1.0
                    consistent = low * (1 - target) <= model.p99_ms <= high * (1 + target)
                    rows.append(
                        {
                            "policy": policy,
                            "mode": mode,
                            "cv": cv,
                            "workload": workload.to_strings(),
                            "utilization": model.utilization,
                            "model_p99_ms": model.p99_ms,
                            "sim_p99_ms": sim_p99,
                            "sim_ci_ms": [low, high],
                            "error": error,
                            "outside": abs(error) > target and not consistent,
                            "accuracy": model.accuracy,
                        }
                    )
    return rows


def summary(rows: list[dict]) -> int:
    print(
        f"{'policy':14} {'batching':8} {'cv':>3} {'cells':>5} {'median|err|':>11} "
        f"{'max|err|':>9} {'trusted':>7} {'median':>7} {'max':>7} {'flagged':>7} "
        f"{'beyond target':>13} {'NOT flagged':>11}"
    )
    unflagged_total = 0
    for policy in LB_POLICIES:
        for mode in MODES:
            for cv in CVS:
                group = [r for r in rows if (r["policy"], r["mode"], r["cv"]) == (policy, mode, cv)]
                if not group:
                    continue
                errors = [abs(r["error"]) for r in group]
                trusted = [abs(r["error"]) for r in group if r["accuracy"] != "approximate"]
                trusted_text = (
                    f"{statistics.median(trusted):7.1%} {max(trusted):7.1%}"
                    if trusted
                    else f"{'-':>7} {'-':>7}"
                )
                flagged = sum(r["accuracy"] == "approximate" for r in group)
                beyond = sum(abs(r["error"]) > TARGET[mode] for r in group)
                unflagged = sum(r["outside"] and r["accuracy"] != "approximate" for r in group)
                unflagged_total += unflagged
                print(
                    f"{policy:14} {mode:8} {cv:3.0f} {len(group):5d} "
                    f"{statistics.median(errors):11.1%} {max(errors):9.1%} {len(trusted):7d} "
                    f"{trusted_text} {flagged:7d} {beyond:13d} {unflagged:11d}"
                )
    return unflagged_total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=sorted(GRID_SEEDS), default="test")
    parser.add_argument("--cells-per-group", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write every cell to this file")
    parser.add_argument("--from-json", type=Path, help="summarize cells an earlier run wrote")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.from_json:
        rows = json.loads(args.from_json.read_text())
    else:
        rows = run(args.grid, args.cells_per_group)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    unflagged = summary(rows)
    print(
        f"\n{args.grid} grid (seed {GRID_SEEDS[args.grid]}): {len(rows)} cells in "
        f"{time.perf_counter() - started:.0f} s. Cells outside the target that the model did not "
        f"flag approximate: {unflagged} (must be 0)."
    )


if __name__ == "__main__":
    main()
