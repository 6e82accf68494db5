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


def search_rates(passes_at, count: int, rounds: int = ROUNDS) -> np.ndarray:
    """For each of ``count`` deployments, the highest rate (req/s) at which it passes.

    ``passes_at(rates)`` takes a ``count × RATES_PER_ROUND`` array of rates and returns booleans
    of that shape; passing is assumed to hold below some rate and fail above it. 0 where even
    the lowest rate fails; the range's top where none does. Fewer ``rounds`` answer coarser,
    from below: two leave the answer within ~4% of the crossing over the whole rate range."""
    low = np.full(count, 1e-4)
    high = np.full(count, INPUT_RANGES["rate_rps"][1])
    result = np.zeros(count)
    done = np.zeros(count, dtype=bool)
    spread = np.linspace(0.0, 1.0, RATES_PER_ROUND)[None, :]
    for _ in range(rounds):
        rates = low[:, None] * (high / low)[:, None] ** spread
        ok = np.asarray(passes_at(rates), dtype=bool)
        for row in np.flatnonzero(~done):
            if not ok[row, 0]:
                done[row] = True
            elif ok[row].all():
                result[row], done[row] = rates[row, -1], True
            else:
                last = int(np.argmin(ok[row])) - 1
                low[row], high[row] = rates[row, last], rates[row, last + 1]
                result[row] = low[row]
    return result


def search_rate(passes_at) -> float:
    """``search_rates`` for one deployment: ``passes_at`` takes and returns 1-D arrays."""
    return float(search_rates(lambda rates: passes_at(rates[0])[None, :], 1)[0])


def rates_at_targets(
    workloads: list[LlmWorkload], efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> np.ndarray:
    """``max_rate_at_targets`` for many workloads, searched together (one ``llm_grid`` a round)."""

    def passes_at(rates):
        cells = [
            w.with_changes(rate_rps=float(rate))
            for w, row in zip(workloads, rates, strict=True)
            for rate in row
        ]
        grid = llm_grid(cells, efficiency, quantiles=(0.99,))
        targets = np.array(
            [[w.ttft_p99_target_ms, w.tpot_p99_target_ms, w.e2e_p99_target_ms] for w in cells]
        )
        ok = (
            grid.stable
            & (grid.ttft_ms[:, 0] <= targets[:, 0])
            & (grid.tpot_ms[:, 0] <= targets[:, 1])
            & (grid.e2e_ms[:, 0] <= targets[:, 2])
        )
        return ok.reshape(rates.shape)

    return search_rates(passes_at, len(workloads))


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


def max_stable_rates(
    workloads: list[LlmWorkload],
    efficiency: EngineEfficiency = DEFAULT_EFFICIENCY,
    rounds: int = ROUNDS,
) -> np.ndarray:
    """``max_stable_rate`` of each workload, searched together (one ``llm_grid`` a round);
    ``rounds`` as in ``search_rates`` (a chart's axis needs no more than two)."""

    def passes_at(rates):
        cells = [
            w.with_changes(rate_rps=float(rate))
            for w, row in zip(workloads, rates, strict=True)
            for rate in row
        ]
        return llm_grid(cells, efficiency, quantiles=(0.99,)).stable.reshape(rates.shape)

    return search_rates(passes_at, len(workloads), rounds)


def max_rate_at_targets(
    workload: LlmWorkload, efficiency: EngineEfficiency = DEFAULT_EFFICIENCY
) -> float:
    """The highest rate at which every p99 is within the workload's targets (0 if none is)."""
    return float(rates_at_targets([workload], efficiency)[0])
