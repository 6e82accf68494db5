#!/usr/bin/env python3
"""The exact M/D/c solve before (dense LU) and after (GTH state reduction), its wait quantiles
before (numpy per CDF) and after (compiled), and the Lab's view.

    OPENBLAS_NUM_THREADS=1 python3 scripts/bench_mdc.py

1. Median ms per ``MdcWait.solve`` over servers {1, 2, 4, 16, 32, 64, 128, 256} x utilization
   {0.05, 0.5, 0.9, 0.99, 0.994}, dense against GTH, and their ratio.
2. The Lab page's view on fresh inputs: ``sdlab_ui.cache._lab_view.__wrapped__(w, "queueing",
   ResidencyInputs())`` for the default ``Workload()`` at 300 rates from 100 to 2,500 rps, with
   the dense solve monkeypatched back in (before) and as it is (after): median and mean ms.
3. Median ms for the three quantiles an exact evaluation asks (p50, p95, p99) over the same
   servers x utilization, each CDF as small numpy calls (as it was) against the compiled search,
   their largest relative difference; and the Lab's view as in 2 with the numpy quantiles
   monkeypatched back in (before) and as it is (after).

The kernel is compiled (or loaded from its cache) before any timing. OPENBLAS_NUM_THREADS=1 is
how ``dev.py run`` serves the app.
"""

from __future__ import annotations

import contextlib
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


def _numpy_poisson_cdf_run(mean: float, lo: int, hi: int) -> np.ndarray:
    """``P(Poisson(mean) <= n)`` for ``n = lo .. hi``, as ``mdc`` summed it before."""
    out = np.zeros(hi - lo + 1)
    if hi < 0:
        return out
    start = max(0, int(mean - 40.0 * math.sqrt(mean) - 40.0))
    if hi < start:
        return out
    cumulative = np.minimum(np.cumsum(mdc.poisson_pmf(mean, start, hi)), 1.0)
    first = max(lo, start)
    out[first - lo :] = cumulative[first - start :]
    return out


def _numpy_wait_cdf(self, x: float) -> float:
    """``MdcWait.wait_cdf`` as it was: one Poisson CDF run in numpy per call."""
    if x < 0.0:
        return 0.0
    whole = math.floor(x)
    top = (whole + 1) * self.servers - 1
    cdf = _numpy_poisson_cdf_run(
        self.offered_load * (1.0 - (x - whole)), top - self.queue_pmf.size + 1, top
    )
    return float(min(1.0, np.dot(self.queue_pmf, cdf[::-1])))


def _numpy_wait_quantile(self, probability: float) -> float:
    """``MdcWait.wait_quantile`` as it was: the same search over ``_numpy_wait_cdf``."""
    if _numpy_wait_cdf(self, 0.0) >= probability:
        return 0.0
    lo, hi = 0.0, 1.0
    while _numpy_wait_cdf(self, hi) < probability:
        lo, hi = hi, 2.0 * hi
    f_lo, f_hi = _numpy_wait_cdf(self, lo) - probability, _numpy_wait_cdf(self, hi) - probability
    side, x, f_x = 0, hi, f_hi
    for _ in range(100):
        x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        f_x = _numpy_wait_cdf(self, x) - probability
        if f_x < 0.0:
            lo, f_lo = x, f_x
            f_hi *= 0.5 if side == -1 else 1.0
            side = -1
        else:
            hi, f_hi = x, f_x
            f_lo *= 0.5 if side == 1 else 1.0
            side = 1
        if hi - lo <= 1e-10 * hi or f_x == 0.0:
            break
    return hi if f_x >= 0.0 else x


def _priority_ms(utilization: float) -> float:
    from sdlab_model.overload.priorities import PriorityClass, PriorityQueue, priority_latency

    classes = (
        PriorityClass("interactive", 0.2, 100.0),
        PriorityClass("standard", 0.5, 300.0),
        PriorityClass("batch", 0.3, 2000.0),
    )
    servers, service_ms = 8, 20.0
    rate_rps = utilization * servers * 1000.0 / service_ms
    return _ms(
        lambda: priority_latency(PriorityQueue(rate_rps, servers, service_ms, classes)), repeats=9
    )


@contextlib.contextmanager
def _as_it_was(**methods):
    """``MdcWait``'s methods named replaced by ``methods`` for the block (the code before)."""
    kept = {name: vars(mdc.MdcWait)[name] for name in methods}
    for name, method in methods.items():
        setattr(mdc.MdcWait, name, method)
    try:
        yield
    finally:
        for name, method in kept.items():
            setattr(mdc.MdcWait, name, method)


def _print_lab_views(names: tuple[str, str], **methods_before) -> None:
    """The fresh Lab view's times with ``methods_before`` (the code before) and as it is."""
    from sdlab_ui.cache import ResidencyInputs, _lab_view

    view, residency = _lab_view.__wrapped__, ResidencyInputs()
    _lab_view_ms(view, residency)  # warm imports and caches below the view
    after = _lab_view_ms(view, residency)
    with _as_it_was(**methods_before):
        before = _lab_view_ms(view, residency)
    print(f"Fresh Lab view, default Workload(), {RATES_RPS.size} rates 100..2500 rps:")
    for name, times in zip(names, (before, after), strict=True):
        print(
            f"  {name:16s} median {statistics.median(times):.2f} ms, "
            f"mean {statistics.fmean(times):.2f} ms, max {max(times):.0f} ms"
        )


def _quantiles(wait: mdc.MdcWait, quantile) -> list[float]:
    return [quantile(wait, q) for q in (0.5, 0.95, 0.99)]


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

    _print_lab_views(("before (dense)", "after (GTH)"), solve=classmethod(_dense_solve))

    compiled_quantile = mdc.MdcWait.wait_quantile
    numpy_ms, compiled_ms, worst = [], [], 0.0
    for servers in SERVERS:
        for utilization in UTILIZATIONS:
            wait = gth_solve(servers, servers * utilization)
            repeats = 3 if utilization >= 0.99 else 20
            numpy_ms.append(_ms(_quantiles, wait, _numpy_wait_quantile, repeats=repeats))
            compiled_ms.append(_ms(_quantiles, wait, compiled_quantile, repeats=repeats))
            for old, new in zip(
                _quantiles(wait, _numpy_wait_quantile),
                _quantiles(wait, compiled_quantile),
                strict=True,
            ):
                worst = max(worst, abs(new - old) / old if old else abs(new))
    print(f"p50, p95 and p99 of the wait over the same {len(numpy_ms)} cells:")
    numpy_median, compiled_median = statistics.median(numpy_ms), statistics.median(compiled_ms)
    print(
        f"  median per three: numpy {numpy_median:.3f} ms, compiled {compiled_median:.3f} ms"
        f" ({numpy_median / compiled_median:.1f}x); largest relative difference {worst:.1e}"
    )
    _print_lab_views(("before (numpy)", "after (compiled)"), wait_quantile=_numpy_wait_quantile)

    utilizations = (0.5, 0.8, 0.95)
    after = [_priority_ms(u) for u in utilizations]
    with _as_it_was(wait_cdf=_numpy_wait_cdf, wait_quantile=_numpy_wait_quantile):
        before = [_priority_ms(u) for u in utilizations]
    print("The Overload page's priority queue (priority_latency), median ms per evaluation:")
    for utilization, old, new in zip(utilizations, before, after, strict=True):
        print(f"  utilization {utilization}: numpy {old:.1f} ms, compiled {new:.1f} ms")


if __name__ == "__main__":
    main()
