#!/usr/bin/env python3
"""Peak memory of one "Simulate this timeline" press at the check's largest size.

    PYTHONPATH=. python3 scripts/timeline_memory.py [--rate-rps 50000] [--policy random]
        [--max-requests 30000000]

Builds the Timeline page's inputs as the URL ``/timeline?rate_rps=50000&lb_policy=random&
tl.traffic=constant&tl.duration_s=600`` does (every other input at its default: 30M requests,
of which the check simulates its cap's worth; ``--max-requests`` changes the cap), runs the
time-stepped model, then the simulator check, in a fresh process.
Printed: the process's peak RSS after the model's run and after the check (``ru_maxrss``), the
check's own rise of the peak, and its wall time. The first run of a process also loads numba's
compiled kernels, so the check runs once on a tiny timeline (100 req/s for a minute) first.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model.timeline import run_timeline
from sdlab_model.timeline.check import simulate_timeline
from sdlab_model.workload import Workload
from sdlab_ui.timeline import controls


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate-rps", default="50000")
    parser.add_argument("--policy", default="random")
    parser.add_argument("--duration-s", default="600")
    parser.add_argument(
        "--max-requests", type=int, default=None,
        help="the check's cap (default: the page's, MAX_SIMULATED_REQUESTS)",
    )  # fmt: skip
    args = parser.parse_args()
    workload, _ = Workload.from_strings({"rate_rps": args.rate_rps, "lb_policy": args.policy})
    values, _ = controls.parse_params(
        {"traffic": "constant", "duration_s": args.duration_s}, workload
    )
    inputs, problem = controls.build_inputs(values, workload)
    if inputs is None:
        print(problem)
        return 1
    tiny = replace(inputs, workload=workload.with_changes(rate_rps=100.0), duration_s=60.0)
    tiny = replace(tiny, traffic=replace(tiny.traffic, base_rate_rps=100.0))
    simulate_timeline(run_timeline(tiny), seed=0)  # numba's kernels load here, not below
    result = run_timeline(inputs)
    before = _peak_mb()
    started = time.perf_counter()
    check = simulate_timeline(result, seed=0, max_requests=args.max_requests)
    seconds = time.perf_counter() - started
    after = _peak_mb()
    print(
        f"{args.policy}, {args.rate_rps} req/s for {args.duration_s} s: "
        f"{check.requests:,} requests simulated in {seconds:.1f} s; peak RSS {before:.0f} MB "
        f"before the check, {after:.0f} MB after (+{after - before:.0f} MB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
