#!/usr/bin/env python3
"""What one new design costs the judgement, against what the Lab paid before it (issue 21).

For the designs ``convergence_check.py`` uses (the five cards and 20 random large fleets), it
prints, side by side in one run, the CPU time of:

- before: the Lab's evaluation plus, where the queueing model is approximate, its simulation of
  the time (``simulate`` with 200,000 requests in 5 replications, then sorting for the CDF);
- now: ``judge``, with every cache emptied first: the design's converged simulation where the
  model is approximate, plus the simulations its search for the fewest replicas runs.

Both compiled first; the least of ``--repeats`` runs each.

    python3 scripts/bench_judgement.py --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from convergence_check import FLEET_SEED, workloads

from sdlab_model import assessment
from sdlab_model.assessment import evaluate, judge, needs_simulation
from sdlab_model.simulation.simulator import simulate


def before(workload) -> None:
    evaluate(workload)
    if needs_simulation(workload):
        result = simulate(workload, n_requests=200_000, seed=0, replications=5)
        np.sort(result.latencies_ms)


def now(workload) -> None:
    judge(workload)


def _fresh() -> None:
    assessment._simulation.cache_clear()


def cpu_ms(function, workload, repeats: int) -> float:
    spent = []
    for _ in range(repeats):
        _fresh()
        start = time.process_time()
        function(workload)
        spent.append((time.process_time() - start) * 1e3)
    return min(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cases = workloads(FLEET_SEED)
    for _, workload in cases[:2]:  # compile every kernel both paths use
        before(workload)
        now(workload)
    print(f"{'design':<16} {'before ms':>10} {'now ms':>10} {'sims':>5}  judged p99")
    ratios, old, new = [], [], []
    for name, workload in cases:
        calls = []
        simulate_design = assessment.simulate_design
        assessment.simulate_design = lambda w, calls=calls, f=simulate_design: (
            calls.append(w) or f(w)
        )
        try:
            then_ms = cpu_ms(before, workload, args.repeats)
            now_ms = cpu_ms(now, workload, args.repeats)
        finally:
            assessment.simulate_design = simulate_design
        result = judge(workload)
        sims = len(calls) // args.repeats
        old.append(then_ms)
        new.append(now_ms)
        ratios.append(now_ms / then_ms)
        print(
            f"{name:<16} {then_ms:>10.1f} {now_ms:>10.1f} {sims:>5}  "
            f"{result.p99_ms:.4g} ms ({result.p99_source})"
        )
    print(
        f"\nmedian: before {statistics.median(old):.1f} ms, now {statistics.median(new):.1f} ms; "
        f"total before {sum(old):.0f} ms, now {sum(new):.0f} ms; "
        f"ratio now/before median {statistics.median(ratios):.2f}, worst {max(ratios):.2f}"
    )


if __name__ == "__main__":
    main()
