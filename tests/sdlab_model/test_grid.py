"""``p99_grid``: shape, instability, and agreement with the point model cell by cell."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdlab_model import min_replicas_for_target
from sdlab_model.queues import queueing
from sdlab_model.queues.mdc import MdcWait
from sdlab_model.queues.mdc_grid import p99_wait_units
from sdlab_model.workload import Workload


def _point(workload: Workload, rate: float, replicas: int) -> float:
    return queueing.latency(workload.with_changes(rate_rps=rate, replicas=replicas)).p99_ms


def test_grid_shape_and_infinite_beyond_capacity():
    workload = Workload(dynamic_batching=False)
    rates = np.array([100.0, 1_000.0, 10_000.0, 100_000.0])
    replicas = np.array([1, 2, 8])
    grid = queueing.p99_grid(workload, rates, replicas)
    assert grid.shape == (3, 4), f"shape {grid.shape}, want (len(replicas), len(rates))"
    for i, count in enumerate(replicas):
        for j, rate in enumerate(rates):
            unstable = rate >= workload.with_changes(replicas=int(count)).capacity_rps
            assert math.isinf(grid[i, j]) == unstable, f"cell {count} replicas, {rate} req/s"
    assert not np.isnan(grid).any(), "the grid must never hold NaN"


@pytest.mark.parametrize("policy", ["central_queue", "round_robin", "random"])
@pytest.mark.parametrize("gpu", [False, True])
def test_unbatched_grid_agrees_with_exact_point_model(gpu, policy):
    rng = np.random.default_rng(2026)
    workload = Workload(dynamic_batching=False, gpu=gpu, model_latency_ms=20.0, lb_policy=policy)
    worst = 0.0
    for _ in range(40):
        replicas = int(rng.integers(1, 200))
        capacity = workload.with_changes(replicas=replicas).capacity_rps
        rate = float(min(500_000.0, capacity * rng.uniform(0.05, 0.99)))
        grid = queueing.p99_grid(workload, np.array([rate]), np.array([replicas]))[0, 0]
        exact = _point(workload, rate, replicas)
        worst = max(worst, abs(grid / exact - 1))
    assert worst < 0.01, f"grid vs exact M/D/c p99: worst relative difference {worst:.4f}"


def test_unbatched_grid_small_servers_against_exact_solution():
    # Many servers per replica hide the small-c shape; check c = 1..12 directly in D units.
    worst = 0.0
    for servers in range(1, 13):
        for rho in (0.05, 0.2, 0.45, 0.7, 0.85, 0.93, 0.98):
            exact = 1 + MdcWait.solve(servers, servers * rho).wait_quantile(0.99)
            grid = 1 + float(p99_wait_units(np.array(servers), np.array(rho)))
            worst = max(worst, abs(grid / exact - 1))
    assert worst < 0.01, f"tabulated vs exact M/D/c p99 for 1-12 servers: worst {worst:.4f}"


# The central queue's grid runs the point model's formulas exactly; per-replica policies take
# the batch's formation-and-service quantile from a precomputed table (within 1%, see
# batching.quantile_from_table) and, with several models, the same mixture solve.
@pytest.mark.parametrize(
    ("policy", "models", "tolerance"),
    [
        ("central_queue", 1, 1e-9),
        ("round_robin", 1, 0.01),
        ("random", 1, 0.01),
        ("least_request", 1, 0.01),
        ("round_robin", 20, 1e-9),
    ],
)
def test_batched_grid_is_the_point_model(policy, models, tolerance):
    workload = Workload(
        dynamic_batching=True, batch_window_ms=5.0, lb_policy=policy, models_hosted=models
    )
    rates = np.geomspace(100, 200_000, 9)
    replicas = np.array([1, 3, 10, 40])
    grid = queueing.p99_grid(workload, rates, replicas)
    for i, count in enumerate(replicas):
        for j, rate in enumerate(rates):
            point = _point(workload, float(rate), int(count))
            assert grid[i, j] == pytest.approx(point, rel=tolerance) or (
                math.isinf(grid[i, j]) and math.isinf(point)
            ), f"batched grid differs from the point model at {count} replicas, {rate:.0f} req/s"


def test_unbatched_grid_rows_rise_with_rate_and_fall_with_replicas():
    workload = Workload(dynamic_batching=False)
    grid = queueing.p99_grid(workload, np.geomspace(10, 50_000, 60), np.arange(1, 30))
    finite = np.where(np.isfinite(grid), grid, np.inf)
    with np.errstate(invalid="ignore"):
        along_rate = np.diff(finite, axis=1)
    assert np.all((along_rate >= -1e-9 * finite[:, :-1]) | np.isnan(along_rate)), (
        "p99 fell as the rate rose"
    )
    with np.errstate(invalid="ignore"):
        rising = np.diff(finite, axis=0)
    both = np.isfinite(finite[1:, :]) & np.isfinite(finite[:-1, :])
    assert np.all(rising[both] <= 1e-9 * finite[:-1, :][both]), "p99 rose with more replicas"


def test_min_replicas_for_target_is_the_first_meeting_count():
    workload = Workload(rate_rps=3_000, dynamic_batching=False, p99_target_ms=40.0)
    found = min_replicas_for_target(workload)
    assert found is not None, "some replica count should meet a 40 ms target at 3k req/s"
    assert _point(workload, 3_000, found) <= 40.0, "the returned count must meet the target"
    if found > 1:
        assert _point(workload, 3_000, found - 1) > 40.0, "one fewer replica should miss it"


@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_p99_pairs_are_the_grids_cells(model):
    """p99_pairs evaluates chosen (rate, replica count) pairs; each must be the grid's cell, to
    the last bit or two (numpy's vectorized exp and log may round an element's last bit
    differently with the array's length: seen once, 2e-16, in the pooled batching model)."""
    from sdlab_model.assessment import p99_grid, p99_pairs

    rates = np.geomspace(50.0, 400_000.0, 17)
    counts = np.array([1.0, 2.0, 3.0, 7.0, 40.0, 333.0, 500.0])
    rows, columns = np.meshgrid(np.arange(counts.size), np.arange(rates.size), indexing="ij")
    picked = np.random.default_rng(5).permutation(rows.size)[:60]
    for workload in (
        Workload(),
        Workload(dynamic_batching=False, lb_policy="random"),
        Workload(gpu=True, models_hosted=30, lb_policy="central_queue"),
        Workload(lb_policy="central_queue"),  # the pooled model
        Workload(dynamic_batching=False, lb_policy="central_queue"),
    ):
        grid = p99_grid(workload, rates, counts, model)
        row, column = rows.ravel()[picked], columns.ravel()[picked]
        cells = p99_pairs(workload, rates[column], counts[row], model)
        close = np.isclose(cells, grid[row, column], rtol=1e-12, atol=0.0)
        assert close.all(), (
            f"{model}, {workload}: p99_pairs differs from the grid at {np.flatnonzero(~close)[:5]}"
        )
