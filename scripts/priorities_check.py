#!/usr/bin/env python3
"""Strict priority's analytic per-class p99 (``priority_latency``) against the simulator.

Each row is one class of one queue: ``servers`` x ``utilization`` x class shares, unbatched,
deterministic service at the Lab's default model latency. The simulator
(``simulate_priorities``) runs until every class's p99 interval is within ±2% or its budget
ends. A class passes when its analytic p99 is within 5% of the simulated one, or when the model
flags it (``approximate_because``). A miss is an unflagged class off by more than 5%.

Two grids: ``tuning``, on which the flag rule (``HIGH_UTILIZATION_FLAG`` and the rest of
``priorities._flag``) was set, and ``test``, which played no part in setting it (other server
counts, loads and shares), on which the accuracy is reported.

    nice -n 19 python3 scripts/priorities_check.py --grid test       # a few minutes, one core
    nice -n 19 python3 scripts/priorities_check.py --grid tuning
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.overload.priorities import (
    PriorityClass,
    PriorityQueue,
    priority_latency,
    simulate_priorities,
)
from sdlab_model.params import NUMERIC_BY_NAME

TOLERANCE = 0.05
SIM_SEED = 24
MAX_REQUESTS = 8_000_000
SERVICE_MS = float(NUMERIC_BY_NAME["model_latency_ms"].default)
NAMES = ("interactive", "standard", "batch")

GRIDS = {
    "tuning": {
        "servers": (1, 2, 4, 8, 16, 32),
        "utilization": (0.6, 0.75, 0.85, 0.92, 0.96),
        "shares": ((0.2, 0.8), (0.5, 0.5), (0.8, 0.2), (0.1, 0.3, 0.6)),
    },
    "test": {
        "servers": (3, 6, 12, 24),
        "utilization": (0.7, 0.8, 0.9, 0.94),
        "shares": ((0.3, 0.7), (0.6, 0.4), (0.15, 0.35, 0.5)),
    },
}


def queue_of(servers: int, utilization: float, shares: tuple[float, ...]) -> PriorityQueue:
    """A queue at ``utilization`` with classes of ``shares`` (highest priority first)."""
    classes = tuple(
        PriorityClass(name, share, 10.0 * SERVICE_MS)
        for name, share in zip(NAMES if len(shares) == 3 else NAMES[::2], shares, strict=False)
    )
    rate_rps = utilization * servers * 1000.0 / SERVICE_MS
    return PriorityQueue(rate_rps, servers, SERVICE_MS, classes)


def rows(grid: dict, max_requests: int):
    """One dict per class of every queue of ``grid``."""
    for servers, utilization, shares in itertools.product(
        grid["servers"], grid["utilization"], grid["shares"]
    ):
        queue = queue_of(servers, utilization, shares)
        model = priority_latency(queue)
        sim = simulate_priorities(queue, seed=SIM_SEED, max_requests=max_requests)
        for k, (analytic, simulated) in enumerate(zip(model.classes, sim.classes, strict=True)):
            error = analytic.p99_ms / simulated.p99_ms - 1.0
            yield {
                "servers": servers,
                "utilization": utilization,
                "shares": "/".join(f"{s:g}" for s in shares),
                "class": k,
                "model_ms": analytic.p99_ms,
                "sim_ms": simulated.p99_ms,
                "half_width": (simulated.p99_ci_ms[1] - simulated.p99_ms) / simulated.p99_ms,
                "error": error,
                "flagged": analytic.approximate_because is not None,
                "converged": sim.converged,
                "cobham_ms": analytic.mean_wait_ms,
                "sim_mean_ms": simulated.mean_wait_ms,
            }


def table_line(row: dict) -> str:
    miss = abs(row["error"]) > TOLERANCE and not row["flagged"]
    verdict = "MISS" if miss else ("flagged" if row["flagged"] else "ok")
    mean_error = (
        row["cobham_ms"] / row["sim_mean_ms"] - 1.0 if row["sim_mean_ms"] > 0 else float("nan")
    )
    return (
        f"| {row['servers']} | {row['utilization']:.2f} | {row['shares']} | {row['class']} "
        f"| {row['model_ms']:.2f} | {row['sim_ms']:.2f} ±{row['half_width']:.1%} "
        f"| {row['error']:+.1%} | {mean_error:+.0%} "
        f"| {'yes' if row['converged'] else 'no'} | {verdict} |"
    )


def summary(results: list[dict]) -> list[str]:
    unflagged = [r for r in results if not r["flagged"]]
    flagged = [r for r in results if r["flagged"]]
    misses = [r for r in unflagged if abs(r["error"]) > TOLERANCE]
    worst = max((abs(r["error"]) for r in unflagged), default=0.0)
    lines = [
        f"classes: {len(results)}; unflagged {len(unflagged)}, flagged {len(flagged)}",
        f"unflagged within {TOLERANCE:.0%}: {len(unflagged) - len(misses)} of {len(unflagged)}; "
        f"misses (unflagged, off by more): {len(misses)}; worst unflagged |error| {worst:.1%}",
        f"flagged and in fact off by more than {TOLERANCE:.0%}: "
        f"{sum(abs(r['error']) > TOLERANCE for r in flagged)} of {len(flagged)}",
        f"simulations not converged (budget {MAX_REQUESTS:,}): "
        f"{sum(not r['converged'] for r in results)} class rows",
    ]
    for k in sorted({r["class"] for r in results}):
        errors = [abs(r["error"]) for r in unflagged if r["class"] == k]
        if errors:
            lines.append(
                f"class {k} (0 = highest): unflagged mean |error| {sum(errors) / len(errors):.1%}, "
                f"max {max(errors):.1%} over {len(errors)}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=sorted(GRIDS), default="test")
    parser.add_argument("--max-requests", type=int, default=MAX_REQUESTS)
    args = parser.parse_args()
    began = time.perf_counter()
    print(f"grid: {args.grid}; service {SERVICE_MS:g} ms; sim seed {SIM_SEED}")
    print(
        "| servers | utilization | shares | class | model p99 ms | sim p99 ms ±95% | error "
        "| Cobham mean vs sim | converged | verdict |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for row in rows(GRIDS[args.grid], args.max_requests):
        results.append(row)
        print(table_line(row), flush=True)
    print()
    for line in summary(results):
        print(line)
    print(f"took {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
