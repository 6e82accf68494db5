#!/usr/bin/env python3
"""CPU time of one fresh ``evaluate`` (every cache missed), this checkout against a baseline.

    python3 scripts/bench_evaluate.py --baseline DIR [--rounds 3]

``DIR`` is another checkout of the project (e.g. ``git worktree add /tmp/base main``), whose
``sdlab_model`` is the "before". Two sets of workloads:

- ``rates``: the default ``Workload()`` at 300 rates, ``np.linspace(100, 2500, 300)`` (the set
  the speed-ups were profiled on);
- ``random``: 200 workloads from ``evaluate_golden.random_workloads`` with seed 7 (batching on
  and off, CPU and GPU, every balancer policy; not used for tuning).

Each call is ``evaluate(workload, "queueing")`` or ``evaluate(workload, "teaching")`` on a workload
not seen before in that process (each round nudges every rate by a relative 1e-9 times the
round, so the memos in ``sdlab_model.assessment`` miss), timed by the process's CPU clock. Each
side runs in its own process, the two alternating round by round so that machine noise hits both
alike; the median and the mean ms per call over every round are printed for both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RANDOM_SEED = 7
RANDOM_COUNT = 200
MODELS = ("queueing", "teaching")


def _workload_sets() -> dict[str, list]:
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from evaluate_golden import random_workloads

    from sdlab_model.workload import Workload

    rates = [Workload(rate_rps=float(rate)) for rate in np.linspace(100, 2500, 300)]
    return {"rates": rates, "random": random_workloads(RANDOM_COUNT, RANDOM_SEED)}


def _worker(round_index: int) -> None:
    """Time every call of one round in this process; print ``{set: {model: [ms, ...]}}``."""
    from sdlab_model import evaluate
    from sdlab_model.workload import Workload

    for rate in (150.0, 1500.0, 3.0e4):  # imports, numba kernels, tables: not a fresh call's cost
        for gpu in (False, True):
            for batching in (False, True):
                warm = Workload(rate_rps=rate, gpu=gpu, dynamic_batching=batching)
                for model in MODELS:
                    evaluate(warm, model)
    nudge = 1e-9 * (round_index + 1)
    times: dict[str, dict[str, list[float]]] = {}
    for name, workloads in _workload_sets().items():
        times[name] = {}
        for model in MODELS:
            spent = []
            for workload in workloads:
                rate = workload.rate_rps
                # Down, except at the slider's minimum (1 req/s); up from there.
                fresh = workload.with_changes(
                    rate_rps=rate * (1.0 + (nudge if rate < 2 else -nudge))
                )
                start = time.process_time()
                evaluate(fresh, model)
                spent.append((time.process_time() - start) * 1e3)
            times[name][model] = spent
    print(json.dumps(times))


def _run_side(checkout: Path, round_index: int) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(round_index)]
    environment = {"PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1"}
    completed = subprocess.run(
        command, env={**os.environ, **environment}, capture_output=True, text=True, check=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="checkout holding the 'before' code")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        _worker(args.worker)
        return
    sides = {"before": args.baseline, "after": ROOT} if args.baseline else {"after": ROOT}
    collected: dict[str, dict[str, dict[str, list[float]]]] = {side: {} for side in sides}
    for round_index in range(args.rounds):
        for side, checkout in sides.items():
            for name, by_model in _run_side(checkout.resolve(), round_index).items():
                for model, spent in by_model.items():
                    collected[side].setdefault(name, {}).setdefault(model, []).extend(spent)
    print(f"fresh evaluate, CPU ms per call ({args.rounds} rounds, each side its own process)")
    print(f"{'set':<8} {'model':<9} " + " ".join(f"{side + ' median/mean':>22}" for side in sides))
    for name in ("rates", "random"):
        for model in MODELS:
            cells = []
            for side in sides:
                spent = collected[side][name][model]
                cells.append(f"{statistics.median(spent):>10.3f} /{statistics.fmean(spent):>9.3f}")
            ratio = ""
            if "before" in sides:
                before = statistics.median(collected["before"][name][model])
                after = statistics.median(collected["after"][name][model])
                ratio = f"   median after/before {after / before:.2f}"
            print(f"{name:<8} {model:<9} " + " ".join(f"{cell:>22}" for cell in cells) + ratio)


if __name__ == "__main__":
    main()
