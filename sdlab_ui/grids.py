"""Heatmap grids: p99 over request rate x replicas for one workload, as plain arrays.

Pure functions of a workload and a model (no Streamlit), so they are easy to test and to cache
(``sdlab_ui.cache``). The axes span the sliders' full ranges on log scales.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

from sdlab_model import design, p99_grid
from sdlab_model.assessment import ModelName
from sdlab_model.params import MODELS_PER_REPLICA_HOT, NUMERIC_BY_NAME
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

    ``design.recommend_stage(design.needs_of(cell, result))`` for every cell at once: the same
    need-flags as arrays over rate (columns) and replicas (rows), the same rules in the same
    order. (Per cell, a workload and a latency result cost ~100 ms a grid, most of a Heatmaps
    rerun.) ``tests/app/test_grids.py`` checks it against the per-cell rules. The stage
    reads neither p99 nor utilization; ``model``, ``p99_ms`` and ``utilization`` stay in the
    signature for rules that would.
    """
    rate = np.asarray(rates_rps, dtype=float)[None, :]
    count = np.asarray(replicas, dtype=float)[:, None]
    models = workload.models_hosted
    tight_tail = workload.p99_target_ms <= design.TIGHT_TAIL_TARGET_MS
    needs_batching = ((rate > design.BATCHING_RATE_RPS) & (not tight_tail)) | (
        rate > design.BATCHING_ANY_TARGET_RATE_RPS
    )
    needs_gpu = (workload.model_latency_ms >= design.HEAVY_MODEL_LATENCY_MS) & (
        rate > design.HIGH_RATE_RPS
    )
    needs_autoscale = (rate > design.HIGH_RATE_RPS) | (count > design.AUTOSCALE_REPLICAS)
    needs_registry = models > 1
    models_per_slot = models / (count * MODELS_PER_REPLICA_HOT)
    needs_packing = (
        (models > count)
        | (models_per_slot > design.PACKING_SLOT_SHARE)
        | (models > design.PACKING_MODELS)
    )
    batching = workload.dynamic_batching | needs_batching
    gpu = workload.gpu | needs_gpu
    cells = np.shape(p99_ms)
    rules = [  # design.recommend_stage, rule by rule
        ~(batching | gpu | needs_registry | needs_autoscale),
        needs_packing,
        needs_registry & gpu,
        gpu,
        batching,
    ]
    numbers = [1, 5, 4, 3, 2]
    return np.select([np.broadcast_to(rule, cells) for rule in rules], numbers, default=1)


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
