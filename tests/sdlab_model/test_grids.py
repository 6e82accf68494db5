"""Heatmap grids: the vectorized stage map equals the design rules applied cell by cell."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from sdlab_model import grids
from sdlab_model.assessment import latency, p99_grid
from sdlab_model.design import needs_of, recommend_stage
from sdlab_model.scenarios import SCENARIOS
from sdlab_model.workload import Workload

RATE_CELLS, REPLICA_CELLS = 24, 16


def _stages_cell_by_cell(grid: grids.P99Grid) -> np.ndarray:
    """The design rules on each cell's own workload and latency result (the definition)."""
    base = latency(grid.workload, grid.model)
    stages = np.zeros(grid.p99_ms.shape, dtype=int)
    for i, count in enumerate(grid.replicas):
        for j, rate in enumerate(grid.rates_rps):
            cell = grid.workload.with_changes(rate_rps=float(rate), replicas=int(count))
            result = replace(
                base, p99_ms=float(grid.p99_ms[i, j]), utilization=float(grid.utilization[i, j])
            )
            stages[i, j] = recommend_stage(needs_of(cell, result)).number
    return stages


VARIANTS = [
    card.workload().with_changes(
        dynamic_batching=batching, gpu=gpu, models_hosted=models, p99_target_ms=target
    )
    for card, batching, gpu, models, target in itertools.product(
        SCENARIOS, (False, True), (False, True), (1, 3, 30), (50.0, 200.0)
    )
]
WORKLOADS = [*VARIANTS[::3], Workload(model_latency_ms=80.0), Workload(models_hosted=12)]


def test_the_workloads_reach_every_stage():
    seen = set()
    for workload in WORKLOADS:
        seen.update(
            grids.compute_grid(workload, "queueing", RATE_CELLS, REPLICA_CELLS)
            .stage_numbers.ravel()
            .tolist()
        )
    assert seen == {1, 2, 3, 4, 5}, f"the cases below reach only stages {sorted(seen)}"


@pytest.mark.parametrize("model", ["queueing", "teaching"])
@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: f"{w.rate_rps:g}-{w.models_hosted}")
def test_the_stage_map_equals_the_rules_cell_by_cell(workload, model):
    grid = grids.compute_grid(workload, model, RATE_CELLS, REPLICA_CELLS)
    expected = _stages_cell_by_cell(grid)
    wrong = np.argwhere(grid.stage_numbers != expected)
    assert wrong.size == 0, (
        f"{len(wrong)} cells differ from the design rules, first at replicas "
        f"{grid.replicas[wrong[0][0]]:g}, rate {grid.rates_rps[wrong[0][1]]:g}: "
        f"{grid.stage_numbers[tuple(wrong[0])]} instead of {expected[tuple(wrong[0])]}"
    )


def test_the_stage_map_builds_no_workload_per_cell(monkeypatch):
    built = []
    original = Workload.with_changes
    monkeypatch.setattr(
        Workload, "with_changes", lambda self, **kw: built.append(kw) or original(self, **kw)
    )
    grid = grids.compute_grid(Workload(), "queueing")
    assert grid.stage_numbers.shape == (len(grid.replicas), len(grid.rates_rps)), "wrong shape"
    assert len(built) <= 2, f"{len(built)} workloads built for one grid: the rules must be arrays"


def _frontier_by_every_count(grid: grids.P99Grid) -> np.ndarray:
    """The definition: p99 at every whole count up to the slider's maximum, first that meets."""
    every_count = np.arange(1, 501, dtype=float)
    fine = p99_grid(grid.workload, grid.rates_rps, every_count, grid.model)
    meets = fine <= grid.workload.p99_target_ms
    return np.where(meets.any(axis=0), every_count[np.argmax(meets, axis=0)], np.nan)


FRONTIER_WORKLOADS = [
    workload.with_changes(lb_policy=policy)
    for workload, policy in itertools.product(
        VARIANTS[::5], ("round_robin", "least_request", "central_queue")
    )
]


@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_the_frontier_search_equals_every_count(model):
    """The frontier evaluates only counts between the stability bound and the grid's first
    meeting row; p99 is not monotone in replicas, so check it against the full scan."""
    for workload in FRONTIER_WORKLOADS:
        grid = grids.compute_grid(workload, model)
        expected = _frontier_by_every_count(grid)
        assert np.array_equal(grid.frontier_replicas, expected, equal_nan=True), (
            f"{workload}: frontier {grid.frontier_replicas} != every-count scan {expected}"
        )


@pytest.mark.parametrize(
    "axes",
    [
        ("model_latency_ms", "replicas"),
        ("rate_rps", "models_hosted"),
        ("p99_target_ms", "gpu_speedup"),
    ],
)
def test_other_axes_give_each_cell_its_own_workloads_p99_and_stage(axes):
    x_name, y_name = axes
    workload = SCENARIOS[2].workload().with_changes(dynamic_batching=True)
    grid = grids.compute_axes_grid(workload, "queueing", x_name, y_name, 7, 5)
    base = latency(workload, "queueing")
    for i, y_value in enumerate(grid.y_values):
        for j, x_value in enumerate(grid.x_values):
            cell = workload.with_changes(
                **{
                    x_name: grids.input_value(x_name, x_value),
                    y_name: grids.input_value(y_name, y_value),
                }
            )
            p99 = p99_grid(cell, [cell.rate_rps], [cell.replicas], "queueing")[0, 0]
            assert grid.p99_ms[i, j] == p99 or (np.isinf(p99) and np.isinf(grid.p99_ms[i, j])), (
                f"{axes} cell ({x_value:g}, {y_value:g}): {grid.p99_ms[i, j]} != {p99}"
            )
            result = replace(base, p99_ms=float(p99))
            stage = recommend_stage(needs_of(cell, result)).number
            assert grid.stage_numbers[i, j] == stage, (
                f"{axes} cell ({x_value:g}, {y_value:g}): stage "
                f"{grid.stage_numbers[i, j]} != {stage}"
            )
    has_frontier = grid.frontier_replicas is not None
    assert has_frontier == (y_name == "replicas"), f"{axes}: frontier {has_frontier}"
