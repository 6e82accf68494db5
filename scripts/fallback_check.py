"""The fallback model against its simulation, out of sample (issue 24, Degradation).

``with_fallback`` beside ``simulate_fallback`` on the tuning grid, where the flag rule was set,
and the held-out grid, made after it and only reported. Held to 5% unbatched / 15% batched:
the shares answered by the fallback and lost, the p99 of every answer, the goodput. The
fallback path's own p99 is reported with its error, held to nothing (a Poisson overflow).

    python3 scripts/fallback_check.py [--grid tuning|heldout|all] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.overload.fallback_simulate import overflow_dispersion
from sdlab_model.overload.fallback_validation import (
    HELD,
    HELD_OUT_GRID,
    REPORTED,
    TUNING_GRID,
    FallbackRow,
    check_fallback,
)

COLUMNS = ("fallback_share", "lost_share", "answered_p99_ms", "goodput_rps", "fallback_p99_ms")


def _row(row: FallbackRow) -> str:
    a, s = row.analytic, row.simulated
    cells = " | ".join(f"{getattr(a, c):.4g} / {s[c].estimate:.4g}" for c in COLUMNS)
    errors = " | ".join(f"{row.errors[c]:.1%}" for c in (*HELD, *REPORTED))
    verdict = "flagged" if row.flagged else ("miss" if row.miss else "ok")
    converged = "" if s.converged else " (sim not converged)"
    return f"| {row.point.label} | {cells} | {errors} | {verdict}{converged} |"


def report(name: str, rows: tuple[FallbackRow, ...]) -> None:
    print(f"## {name} grid ({len(rows)} points)\n")
    heads = " | ".join(f"{c} (model / sim)" for c in COLUMNS)
    errs = " | ".join(f"err {c}" for c in (*HELD, *REPORTED))
    print(f"| point | {heads} | {errs} | verdict |")
    print("|" + "---|" * (2 + len(COLUMNS) + len(HELD) + len(REPORTED)))
    for row in rows:
        print(_row(row))
    unflagged = [r for r in rows if not r.flagged]
    worst = max((r.worst_error for r in unflagged), default=0.0)
    misses = [r for r in rows if r.miss]
    worst_fb = max(
        (r.errors["fallback_p99_ms"] for r in rows if r.analytic.fallback_share > 0), default=0.0
    )
    print(
        f"\n{name}: max held error of unflagged points {worst:.1%}; flagged "
        f"{sum(r.flagged for r in rows)} of {len(rows)}; unflagged misses {len(misses)}"
        + (": " + "; ".join(r.point.label for r in misses) if misses else "")
        + f"; fallback p99 (reported) worst error {worst_fb:.1%}"
        + f"; simulations not converged {sum(not r.simulated.converged for r in rows)}.\n"
    )
    for row in rows:
        if row.flagged:
            print(f"- flagged {row.point.label}: {row.analytic.flagged_because}")
    print()


def dispersion_report() -> None:
    """How bursty the overflow is: the tuning grid's primary (K=8) at 1.2x and 2x."""
    point = TUNING_GRID[0]
    print("## The overflow's index of dispersion (1: Poisson)\n")
    print("| fresh load | 1 ms | 5 ms | 20 ms | 100 ms |")
    print("|---|---|---|---|---|")
    for multiple in (1.2, 2.0):
        rate = multiple * point.fresh_rps / point.multiple
        values = overflow_dispersion(point.workload, point.policy, rate)
        print(f"| {multiple:g}x | " + " | ".join(f"{v:.2f}" for v in values.values()) + " |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=("tuning", "heldout", "all"), default="all")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.grid in ("tuning", "all"):
        report("Tuning", check_fallback(TUNING_GRID, args.seed))
    if args.grid in ("heldout", "all"):
        report("Held-out", check_fallback(HELD_OUT_GRID, args.seed))
    if args.grid == "all":
        dispersion_report()


if __name__ == "__main__":
    main()
