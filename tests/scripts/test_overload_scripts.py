"""``scripts/goodput_curve.py`` prints the goodput table the model computes, and the storm."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sdlab_model import Workload
from sdlab_model.overload import OverloadPolicy, goodput_curve

ROOT = Path(__file__).resolve().parents[2]


def _run(*arguments: str) -> str:
    result = subprocess.run(
        [sys.executable, "scripts/goodput_curve.py", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout


def test_the_goodput_table_is_the_models():
    out = _run()
    workload = Workload(
        dynamic_batching=False,
        gpu=False,
        cpu_workers_per_replica=16,
        model_latency_ms=20.0,
        p99_target_ms=100.0,
        replicas=2,
        lb_policy="random",
    )
    curve = goodput_curve(workload, OverloadPolicy())
    three = [r.goodput_rps for r in (curve.results[n][-1] for n in curve.results)][:3]
    row = next(line for line in out.splitlines() if line.startswith("| 3x"))
    assert row.startswith(
        f"| 3x (4,800 req/s) | {three[0]:,.0f} | {three[1]:,.0f} | {three[2]:,.0f}"
    )
    assert "Second (storm) fixed points: 0." in out, "a storm where the limit holds"


def test_a_deadline_without_a_limit_shows_the_storm():
    out = _run("--deadline-only")
    assert "fresh 0.75x: attempts can also settle at 4,800 req/s" in out, out[-600:]
