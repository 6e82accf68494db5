#!/usr/bin/env python3
"""How fast is the canary planner? ``plan_rollout`` before issue 26's speed-up and now.

    PYTHONPATH=. python3 scripts/bench_canary.py [--repeats 5] [--sample 30] [--seed 0]
    PYTHONPATH=. python3 scripts/bench_canary.py --search 300   # look for a slower plan

"Before" is ``sdlab_model/timeline/canary.py`` as it was at ``BEFORE`` (read with ``git show``,
run as a module of its own); "now" is the working tree's. For the default plan on the Lab's
default workload, the slowest plan found so far (``WORST``, also the unit test's), and
``--sample`` random plans over the panel's input ranges (seeded), it prints the thread CPU time
of one ``plan_rollout`` (median and least of ``--repeats``, after one warm-up call) and the
largest difference between the two versions' detection times.

``--search N`` draws N random plans (10 steps, random workloads) and prints the slowest few
with the current code (the slowest ten timed again): the way ``WORST`` was found.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sdlab_model.timeline import canary  # noqa: E402
from sdlab_model.timeline.canary import CanaryPlan  # noqa: E402
from sdlab_model.workload import Workload  # noqa: E402

BEFORE = "fc35aed"
"""The commit whose ``canary.py`` is the "before": the planner as issue 26 found it."""

WORST_WORKLOAD = Workload(rate_rps=5873, replicas=7)
WORST = CanaryPlan(
    step_shares=(0.0001, 0.0002, 0.0005, 0.0009, 0.0056, 0.0358, 0.0624, 0.2198, 0.8274, 0.9701),
    baseline_error_rate=3.425278850733641e-05,
    regressed_error_rate=0.0003315043432272103,
    p99_regression=1.270868185306168,
    confidence=0.845466107605293,
    power=0.5698691880444166,
)
"""The slowest plan ``--search`` found (seeds 0 to 3, 1,000 plans, the slowest timed again):
ten steps, most with a few bad canary requests, where each detection time is a bisection."""


def old_canary():
    """``canary.py`` at ``BEFORE``, imported as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:sdlab_model/timeline/canary.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "canary_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("canary_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["canary_before"] = module
    spec.loader.exec_module(module)
    return module


def random_plan(rng: random.Random, steps: int | None = None) -> tuple[Workload, CanaryPlan]:
    """A workload and plan drawn over the panel's ranges (log-uniform where they span decades)."""
    count = steps or rng.randint(1, canary.MAX_STEPS)
    shares = sorted({round(10 ** rng.uniform(-4, 0), 4) for _ in range(count)})
    baseline = 10 ** rng.uniform(-6, math.log10(0.5))
    regressed = min(0.999, baseline * (1 + 10 ** rng.uniform(-1.5, 1.3)))
    workload = Workload(
        rate_rps=round(10 ** rng.uniform(0, 5.7)),
        replicas=round(10 ** rng.uniform(0, 2.7)),
        gpu=rng.random() < 0.3,
        dynamic_batching=rng.random() < 0.7,
    )
    plan = CanaryPlan(
        step_shares=tuple(shares),
        window_s=1800.0,
        placement=rng.choice(("own", "shared")),
        shadow_share=rng.choice((0.0, 0.0, round(rng.uniform(0, 1), 2))),
        baseline_error_rate=baseline,
        regressed_error_rate=regressed,
        p99_regression=10 ** rng.uniform(-2, math.log10(3)),
        confidence=rng.uniform(0.5, 0.999),
        power=rng.uniform(0.5, 0.999),
    )
    return workload, plan


def cpu_ms(module, workload: Workload, plan: CanaryPlan, repeats: int) -> list[float]:
    module.plan_rollout(workload, plan)
    times = []
    for _ in range(repeats):
        started = time.thread_time()
        module.plan_rollout(workload, plan)
        times.append((time.thread_time() - started) * 1e3)
    return times


def seconds_of(rollout) -> list[float]:
    return [
        detection.seconds
        for step in rollout.steps
        for detection in (step.error_detection, step.latency_detection)
        if detection.seconds is not None
    ]


def largest_gap(before, workload: Workload, plan: CanaryPlan) -> float:
    old = seconds_of(before.plan_rollout(workload, plan))
    new = seconds_of(canary.plan_rollout(workload, plan))
    return max((abs(n / o - 1.0) for o, n in zip(old, new, strict=True)), default=0.0)


def search(count: int, seed: int) -> None:
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        workload, plan = random_plan(rng, steps=canary.MAX_STEPS)
        found.append((min(cpu_ms(canary, workload, plan, 2)), workload, plan))
    found.sort(key=lambda item: -item[0])
    # One slow run can be another process's doing: time the slowest ten again before ranking.
    found = [(min(cpu_ms(canary, w, p, 5)), w, p) for _, w, p in found[:10]]
    found.sort(key=lambda item: -item[0])
    for spent, workload, plan in found[:5]:
        print(f"{spent:8.1f} ms  {workload.rate_rps} req/s, {workload.replicas} replicas: {plan}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sample", type=int, default=30, help="random plans to time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--search", type=int, default=0, help="random plans to search instead")
    options = parser.parse_args()
    if options.search:
        search(options.search, options.seed)
        return 0
    before = old_canary()
    print(f"{'case':<24} {'before ms (least)':>18} {'now ms (least)':>16} {'gap':>7}")
    cases = [
        ("default plan, Lab", Workload(), CanaryPlan()),
        ("worst found", WORST_WORKLOAD, WORST),
    ]
    for title, workload, plan in cases:
        old = cpu_ms(before, workload, plan, options.repeats)
        new = cpu_ms(canary, workload, plan, options.repeats)
        print(
            f"{title:<24} {statistics.median(old):>9.1f} ({min(old):6.1f}) "
            f"{statistics.median(new):>7.1f} ({min(new):6.1f}) "
            f"{largest_gap(before, workload, plan):>7.2%}"
        )
    rng = random.Random(options.seed)
    old_times, new_times, gaps = [], [], []
    for _ in range(options.sample):
        workload, plan = random_plan(rng)
        old_times.append(min(cpu_ms(before, workload, plan, 1)))
        new_times.append(min(cpu_ms(canary, workload, plan, 1)))
        gaps.append(largest_gap(before, workload, plan))
    if options.sample:
        print(
            f"{options.sample} random plans (seed {options.seed}): before median "
            f"{statistics.median(old_times):.1f} ms, max {max(old_times):.1f}; now median "
            f"{statistics.median(new_times):.1f} ms, max {max(new_times):.1f}; detection times "
            f"within {max(gaps):.2%} (over 0.5% in {sum(gap > 0.005 for gap in gaps)} plans)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
