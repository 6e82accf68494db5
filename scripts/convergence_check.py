#!/usr/bin/env python3
"""``simulate_converged`` with the Lab's budget against 2M-request whole-fleet references.

For the five scenario cards and 20 random large fleets (50 to 200 replicas, 20 to 200 models,
five for each load-balancer policy), it prints the p99 ``simulate_converged`` gives with its
defaults (the Lab's budget and seed) beside a reference: ``simulate`` on the whole fleet, one
run of 2,000,000 requests, the first quarter dropped, its own 95% batch-means interval and
whether it has converged (its halves' p99s agree within their noise; a row without a converged
reference is not judged). A row passes when a converged p99 is within 5% of the reference, or a
not-converged one states an interval that holds the reference.

It also prints the CPU time each costs per new design, side by side in one run: today's Lab
simulation (``simulate`` with 200,000 requests in 5 replications, then the sorted latencies for
the CDF) and ``simulate_converged``; both compiled first, the least of ``--repeats`` runs each.

    nice -n 10 python3 scripts/convergence_check.py          # about a minute on one core
    python3 scripts/convergence_check.py --fleet-seed 7 --reference-seed 8   # other fleets

The fleets are drawn from ``FLEET_SEED`` and simulated with ``REFERENCE_SEED``; neither was used
while the method was built (its development fleets came from other seeds).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.params import LB_POLICIES, NUMERIC_BY_NAME
from sdlab_model.scenarios import SCENARIOS
from sdlab_model.simulation.converged import (
    batch_means_half_width,
    p99_drift_ms,
    simulate_converged,
)
from sdlab_model.simulation.simulator import simulate
from sdlab_model.workload import Workload

FLEET_SEED = 2101
REFERENCE_SEED = 2102
REFERENCE_REQUESTS = 2_000_000
FLEETS_PER_POLICY = 5
TOLERANCE = 0.05
MAX_RATE = NUMERIC_BY_NAME["rate_rps"].maximum


def draw_fleet(rng: np.random.Generator, policy: str) -> Workload:
    """One random large fleet: rate from a drawn load on its full-batch capacity."""
    base = Workload(
        lb_policy=policy,
        replicas=int(rng.integers(50, 201)),
        models_hosted=int(rng.integers(20, 201)),
        popularity_skew=float(rng.uniform(0.0, 2.0)),
        model_latency_ms=float(math.exp(rng.uniform(math.log(5), math.log(100)))),
        batch_window_ms=float(rng.uniform(1.0, 20.0)),
        dynamic_batching=bool(rng.random() < 0.7),
        gpu=bool(rng.random() < 0.6),
        arrival_cv=1.0 if rng.random() < 0.5 else float(rng.uniform(0.5, 3.0)),
    )
    rate = min(float(rng.uniform(0.3, 0.9)) * base.capacity_rps, MAX_RATE)
    return base.with_changes(rate_rps=rate)


def workloads(fleet_seed: int) -> list[tuple[str, Workload]]:
    cases = [(f"card {card.step}", card.workload()) for card in SCENARIOS]
    rng = np.random.default_rng(fleet_seed)
    for policy in LB_POLICIES:
        for index in range(FLEETS_PER_POLICY):
            cases.append((f"{policy} {index + 1}", draw_fleet(rng, policy)))
    return cases


def todays_lab(workload: Workload) -> float:
    """Today's Lab simulation of one design: what the Lab ran before ``simulate_converged``."""
    result = simulate(workload, n_requests=200_000, seed=0, replications=5)
    np.sort(result.latencies_ms)
    return result.p99_ms


def cpu_ms(function, workload: Workload, repeats: int) -> float:
    spent = []
    for _ in range(repeats):
        start = time.process_time()
        function(workload)
        spent.append((time.process_time() - start) * 1e3)
    return min(spent)


def reference(workload: Workload, seed: int) -> tuple[float, float, bool]:
    """The whole fleet's p99, its batch-means half-width, and whether it has converged: its
    halves' p99s agree within their noise."""
    result = simulate(workload, REFERENCE_REQUESTS, seed=seed, replications=1, warmup_fraction=0.25)
    drift, noise = p99_drift_ms(result.latencies_ms)
    converged = abs(drift) <= max(noise, 1e-9 * result.p99_ms)
    return result.p99_ms, batch_means_half_width(result.latencies_ms), converged


def describe(workload: Workload) -> str:
    batching = "batch" if workload.dynamic_batching else "single"
    hardware = "GPU" if workload.gpu else "CPU"
    load = workload.rate_rps / workload.capacity_rps
    return (
        f"R{workload.replicas:<3} M{workload.models_hosted:<3} {hardware} {batching:<6} "
        f"cv {workload.arrival_cv:.2f} load {load:.2f}"
    )


def row(name: str, workload: Workload, arguments) -> tuple[str, float, float, str]:
    lab = simulate_converged(workload)
    ref_p99, ref_half, ref_converged = reference(workload, arguments.reference_seed)
    error = (lab.p99_ms - ref_p99) / ref_p99
    low, high = lab.p99_ci_ms
    slack = 1e-9 * ref_p99  # an exact p99 (a service time) is held by a zero-width interval
    holds = low - slack <= ref_p99 <= high + slack
    passed = abs(error) <= TOLERANCE if lab.converged else holds
    verdict = ("PASS" if passed else "FAIL") if ref_converged else "no ref"
    today_ms = cpu_ms(todays_lab, workload, arguments.repeats)
    lab_ms = cpu_ms(simulate_converged, workload, arguments.repeats)
    status = "converged" if lab.converged else "NOT conv."
    text = (
        f"{name:<16} {workload.lb_policy:<13} {describe(workload)} | "
        f"{lab.p99_ms:8.2f} [{low:8.2f}, {high:8.2f}] {status} "
        f"{lab.simulated_requests:>7,} {'1 rep' if lab.representative_replica else 'fleet'} | "
        f"{ref_p99:8.2f} ±{ref_half:6.2f} {'ok' if ref_converged else 'NOT conv.':<9} | "
        f"{error:+6.1%} {'in' if holds else 'out':<3} {verdict:<6} | "
        f"{today_ms:6.1f} {lab_ms:6.1f}"
    )
    return verdict, today_ms, lab_ms, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per design (least)")
    parser.add_argument("--fleet-seed", type=int, default=FLEET_SEED)
    parser.add_argument("--reference-seed", type=int, default=REFERENCE_SEED)
    arguments = parser.parse_args()
    cases = workloads(arguments.fleet_seed)
    # Compile every kernel both paths use before anything is timed.
    for _, workload in cases[:1] + cases[5::FLEETS_PER_POLICY]:
        todays_lab(workload)
        simulate_converged(workload)
    print(
        f"fleets from seed {arguments.fleet_seed}, references seed {arguments.reference_seed} "
        f"({REFERENCE_REQUESTS:,} requests, whole fleet, first 25% dropped); Lab seed 0"
    )
    print(
        f"{'case':<16} {'policy':<13} {'design':<42} | {'Lab p99 ms [95% interval]':<30} "
        f"{'status':<9} {'requests':>7} sim   | {'reference p99':<26} | error  ref  "
        "verdict | CPU ms today, Lab"
    )
    verdicts, today, lab = [], [], []
    for name, workload in cases:
        verdict, today_ms, lab_ms, text = row(name, workload, arguments)
        print(text, flush=True)
        verdicts.append(verdict)
        today.append(today_ms)
        lab.append(lab_ms)
    print(
        f"\n{verdicts.count('PASS')} pass, {verdicts.count('FAIL')} fail, "
        f"{verdicts.count('no ref')} without a converged reference. "
        "CPU per new design, today's 200k-request "
        f"simulation vs simulate_converged: median {statistics.median(today):.1f} vs "
        f"{statistics.median(lab):.1f} ms, mean {statistics.fmean(today):.1f} vs "
        f"{statistics.fmean(lab):.1f} ms, worst ratio "
        f"{max(b / a for a, b in zip(today, lab, strict=True)):.2f}."
    )


if __name__ == "__main__":
    main()
