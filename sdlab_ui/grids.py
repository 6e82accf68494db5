"""Heatmap grids: p99 over request rate x replicas for one workload, as plain arrays.

Pure functions of a workload and a model (no Streamlit), so they are easy to test and to cache
(``sdlab_ui.cache``). The axes span the sliders' full ranges on log scales.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace

import numpy as np

from sdlab_model import p99_grid
from sdlab_model.assessment import ModelName, latency
from sdlab_model.design import needs_of, recommend_stage
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.workload import Workload

_RATE = NUMERIC_BY_NAME["rate_rps"]
_REPLICAS = NUMERIC_BY_NAME["replicas"]


@dataclass(frozen=True)
class P99Grid:
    """p99 (ms, ``inf`` where unstable) and utilization, shape ``(len(replicas), len(rates_rps))``.

    ``frontier_replicas[j]`` is the fewest replicas (any count up to the slider's maximum) whose
    p99 meets the target at ``rates_rps[j]``, NaN where none does.
    """

    workload: Workload
    model: ModelName
    rates_rps: np.ndarray
    replicas: np.ndarray
    p99_ms: np.ndarray
    utilization: np.ndarray
    stage_numbers: np.ndarray
    frontier_replicas: np.ndarray

    @property
    def unstable(self) -> np.ndarray:
        return ~np.isfinite(self.p99_ms)


def rate_axis(cells: int) -> np.ndarray:
    """``cells`` log-spaced request rates over the rate slider's range."""
    return np.geomspace(_RATE.minimum, _RATE.maximum, cells)


def replica_axis(cells: int) -> np.ndarray:
    """Up to ``cells`` distinct whole replica counts, log-spaced over the slider's range."""
    return np.unique(np.round(np.geomspace(_REPLICAS.minimum, _REPLICAS.maximum, cells)))


def capacity_per_replica_rps(workload: Workload, model: ModelName) -> float:
    """Sustainable rate of one replica under ``model``: capacity grows linearly in replicas."""
    if model == "teaching":
        from sdlab_model.teaching import fleet_capacity_rps

        return fleet_capacity_rps(workload) / workload.replicas
    return workload.capacity_rps / workload.replicas


def compute_grid(
    workload: Workload, model: ModelName, rate_cells: int = 60, replica_cells: int = 48
) -> P99Grid:
    """The p99 grid around ``workload`` (every input but rate and replicas held)."""
    rates = rate_axis(rate_cells)
    replicas = replica_axis(replica_cells)
    p99 = p99_grid(workload, rates, replicas, model)
    per_replica = capacity_per_replica_rps(workload, model)
    utilization = rates[None, :] / (per_replica * replicas[:, None])
    every_count = np.arange(1, int(_REPLICAS.maximum) + 1, dtype=float)
    fine = p99_grid(workload, rates, every_count, model)
    meets = fine <= workload.p99_target_ms
    first = np.argmax(meets, axis=0)
    frontier = np.where(meets.any(axis=0), every_count[first], np.nan)
    stages = stage_grid(workload, model, rates, replicas, p99, utilization)
    return P99Grid(workload, model, rates, replicas, p99, utilization, stages, frontier)


def stage_grid(
    workload: Workload,
    model: ModelName,
    rates_rps: np.ndarray,
    replicas: np.ndarray,
    p99_ms: np.ndarray,
    utilization: np.ndarray,
) -> np.ndarray:
    """The recommended stage (1-5) in every cell, by the design rules on the cell's workload.

    The rules read a latency result only for its p99 and utilization, which the grid already
    has, so each cell reuses one computed result with those two numbers replaced.
    """
    base = latency(workload, model)
    stages = np.zeros(p99_ms.shape, dtype=int)
    for i, count in enumerate(replicas):
        for j, rate in enumerate(rates_rps):
            cell = workload.with_changes(rate_rps=float(rate), replicas=int(count))
            result = replace(base, p99_ms=float(p99_ms[i, j]), utilization=float(utilization[i, j]))
            stages[i, j] = recommend_stage(needs_of(cell, result)).number
    return stages


def grid_csv(grid: P99Grid) -> str:
    """One row per cell: rate, replicas, p99 (``inf`` where unstable), utilization."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        ["rate_rps", "replicas", "p99_ms", "utilization", "meets_target", "stage", "model"]
    )
    target = grid.workload.p99_target_ms
    for i, replicas in enumerate(grid.replicas):
        for j, rate in enumerate(grid.rates_rps):
            p99 = float(grid.p99_ms[i, j])
            writer.writerow(
                [
                    f"{rate:.6g}",
                    int(replicas),
                    f"{p99:.6g}",
                    f"{grid.utilization[i, j]:.6g}",
                    int(p99 <= target),
                    int(grid.stage_numbers[i, j]),
                    grid.model,
                ]
            )
    return out.getvalue()
