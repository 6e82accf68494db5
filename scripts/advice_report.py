#!/usr/bin/env python3
"""Print what the Advice page recommends: the cheapest design per card, and two lever tables.

For each scenario card: the design ``advise`` returns (checked by simulation where the model is
outside its validated range, as on the page), its p99, $/h and $ per 1M inferences, and the
current card's own cost. Then the levers at the default lab and at ``?rate_rps=5000&replicas=10``
(the two cases issue 10 opens with). Markdown tables, for a closing note.

    python3 scripts/advice_report.py
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model import SCENARIOS, evaluate
from sdlab_model.advice import advise, levers, workload_cost
from sdlab_model.simulation import simulate
from sdlab_model.workload import Workload

SIM_REQUESTS = 200_000


def _simulated_p99(workload: Workload) -> float:
    return simulate(workload, n_requests=SIM_REQUESTS, seed=0).p99_ms


def _ms(value: float) -> str:
    return "unstable (∞)" if not math.isfinite(value) else f"{value:.1f}"


def cards() -> None:
    print("| card | current design: p99 (ms), $/h | recommended design | p99 (ms) | $/h | $/1M |")
    print("|---|---|---|---|---|---|")
    for card in SCENARIOS:
        workload = card.workload()
        now = evaluate(workload)
        now_cost = workload_cost(workload)
        advice = advise(workload, simulate_p99=_simulated_p99)
        best = advice.best
        if best is None:
            print(f"| {card.id} | {_ms(now.p99_ms)}, ${now_cost.usd_per_hour:,.2f} | none | | | |")
            continue
        p99 = _ms(best.p99_ms)
        if best.simulated_p99_ms is not None:
            p99 += f" (simulated {_ms(best.simulated_p99_ms)})"
        print(
            f"| {card.id} | {_ms(now.p99_ms)}, ${now_cost.usd_per_hour:,.2f} | {best.label} | "
            f"{p99} | ${best.cost.usd_per_hour:,.2f} | ${best.cost.usd_per_million:,.3f} |"
        )


def lever_table(query: str, workload: Workload) -> None:
    result = evaluate(workload)
    print(
        f"\nLevers at `{query}` (p99 {_ms(result.p99_ms)} ms, target "
        f"{workload.p99_target_ms:g} ms, ${workload_cost(workload).usd_per_hour:,.2f}/h):\n"
    )
    print("| change | p99 (ms) | Δ p99 | $/h | Δ $/h | meets target |")
    print("|---|---|---|---|---|---|")
    for lever in levers(workload):
        delta = "" if not math.isfinite(lever.delta_p99_ms) else f"{lever.delta_p99_ms:+.1f}"
        print(
            f"| {lever.label} | {_ms(lever.p99_ms)} | {delta} | ${lever.usd_per_hour:,.2f} | "
            f"{lever.delta_usd_per_hour:+,.2f} | {'yes' if lever.meets_target else 'no'} |"
        )


def main() -> None:
    start = time.perf_counter()
    cards()
    lever_table("?model=queueing (defaults)", Workload())
    lever_table("?rate_rps=5000&replicas=10", Workload(rate_rps=5000, replicas=10))
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
