#!/usr/bin/env python3
"""Print what the Advice page recommends: the cheapest design per card, and two lever tables.

For each scenario card: the design ``advise`` returns (judged as the Lab judges it: simulated where
the model is approximate, as on the page), its p99, $/h and $ per 1M inferences, the simulations
the search ran, and the current card's own cost. Then the levers at the default lab and at
``?rate_rps=5000&replicas=10`` (the two cases issue 10 opens with). Markdown tables, for a
closing note.

    python3 scripts/advice_report.py
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model import SCENARIOS
from sdlab_model.advice import advise, levers, workload_cost
from sdlab_model.assessment import judge
from sdlab_model.workload import Workload


def _ms(value: float) -> str:
    return "unstable (∞)" if not math.isfinite(value) else f"{value:.1f}"


def cards() -> None:
    print(
        "| card | current design: p99 (ms), $/h | recommended design | p99 (ms) | $/h | $/1M "
        "| simulations |"
    )
    print("|---|---|---|---|---|---|---|")
    for card in SCENARIOS:
        workload = card.workload()
        now = judge(workload)
        now_cost = workload_cost(workload)
        advice = advise(workload)
        best = advice.best
        if best is None:
            print(
                f"| {card.id} | {_ms(now.p99_ms)}, ${now_cost.usd_per_hour:,.2f} | none | | | "
                f"| {advice.simulations} |"
            )
            continue
        p99 = _ms(best.p99_ms) + (" (simulated)" if best.is_simulated else "")
        if not advice.complete:
            p99 += f" ({advice.unsettled} configurations unsettled)"
        print(
            f"| {card.id} | {_ms(now.p99_ms)}, ${now_cost.usd_per_hour:,.2f} | {best.label} | "
            f"{p99} | ${best.cost.usd_per_hour:,.2f} | ${best.cost.usd_per_million:,.3f} | "
            f"{advice.simulations} |"
        )


def lever_table(query: str, workload: Workload) -> None:
    result = judge(workload)
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
            f"{lever.delta_usd_per_hour:+,.2f} | {_verdict(lever.meets_target)} |"
        )


def _verdict(meets: bool | None) -> str:
    return "not checked (model ≈)" if meets is None else ("yes" if meets else "no")


def main() -> None:
    start = time.perf_counter()
    cards()
    lever_table("?model=queueing (defaults)", Workload())
    lever_table("?rate_rps=5000&replicas=10", Workload(rate_rps=5000, replicas=10))
    print(f"\n({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
