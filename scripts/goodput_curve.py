"""Goodput against offered load, 0.25x to 3x capacity (issue 24, must-show 5).

For a design (the Lab's default unbatched CPU fleet unless told otherwise) and the five variants
of ``sdlab_model.overload.goodput``: nothing shed, a queue limit, a limit and a deadline, retries
without a budget and with Envoy's 20% one. Goodput is requests per second served within the p99
target; the attempts per fresh request show the retry storm the budget holds back.

    python3 scripts/goodput_curve.py [--servers 16] [--latency-ms 20] [--target-ms 100]
                                     [--replicas 2] [--deadline-only] [--simulate]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model import Workload
from sdlab_model.overload import (
    OverloadPolicy,
    goodput_curve,
    simulate_burst,
    simulate_overload,
)
from sdlab_model.overload.goodput import VARIANTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=16, help="CPU workers per replica")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--target-ms", type=float, default=100.0)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--simulate", action="store_true", help="simulated goodput beside")
    parser.add_argument(
        "--deadline-only",
        action="store_true",
        help="retry on a deadline (the target) without a queue limit: the storm's setting",
    )
    args = parser.parse_args()
    workload = Workload(
        dynamic_batching=False,
        gpu=False,
        cpu_workers_per_replica=args.servers,
        model_latency_ms=args.latency_ms,
        p99_target_ms=args.target_ms,
        replicas=args.replicas,
        lb_policy="random",
    )
    chosen = OverloadPolicy(deadline_ms=args.target_ms) if args.deadline_only else OverloadPolicy()
    curve = goodput_curve(workload, chosen)
    print(
        f"Design: {args.replicas} replicas x {args.servers} workers, {args.latency_ms:g} ms a "
        f"request, p99 target {args.target_ms:g} ms; capacity {curve.capacity_rps:,.0f} req/s.\n"
    )
    for name in VARIANTS:
        print(f"- {name}: {curve.policies[name]}")
    print("\nGoodput (req/s served within the target) at each offered load:\n")
    print("| offered | " + " | ".join(VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    for i, multiple in enumerate(curve.multiples):
        cells = []
        for name in VARIANTS:
            result = curve.results[name][i]
            cell = f"{result.goodput_rps:,.0f}"
            if name.startswith("retries"):
                cell += f" (×{result.amplification:.2f} attempts)"
            if args.simulate:
                sim = simulate_overload(
                    workload, curve.policies[name], result.fresh_rps, max_attempts=400_000
                )
                cell += f" / sim {sim['goodput_rps'].estimate:,.0f}"
            cells.append(cell)
        print(
            f"| {multiple:g}x ({multiple * curve.capacity_rps:,.0f} req/s) | "
            + " | ".join(cells)
            + " |"
        )
    storms = [
        (m, r.storm_attempt_rps)
        for name in VARIANTS
        for m, r in zip(curve.multiples, curve.results[name], strict=True)
        if r.storm_attempt_rps
    ]
    print(f"\nSecond (storm) fixed points: {len(storms)}.")
    for multiple, storm in storms:
        print(
            f"- fresh {multiple:g}x: attempts can also settle at {storm:,.0f} req/s "
            f"({storm / curve.capacity_rps:.2f}x capacity) once a burst has pushed them there"
        )
    burst(workload, curve)


def burst(workload: Workload, curve) -> None:
    """A brief overload simulated per variant: does each come back after it?"""
    print(
        f"\nA brief overload, simulated (one replica, seed {BURST_SEED}): fresh load "
        f"{BURST['base_multiple']:g}x capacity, {BURST['burst_multiple']:g}x for "
        f"{BURST['burst_s']:g} s from t = {BURST['before_s']:g} s, then "
        f"{BURST['base_multiple']:g}x again for {BURST['after_s']:g} s.\n"
    )
    print("| variant | attempts x capacity, 2 s windows | attempts from +4 s | goodput from +4 s |")
    print("|---|---|---|---|")
    for name in VARIANTS:
        run = simulate_burst(workload, curve.policies[name], seed=BURST_SEED, **BURST)
        attempts, goodput = run.after_burst(4.0)
        series = " ".join(f"{a:.2f}" for a in run.attempts)
        print(f"| {name} | {series} | {attempts:.2f} | {goodput:.2f} |")


BURST = {
    "base_multiple": 0.75,
    "burst_multiple": 2.0,
    "burst_s": 2.0,
    "before_s": 10.0,
    "after_s": 20.0,
}
BURST_SEED = 1


if __name__ == "__main__":
    main()
