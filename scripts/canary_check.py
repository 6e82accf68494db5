#!/usr/bin/env python3
"""Canary detection times against a Monte Carlo of the test they come from (issue 14, must-show 4).

For each case (a workload and a rollout plan) and each step that still has a baseline, the
analytic time to detect a regression (``sdlab_model.timeline.canary.detection_seconds``) is set
against ``--trials`` simulated canaries of the same one-sided two-proportion z-test
(``monte_carlo_power``): the simulated power at that time, a tenth earlier and a tenth later, and
the window where the simulated power reaches the stated power. "ok" means the test reaches its
power within 10% of the time shown.

    python3 scripts/canary_check.py                   # 10,000 canaries per point, seed 0
    python3 scripts/canary_check.py --trials 1000 --seed 7   # the issue's 1,000: noisier

The unit test (tests/sdlab_model/timeline/test_canary.py) checks the same on another seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.timeline.canary import CanaryPlan, check_detection, plan_rollout
from sdlab_model.workload import Workload

CASES = (
    ("default lab, own replicas", Workload(), CanaryPlan()),
    (
        "3,000 req/s on 10 CPU replicas, shared, 10% shadow",
        Workload(rate_rps=3000, replicas=10),
        CanaryPlan(placement="shared", shadow_share=0.10),
    ),
    (
        "20,000 req/s on 40 unbatched replicas, stricter test and other regressions",
        Workload(rate_rps=20_000, replicas=40, dynamic_batching=False),
        CanaryPlan(regressed_error_rate=0.0015, p99_regression=0.5, confidence=0.98, power=0.9),
    ),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10_000, help="simulated canaries per point")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    started = time.perf_counter()
    header = (
        f"{'test':<10} {'share':>6} {'canary r/s':>10} {'base r/s':>9} {'time (s)':>10} "
        f"{'MC crosses':>10} {'gap':>6} {'MC@0.9T':>7} {'MC@T':>6} {'MC@1.1T':>7}  verdict"
    )
    failures = 0
    for title, workload, plan in CASES:
        rollout = plan_rollout(workload, plan)
        print(
            f"\n{title}: confidence {plan.confidence:.0%}, power {plan.power:.0%}, errors "
            f"{plan.baseline_error_rate:.2%} → {plan.regressed_error_rate:.2%}, "
            f"p99 +{plan.p99_regression:.0%}"
        )
        print(header)
        for step in rollout.steps:
            for detection in (step.error_detection, step.latency_detection):
                if detection.seconds is None:
                    print(f"{detection.test:<10} {step.share:>6.0%}  — {detection.note}")
                    continue
                check = check_detection(
                    detection, plan.confidence, plan.power, trials=options.trials, seed=options.seed
                )
                failures += not check.is_confirmed
                verdict = "ok" if check.is_confirmed else "NOT within 10%"
                if detection.is_rough:
                    bad = detection.canary_requests * detection.regressed_share
                    verdict += f" (rough: {bad:.1f} bad requests)"
                print(
                    f"{detection.test:<10} {step.share:>6.0%} {detection.canary_rate_rps:>10.4g} "
                    f"{detection.baseline_rate_rps:>9.4g} {detection.seconds:>10.4g} "
                    f"{check.crossing_s:>10.4g} {check.crossing_s / detection.seconds - 1:>+6.1%} "
                    f"{check.power_before:>7.3f} {check.power_at_time:>6.3f} "
                    f"{check.power_after:>7.3f}  {verdict}"
                )
    print(
        f"\n{options.trials:,} simulated canaries per point, seed {options.seed}; "
        f"{failures} detection time(s) not confirmed within 10%; "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
