"""How much traffic a deployment takes: the largest stable rate, and the largest meeting targets.

Both search the analytic model (``llm_grid``) over the rate: ``RATES_PER_ROUND`` rates spread
geometrically between a bracket's ends per round, the bracket narrowed to the last rate that
passes and the first that fails, ``ROUNDS`` rounds (each narrows it about 24-fold). Passing is
monotone in the rate in this model (more traffic never lowers a p99), which the search assumes.

``max_rate_at_targets`` is MLPerf's server scenario: the highest Poisson rate at which the TTFT
and TPOT p99 (and the end-to-end p99) are within their targets.
"""

from __future__ import annotations

import numpy as np

from sdlab_model.llm.analytic import llm_grid
from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.iteration import EngineEfficiency
from sdlab_model.llm.workload import INPUT_RANGES, LlmWorkload

RATES_PER_ROUND = 24
ROUNDS = 4


def search_rate(passes_at) -> float:
    """The highest rate (req/s) for which ``passes_at(rates)`` (an array of booleans, one per
    rate) holds, assuming it holds below some rate and fails above; 0 if it fails everywhere."""
    low, high = 1e-4, INPUT_RANGES["rate_rps"][1]
    for _ in range(ROUNDS):
        rates = np.geomspace(low, high, RATES_PER_ROUND)
        ok = np.asarray(passes_at(rates), dtype=bool)
        if not ok[0]:
            return 0.0
        if ok.all():
            return float(rates[-1])
        last = int(np.argmin(ok)) - 1
        low, high = float(rates[last]), float(rates[last + 1])
    return low


def _search(workload: LlmWorkload, efficiency: EngineEfficiency, passes) -> float:
    def passes_at(rates):
        workloads = [workload.with_changes(rate_rps=float(rate)) for rate in rates]
        return passes(llm_grid(workloads, efficiency, quantiles=(0.99,)))

    return search_rate(passes_at)


def max_stable_rate(
    workload: LlmWorkload, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> float:
    """The highest rate (req/s over all replicas) the deployment serves without its queue
    growing without bound; 0 when the model does not fit."""
    return _search(workload, efficiency, lambda grid: grid.stable)


def max_rate_at_targets(
    workload: LlmWorkload, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> float:
    """The highest rate at which every p99 is within the workload's targets (0 if none is)."""
    ttft, tpot, e2e = (
        workload.ttft_p99_target_ms,
        workload.tpot_p99_target_ms,
        workload.e2e_p99_target_ms,
    )

    def passes(grid):
        return (
            grid.stable
            & (grid.ttft_ms[:, 0] <= ttft)
            & (grid.tpot_ms[:, 0] <= tpot)
            & (grid.e2e_ms[:, 0] <= e2e)
        )

    return _search(workload, efficiency, passes)
