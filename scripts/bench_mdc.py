#!/usr/bin/env python3
"""The exact M/D/c solve before (dense LU) and after (GTH state reduction), and the Lab's view.

    OPENBLAS_NUM_THREADS=1 python3 scripts/bench_mdc.py

1. Median ms per ``MdcWait.solve`` over servers {1, 2, 4, 16, 32, 64, 128, 256} x utilization
   {0.05, 0.5, 0.9, 0.99, 0.994}, dense against GTH, and their ratio.
2. The Lab page's view on fresh inputs: ``sdlab_ui.cache._lab_view.__wrapped__(w, "queueing",
   ResidencyInputs())`` for the default ``Workload()`` at 300 rates from 100 to 2,500 rps, with
   the dense solve monkeypatched back in (before) and as it is (after): median and mean ms.

The kernel is compiled (or loaded from its cache) before any timing. OPENBLAS_NUM_THREADS=1 is
how ``dev.py run`` serves the app.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from sdlab_model.queues import mdc  # noqa: E402
from sdlab_model.workload import Workload  # noqa: E402

SERVERS = (1, 2, 4, 16, 32, 64, 128, 256)
UTILIZATIONS = (0.05, 0.5, 0.9, 0.99, 0.994)
RATES_RPS = np.linspace(100.0, 2500.0, 300)


def _dense_solve(cls, servers: int, offered_load: float) -> mdc.MdcWait:
    """``MdcWait.solve`` as it was: the same truncation, one dense solve for every ``c``."""
    c, a = int(servers), float(offered_load)
    if a == 0.0:
        return cls(c, a, np.array([1.0]), math.inf, True)
    eta = float(mdc.decay_rate(np.array(c), np.array(a)))
    ratio = a / (a + eta)
    needed = math.ceil(math.log(mdc._TAIL_MASS) / math.log(ratio)) + 16
    states = min(max(needed, 16), mdc.MAX_STATES)
    pmf = mdc.poisson_pmf(a, 0, c + states)
    return cls(c, a, mdc.dense_stationary(pmf, c, states), eta, needed <= mdc.MAX_STATES)


def _ms(function, *args, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def _lab_view_ms(view, residency) -> list[float]:
    base = Workload()
    times = []
    for rate in RATES_RPS:
        workload = replace(base, rate_rps=float(rate))
        start = time.perf_counter()
        view(workload, "queueing", residency)
        times.append(1e3 * (time.perf_counter() - start))
    return times


def main() -> None:
    gth_solve = mdc.MdcWait.solve
    dense_solve = classmethod(_dense_solve).__get__(None, mdc.MdcWait)
    gth_solve(2, 1.0)  # compile or load the kernel
    dense, gth, worst = [], [], 0.0
    for servers in SERVERS:
        for utilization in UTILIZATIONS:
            load = servers * utilization
            repeats = 3 if utilization >= 0.99 else 20
            dense.append(_ms(dense_solve, servers, load, repeats=repeats))
            gth.append(_ms(gth_solve, servers, load, repeats=repeats))
            gap = np.abs(gth_solve(servers, load).queue_pmf - dense_solve(servers, load).queue_pmf)
            worst = max(worst, float(gap.max()))
    print(f"M/D/c solve over {len(dense)} cells (servers {SERVERS} x utilization {UTILIZATIONS}):")
    dense_ms, gth_ms = statistics.median(dense), statistics.median(gth)
    ratio = dense_ms / gth_ms
    print(f"  median per call: dense {dense_ms:.3f} ms, GTH {gth_ms:.3f} ms ({ratio:.2f}x)")
    print(f"  sum over the grid: dense {sum(dense):.0f} ms, GTH {sum(gth):.0f} ms")
    print(f"  largest |queue_pmf difference|: {worst:.1e}")

    from sdlab_ui.cache import ResidencyInputs, _lab_view

    view = _lab_view.__wrapped__
    residency = ResidencyInputs()
    _lab_view_ms(view, residency)  # warm imports and caches below the view
    after = _lab_view_ms(view, residency)
    mdc.MdcWait.solve = dense_solve
    try:
        before = _lab_view_ms(view, residency)
    finally:
        mdc.MdcWait.solve = gth_solve
    print(f"Fresh Lab view, default Workload(), {RATES_RPS.size} rates 100..2500 rps:")
    for name, times in (("before (dense)", before), ("after (GTH)", after)):
        print(
            f"  {name:15s} median {statistics.median(times):.2f} ms, "
            f"mean {statistics.fmean(times):.2f} ms, max {max(times):.0f} ms"
        )


if __name__ == "__main__":
    main()
