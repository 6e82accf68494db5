"""A compact summary of one simulation, small enough to cache many of.

A ``SimResult`` carries every simulated latency (megabytes for 200k requests); the page only needs
the percentiles, the p99 interval and a CDF, so the cache keeps 250 quantiles (float32) instead:
a smooth curve, and a chart of a few KB that is quick to send on every rerun.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.workload import Workload

LAB_REQUESTS = 200_000
"""Requests per Lab-page simulation: five replications of 40,000, a p99 interval of a few %."""
LAB_REPLICATIONS = 5
LAB_SEED = 0
CDF_POINTS = 250


# Inputs that change no simulated latency, each with the value a simulation key holds instead.
# (The target is only compared with the result.) Every other input changes the simulation.
_NOT_SIMULATED = {"p99_target_ms": NUMERIC_BY_NAME["p99_target_ms"].default}


def simulation_key(workload: Workload) -> Workload:
    """``workload`` with the inputs a simulation ignores at fixed values: one cache entry serves
    every p99 target."""
    return workload.with_changes(**_NOT_SIMULATED)


@dataclass(frozen=True)
class SimSummary:
    """Percentiles (ms), the p99's 95% interval and the latency CDF of one simulation."""

    p50_ms: float
    p95_ms: float
    p99_ms: float
    p99_ci_ms: tuple[float, float]
    is_stable: bool
    note: str
    cdf_latency_ms: np.ndarray
    cdf_share: np.ndarray

    def error_text(self, model_p99_ms: float) -> str:
        """A model's p99 against this simulation's, e.g. '+4.1% vs simulation'."""
        if not math.isfinite(model_p99_ms):
            return "unstable where the simulation is not"
        return f"{100.0 * (model_p99_ms - self.p99_ms) / self.p99_ms:+.1f}% vs simulation"

    def interval_text(self) -> str | None:
        low, high = self.p99_ci_ms
        if not (math.isfinite(low) and math.isfinite(high)):
            return None
        return f"95% interval {low:.3g}–{high:.3g} ms"


def simulate_summary(workload: Workload) -> SimSummary:
    """Simulate ``workload`` with the Lab's budget and seed, keeping only what the page shows."""
    from sdlab_model.simulation.simulator import simulate

    result = simulate(
        workload, n_requests=LAB_REQUESTS, seed=LAB_SEED, replications=LAB_REPLICATIONS
    )
    ordered = np.sort(result.latencies_ms)
    if ordered.size:
        picks = np.unique(np.linspace(0, ordered.size - 1, CDF_POINTS).astype(int))
        cdf_latency = ordered[picks].astype(np.float32)
        cdf_share = ((picks + 1) / ordered.size).astype(np.float32)
    else:
        cdf_latency = cdf_share = np.empty(0)
    return SimSummary(
        p50_ms=result.p50_ms,
        p95_ms=result.p95_ms,
        p99_ms=result.p99_ms,
        p99_ci_ms=tuple(result.p99_ci_ms),
        is_stable=result.is_stable,
        note=result.note,
        cdf_latency_ms=cdf_latency,
        cdf_share=cdf_share,
    )
