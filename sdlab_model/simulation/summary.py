"""A compact summary of one design's simulation, small enough to keep many of.

A ``SimResult`` carries every simulated latency (megabytes for 200k requests); a judgement only
needs the percentiles, the p99 interval, the measured utilization and batch size, and a CDF, so
the summary keeps 250 quantiles (float32) instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.workload import Workload

DESIGN_REQUESTS = 200_000
"""Requests per design simulation: five replications of 40,000."""
DESIGN_REPLICATIONS = 5
DESIGN_SEED = 0
CDF_POINTS = 250

# Inputs that change no simulated latency, each with the value a simulation key holds instead.
# (The target is only compared with the result.) Every other input changes the simulation.
_NOT_SIMULATED = {"p99_target_ms": NUMERIC_BY_NAME["p99_target_ms"].default}


def simulation_key(workload: Workload) -> Workload:
    """``workload`` with the inputs a simulation ignores at fixed values: one simulation serves
    every p99 target."""
    return workload.with_changes(**_NOT_SIMULATED)


@dataclass(frozen=True)
class SimSummary:
    """Percentiles (ms), the p99's 95% interval, measured load and the latency CDF of one
    simulation. ``converged`` is False where the run's budget ended before its interval was as
    narrow as asked; ``p99_ci_ms`` then says how far the p99 may be off."""

    p50_ms: float
    p95_ms: float
    p99_ms: float
    p99_ci_ms: tuple[float, float]
    is_stable: bool
    note: str
    cdf_latency_ms: np.ndarray
    cdf_share: np.ndarray
    utilization: float = math.nan
    mean_batch_size: float = math.nan
    converged: bool = True

    def error_text(self, model_p99_ms: float) -> str:
        """A model's p99 against this simulation's, e.g. '+4.1% vs simulation'."""
        if not math.isfinite(model_p99_ms):
            return "unstable where the simulation is not"
        return f"{100.0 * (model_p99_ms - self.p99_ms) / self.p99_ms:+.1f}% vs simulation"

    def interval_text(self) -> str | None:
        """'95% interval 30.1–31.9 ms', or None where there is no finite, non-empty interval."""
        low, high = self.p99_ci_ms
        if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
            return None
        return f"95% interval {low:.3g}–{high:.3g} ms"


def simulate_summary(workload: Workload) -> SimSummary:
    """Simulate ``workload`` with the design budget and seed, keeping only what is shown."""
    from sdlab_model.simulation.simulator import simulate

    result = simulate(
        workload, n_requests=DESIGN_REQUESTS, seed=DESIGN_SEED, replications=DESIGN_REPLICATIONS
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
        utilization=result.utilization,
        mean_batch_size=result.mean_batch_size,
    )
