"""The tail at scale (issue 24, must-shows 2 to 4): the paper's figures beside the model's.

1. The paper's arithmetic: the share of requests that wait on a slow leaf, ``1 - (1 - p)^N``.
2. Table 1: a leaf fitted to its first row only (one random leaf, p50/p95/p99 = 1/5/10 ms),
   fanned out to the fan-out assumed before comparing (100, the paper's worked example); the
   predicted "95% of leaves" and "all leaves" rows beside the published ones, with the error,
   the exact order statistics checked by the Monte Carlo. A scan over other fan-outs follows,
   labelled as a scan: it is not how the fan-out was chosen.
3. Hedging at the leaf p95: the share of requests hedged (the paper's "about 5%"), the extra
   work, and the p99 / p99.9 before and after for one leaf and for the fanned-out request,
   analytic and simulated (95% intervals).
4. The hedges' load fed back into the leaves (``hedge_under_load``, its assumptions in
   ``sdlab_model/tail/load.py``) over the leaves' utilization before hedging.
5. Tied requests (``tie``, its assumptions in ``sdlab_model/tail/tied.py``): on an M/M/1 leaf,
   one copy, hedged at the p95 and tied after 1 ms, analytic and simulated at a few fan-outs,
   with the extra service work each costs; the paper's Table 2 beside, for scale.

Source: J. Dean, L. A. Barroso, "The Tail at Scale", CACM 56(2), 74-80, 2013.

    python3 scripts/tail_at_scale.py [--requests 200000] [--seed 1] [--tied-only]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.tail import (
    QueuedLeaf,
    TiedLeaf,
    fanout_quantiles,
    hedge,
    hedge_under_load,
    simulate_tail,
    simulate_tied,
    simulate_tied_fleet,
    slow_request_probability,
    tie,
)
from sdlab_model.tail.paper import (
    ASSUMED_FANOUT,
    HEDGE_EXTRA_LOAD,
    HEDGE_QUANTILE,
    SLOW_EXAMPLES,
    TABLE_1_95_PERCENT,
    TABLE_1_ALL,
    TABLE_1_ONE_LEAF,
    TABLE_1_QUANTILES,
    TABLE_2_IDLE,
    TABLE_2_QUANTILES,
    TABLE_2_TERASORT,
    TIED_DISK_OVERHEAD,
    predict_table_1,
)
from sdlab_model.tail.simulate import SimQuantile
from sdlab_model.tail.tied import MESSAGE_SHARE_OF_DELAY, PAPER_TIE_DELAY_MS

SCAN_FANOUTS = (10, 100, 300, 1000, 2000, 5000)
BASE_UTILIZATIONS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8)
HEDGE_QUANTILES = (0.99, 0.999)
TIED_MEDIAN_MS = TABLE_2_IDLE[0][0]
"""The tied section's M/M/1 leaf has Table 2's untied median (19 ms); it is not fitted to the
rest of the row (an exponential's p99.9 is ten times its median, Table 2's five)."""
TIED_UTILIZATIONS = (0.5, 0.8)
TIED_FANOUTS = (1, 10, 100)
FLEET_SERVERS = 20
FLEET_REQUESTS = 200_000


def _interval(sim: SimQuantile) -> str:
    """A simulated quantile as ``estimate [low, high]``."""
    return f"{sim.estimate:.2f} [{sim.low:.2f}, {sim.high:.2f}]"


def arithmetic() -> None:
    """Print the paper's slow-request shares against ``1 - (1 - p)^N``."""
    print("## 1. The paper's arithmetic: P(request slow) = 1 - (1 - p)^N\n")
    print("| leaf slow with p | fan-out N | computed | published |")
    print("| ---: | ---: | ---: | ---: |")
    for p, fanout, published in SLOW_EXAMPLES:
        computed = slow_request_probability(p, fanout)
        print(f"| {p:g} | {fanout:,} | {computed:.4f} | {published:.2f} |")


def table_1(requests: int, seed: int) -> None:
    """Print Table 1 predicted from its first row at the assumed fan-out, and a fan-out scan."""
    prediction = predict_table_1()
    leaf, fanout = prediction.leaf, prediction.fanout
    print(f"\n## 2. Table 1 from its first row, fan-out {fanout} (assumed a priori)\n")
    print(
        f"Leaf fit: lognormal body (median {leaf.median_ms:g} ms, sigma {leaf.sigma:.4f}) up to "
        f"the p95 ({leaf.splice_ms:g} ms), Pareto tail above it (index {leaf.tail_index:.4f}); "
        "fitted p50/p95/p99 = "
        + "/".join(f"{leaf.quantile(q):.4g}" for q in TABLE_1_QUANTILES)
        + " ms (published 1/5/10)."
    )
    errors = prediction.errors()
    print("\n| row | quantile | published (ms) | predicted (ms) | error | simulated [95%] |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    rows = (
        ("one random leaf", TABLE_1_ONE_LEAF, 1, 1.0),
        ("95% of leaves", TABLE_1_95_PERCENT, fanout, 0.95),
        ("all leaves", TABLE_1_ALL, fanout, 1.0),
    )
    for label, published, leaves, share in rows:
        predicted = fanout_quantiles(leaf, leaves, TABLE_1_QUANTILES, done_share=share)
        sim = simulate_tail(leaf, leaves, requests, seed, done_share=share)
        for q, value in zip(TABLE_1_QUANTILES, published, strict=True):
            print(
                f"| {label} | p{q * 100:g} | {value:g} | {predicted[q]:.2f} "
                f"| {predicted[q] / value - 1.0:+.0%} | {_interval(sim.quantiles[q])} |"
            )
    worst = max(abs(error) for row in errors.values() for error in row.values())
    print(f"\nLargest error at fan-out {fanout}: {worst:.0%}.")
    print("\nScan over the fan-out (not how it was chosen): error of each predicted cell.\n")
    print("| fan-out | 95%: p50 / p95 / p99 | all: p50 / p95 / p99 |")
    print("| ---: | --- | --- |")
    for scan in SCAN_FANOUTS:
        scanned = predict_table_1(scan).errors()
        cells = [
            " / ".join(f"{scanned[row][q]:+.0%}" for q in TABLE_1_QUANTILES) for row in scanned
        ]
        print(f"| {scan:,} | {cells[0]} | {cells[1]} |")


def hedging(requests: int, seed: int) -> None:
    """Print hedging at the leaf p95: share hedged, extra work, tail before and after."""
    leaf = predict_table_1().leaf
    delay = leaf.quantile(HEDGE_QUANTILE)
    print(f"\n## 3. Hedging at the leaf p95 ({delay:g} ms), the Table 1 leaf\n")
    for fanout in (1, ASSUMED_FANOUT):
        outcome = hedge(leaf, delay, fanout, HEDGE_QUANTILES)
        count = requests if fanout > 1 else 10 * requests  # one leaf is cheap: more draws
        plain = simulate_tail(leaf, fanout, count, seed, quantiles=HEDGE_QUANTILES)
        hedged = simulate_tail(leaf, fanout, count, seed + 1, delay, quantiles=HEDGE_QUANTILES)
        print(f"Fan-out {fanout} ({count:,} simulated requests):")
        print(
            f"- share of leaf requests hedged: {outcome.hedged_share:.2%} analytic, "
            f"{hedged.hedged_share:.2%} simulated (the paper: about {HEDGE_EXTRA_LOAD:.0%})"
        )
        print(
            f"- extra work (a copy's latency as its work, cancelling instant): "
            f"{outcome.extra_work:+.2%} analytic, {hedged.extra_work:+.2%} simulated"
        )
        print(
            "\n| quantile | before, analytic | after, analytic | factor | before, simulated "
            "| after, simulated | factor, simulated |"
        )
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for q in HEDGE_QUANTILES:
            before, after = plain.quantiles[q], hedged.quantiles[q]
            print(
                f"| p{q * 100:g} | {outcome.request_before[q]:.1f} | "
                f"{outcome.request_after[q]:.1f} | {outcome.reduction(q, fanout > 1):.2f} | "
                f"{_interval(before)} | {_interval(after)} | "
                f"{before.estimate / after.estimate:.2f} "
                f"[{before.low / after.high:.2f}, {before.high / after.low:.2f}] |"
            )
        print()


def feedback() -> None:
    """Print the hedges' load fed back into the leaves over their utilization before hedging."""
    leaf = predict_table_1().leaf
    delay = leaf.quantile(HEDGE_QUANTILE)
    print(
        f"## 4. The hedges' load fed back (fan-out {ASSUMED_FANOUT}, delay fixed at {delay:g} ms)"
    )
    print(
        "\nThe leaf is the fitted one at the utilization before hedging; latencies scale as an "
        "M/M/1's, by (1 - before) / (1 - after); every copy sent is served.\n"
    )
    print(
        "| utilization before | after | latency scale | hedged | p99.9 unhedged (before) | "
        "hedged, idle leaves | hedged, loaded |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for base in BASE_UTILIZATIONS:
        loaded = hedge_under_load(leaf, delay, ASSUMED_FANOUT, base)
        after = f"{loaded.utilization:.3f}" if loaded.stable else "≥ 1: no steady state"
        share = f"{loaded.hedged_share:.1%}" if loaded.stable else "runs away"
        print(
            f"| {base:g} | {after} | {loaded.scale:.3f} | {share} | "
            f"{loaded.unhedged[0.999]:.1f} | {loaded.hedged_unloaded[0.999]:.1f} | "
            f"{loaded.hedged_loaded[0.999]:.1f} |"
        )


def _table_2() -> None:
    print("The paper's Table 2 (a BigTable read, tied after 1 ms), for scale, not fitted:\n")
    print("| | idle, no hedge | idle, tied | terasort, no hedge | terasort, tied |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for column, q in enumerate(TABLE_2_QUANTILES):
        cells = [rows[k][column] for rows in (TABLE_2_IDLE, TABLE_2_TERASORT) for k in (0, 1)]
        print(f"| p{q * 100:g} | " + " | ".join(f"{c:g} ms" for c in cells) + " |")
    print(f"\nDisk overhead of tying: under {TIED_DISK_OVERHEAD:.0%} (the paper).\n")


def tied(requests: int, seed: int) -> None:
    """Print tied requests beside one copy and hedging, analytic and simulated."""
    delay = PAPER_TIE_DELAY_MS
    print(
        f"\n## 5. Tied requests after {delay:g} ms (message delay "
        f"{MESSAGE_SHARE_OF_DELAY * delay:g} ms), M/M/1 leaves with median {TIED_MEDIAN_MS:g} ms\n"
    )
    _table_2()
    print(
        "| utilization | fan-out | p99.9 one copy | hedged at p95 | tied, analytic | "
        "tied, simulated [95%] | extra work: hedged (bound) | tied, analytic | tied, simulated |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for rho in TIED_UTILIZATIONS:
        leaf = QueuedLeaf.with_median(TIED_MEDIAN_MS, rho)
        tied_leaf = TiedLeaf(leaf, delay, MESSAGE_SHARE_OF_DELAY * delay)
        for fanout in TIED_FANOUTS:
            outcome = tie(leaf, fanout, delay, HEDGE_QUANTILE, HEDGE_QUANTILES)
            count = requests if fanout > 1 else 10 * requests
            sim = simulate_tied(tied_leaf, fanout, count, seed, quantiles=HEDGE_QUANTILES)
            print(
                f"| {rho:g} | {fanout:,} | {outcome.single[0.999]:.1f} | "
                f"{outcome.hedged[0.999]:.1f} | {outcome.tied[0.999]:.1f} | "
                f"{_interval(sim.quantiles[0.999])} | {outcome.hedged_extra_work:.1%} | "
                f"{outcome.tied_extra_work:.2%} | {sim.duplicated_share:.2%} |"
            )
    fleet(seed)


def fleet(seed: int) -> None:
    """Print one leaf request, tied, in a fleet of FCFS leaves against the closed form."""
    print(
        f"\nThe independent-waits assumption checked: {FLEET_SERVERS} FCFS M/M/1 leaves, every "
        f"request tied across two of them, {FLEET_REQUESTS:,} requests (one leaf request each; "
        "the fan-out arithmetic on top is the same):\n"
    )
    print(
        "| utilization | tie after | p99 closed form | p99 fleet [95%] | p99.9 closed form | "
        "p99.9 fleet [95%] | duplicated, closed form | fleet | leaves busy in the fleet |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for rho in TIED_UTILIZATIONS:
        leaf = QueuedLeaf.with_median(TIED_MEDIAN_MS, rho)
        for delay in (PAPER_TIE_DELAY_MS, 0.2):
            message = MESSAGE_SHARE_OF_DELAY * delay
            tied_leaf = TiedLeaf(leaf, delay, message)
            run = simulate_tied_fleet(
                FLEET_SERVERS, leaf.service_ms, rho, FLEET_REQUESTS, seed, delay, message
            )
            print(
                f"| {rho:g} | {delay:g} ms | {tied_leaf.quantile(0.99):.1f} | "
                f"{_interval(run.quantiles[0.99])} | {tied_leaf.quantile(0.999):.1f} | "
                f"{_interval(run.quantiles[0.999])} | {tied_leaf.duplicated_share():.2%} | "
                f"{run.duplicated_share:.2%} | {run.utilization:.3f} |"
            )


def main() -> None:
    """Print the five sections (``--tied-only``: the fifth)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--requests", type=int, default=200_000, help="simulated fanned-out requests"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tied-only", action="store_true", help="only the tied requests")
    args = parser.parse_args()
    if args.tied_only:
        tied(args.requests, args.seed)
        return
    arithmetic()
    table_1(args.requests, args.seed)
    hedging(args.requests, args.seed)
    feedback()
    tied(args.requests, args.seed)


if __name__ == "__main__":
    main()
