"""Overload, analytic against simulation, out of sample (issue 24, must-show 1, shedding half).

The analytic model (``sdlab_model.overload.overload``) beside the event-driven simulation
(``simulate_overload``) on three grids: the tuning grid, where ``shedding.KAPPA`` and the flag
rule (``analytic.flag_reason``) were set; the test grid, other designs, limits, deadlines and
loads, whose one miss added one flag rule; and the held-out grid, made after that rule and only
reported. Measures: the share turned away unserved (rejected or timed out),
the served p99 and the goodput. Tolerance 5% unbatched, 15% batched; a flagged point is not held
to it; an unflagged point beyond it is a miss.

    python3 scripts/overload_check.py [--grid test|tuning|heldout|both|all] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.overload.validation import (
    HELD_OUT_GRID,
    TEST_GRID,
    TUNING_GRID,
    CheckRow,
    check_overload,
)


def _row(row: CheckRow) -> str:
    a, s = row.analytic, row.simulated
    shed = a.rejected_share + a.timed_out_share
    sim_shed = s["rejected_share"].estimate + s["timed_out_share"].estimate
    errors = " | ".join(f"{e:.1%}" for e in row.errors.values())
    verdict = "flagged" if row.flagged else ("miss" if row.miss else "ok")
    converged = "" if s.converged else " (sim not converged)"
    return (
        f"| {row.point.label} | {a.attempt_rps / a.capacity_rps:.2f} | {shed:.4f} | {sim_shed:.4f} "
        f"| {a.served_p99_ms:.2f} | {s['served_p99_ms'].estimate:.2f} | {a.goodput_rps:.1f} "
        f"| {s['goodput_rps'].estimate:.1f} | {errors} | {verdict}{converged} |"
    )


def report(name: str, rows: tuple[CheckRow, ...]) -> None:
    print(f"## {name} grid ({len(rows)} points)\n")
    print(
        "| point | attempts/capacity | shed (model) | shed (sim) | p99 ms (model) | p99 ms (sim) "
        "| goodput (model) | goodput (sim) | err shed | err p99 | err goodput | verdict |"
    )
    print("|" + "---|" * 12)
    for row in rows:
        print(_row(row))
    unflagged = [r for r in rows if not r.flagged]
    worst = max((r.worst_error for r in unflagged), default=0.0)
    misses = [r for r in rows if r.miss]
    flagged = sum(r.flagged for r in rows)
    print(
        f"\n{name}: max error of unflagged points {worst:.1%}; flagged {flagged} of {len(rows)}; "
        f"unflagged misses {len(misses)}"
        + (": " + "; ".join(r.point.label for r in misses) if misses else "")
        + f"; simulations not converged {sum(not r.simulated.converged for r in rows)}.\n"
    )
    for row in rows:
        if row.flagged:
            print(f"- flagged {row.point.label}: {row.analytic.flagged_because}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--grid", choices=("test", "tuning", "heldout", "both", "all"), default="all"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.grid in ("tuning", "both", "all"):
        report("Tuning", check_overload(TUNING_GRID, args.seed))
    if args.grid in ("test", "both", "all"):
        report("Test", check_overload(TEST_GRID, args.seed))
    if args.grid in ("heldout", "all"):
        report("Held-out", check_overload(HELD_OUT_GRID, args.seed))


if __name__ == "__main__":
    main()
