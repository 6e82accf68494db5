"""Heatmap grids: p99 over any two numeric inputs for one workload, as plain arrays.

Pure functions of a workload, a model and two axes (no Streamlit), so they are easy to test and
to cache (the UI's ``cache``). The axes span the sliders' full ranges, on the inputs' own scales
(log or linear). Request rate x replicas, the default, is vectorized in the model
(``p99_grid``); any other pair is evaluated one row of cells (or one cell) at a time.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

import numpy as np

from sdlab_model import design
from sdlab_model.assessment import ModelName, p99_grid, p99_pairs
from sdlab_model.params import (
    CHOICE_INPUTS,
    MODELS_PER_REPLICA_HOT,
    NUMERIC_BY_NAME,
    NUMERIC_INPUTS,
    TOGGLE_INPUTS,
)
from sdlab_model.workload import Workload

RATE, REPLICAS, TARGET = "rate_rps", "replicas", "p99_target_ms"
DEFAULT_AXES = (RATE, REPLICAS)
# The default grid is vectorized in the model: fine cells cost nothing. Other axes are evaluated
# a row (one axis is rate or replicas: ~1-3 ms a row) or a cell (~0.3-1 ms) at a time, so they
# get fewer cells; see ``axis_cells``.
DEFAULT_CELLS = {RATE: 60, REPLICAS: 48}
CUSTOM_CELLS = (40, 30)
CELL_BY_CELL_CELLS = (24, 20)
# Columns the fine frontier search evaluates together (see ``_frontier``).
_RATE = NUMERIC_BY_NAME[RATE]
_REPLICAS = NUMERIC_BY_NAME[REPLICAS]


@dataclass(frozen=True)
class P99Grid:
    """p99 (ms, ``inf`` where unstable) and utilization over two inputs, shape
    ``(len(y_values), len(x_values))``; every other input is ``workload``'s.

    ``frontier_replicas[j]`` is the fewest replicas (any count up to the slider's maximum) whose
    p99 meets the target at ``x_values[j]``, NaN where none does; None unless the y axis is
    replicas (or when not asked for).
    """

    workload: Workload
    model: ModelName
    x_name: str
    x_values: np.ndarray
    y_name: str
    y_values: np.ndarray
    p99_ms: np.ndarray
    utilization: np.ndarray
    stage_numbers: np.ndarray
    frontier_replicas: np.ndarray | None

    @property
    def unstable(self) -> np.ndarray:
        return ~np.isfinite(self.p99_ms)

    @property
    def target_ms(self) -> np.ndarray:
        """Each cell's p99 target, shaped like ``p99_ms``: the axis's value where the target is
        an axis (the SLO line and frontier follow it), else the workload's."""
        if self.x_name == TARGET:
            return np.broadcast_to(self.x_values[None, :], self.p99_ms.shape)
        if self.y_name == TARGET:
            return np.broadcast_to(self.y_values[:, None], self.p99_ms.shape)
        return np.full(self.p99_ms.shape, self.workload.p99_target_ms)

    @property
    def meets_target(self) -> np.ndarray:
        """Whether each cell's p99 meets that cell's target."""
        return self.p99_ms <= self.target_ms

    @property
    def rates_rps(self) -> np.ndarray:
        """The x axis of a rate x replicas grid."""
        _require_default_axes(self)
        return self.x_values

    @property
    def replicas(self) -> np.ndarray:
        """The y axis of a rate x replicas grid."""
        _require_default_axes(self)
        return self.y_values


def _require_default_axes(grid: P99Grid) -> None:
    if (grid.x_name, grid.y_name) != DEFAULT_AXES:
        raise ValueError(f"a {grid.x_name} x {grid.y_name} grid has no rate x replicas axes")


def axis_values(name: str, cells: int) -> np.ndarray:
    """``cells`` values of input ``name`` over its slider's range, on the input's own scale;
    whole numbers (each once, so maybe fewer) for integer inputs."""
    spec = NUMERIC_BY_NAME[name]
    space = np.geomspace if spec.scale == "log" else np.linspace
    values = space(float(spec.minimum), float(spec.maximum), cells)
    return np.unique(np.round(values)) if spec.integer else values


def rate_axis(cells: int) -> np.ndarray:
    """``cells`` log-spaced request rates over the rate slider's range."""
    return axis_values(RATE, cells)


def replica_axis(cells: int) -> np.ndarray:
    """Up to ``cells`` distinct whole replica counts, log-spaced over the slider's range."""
    return axis_values(REPLICAS, cells)


def axis_cells(x_name: str, y_name: str) -> tuple[int, int]:
    """How many cells each axis gets: the default grid is fine, a grid evaluated row by row has
    40 x 30 cells, one evaluated cell by cell (neither axis rate nor replicas) 24 x 20."""
    if (x_name, y_name) == DEFAULT_AXES:
        return DEFAULT_CELLS[x_name], DEFAULT_CELLS[y_name]
    if {x_name, y_name} & {RATE, REPLICAS}:
        return CUSTOM_CELLS
    return CELL_BY_CELL_CELLS


def input_value(name: str, value: float) -> float | int:
    """``value`` as input ``name`` takes it (a whole number for integer inputs)."""
    return round(float(value)) if NUMERIC_BY_NAME[name].integer else float(value)


def capacity_per_replica_rps(workload: Workload, model: ModelName) -> float:
    """Sustainable rate of one replica under ``model``: capacity grows linearly in replicas."""
    if model == "teaching":
        from sdlab_model.teaching import fleet_capacity_rps

        return fleet_capacity_rps(workload) / workload.replicas
    return workload.capacity_rps / workload.replicas


def compute_grid(
    workload: Workload,
    model: ModelName,
    rate_cells: int = DEFAULT_CELLS[RATE],
    replica_cells: int = DEFAULT_CELLS[REPLICAS],
    *,
    frontier: bool = True,
) -> P99Grid:
    """The rate x replicas p99 grid around ``workload`` (every other input held)."""
    return compute_axes_grid(
        workload, model, RATE, REPLICAS, rate_cells, replica_cells, frontier=frontier
    )


def compute_axes_grid(
    workload: Workload,
    model: ModelName,
    x_name: str = RATE,
    y_name: str = REPLICAS,
    x_cells: int | None = None,
    y_cells: int | None = None,
    *,
    frontier: bool = True,
) -> P99Grid:
    """The p99 grid over inputs ``x_name`` x ``y_name`` around ``workload`` (every other input
    held); the frontier where the y axis is replicas and ``frontier`` is set."""
    if x_name == y_name:
        raise ValueError(f"the two axes must be different inputs, both are {x_name!r}")
    default_x, default_y = axis_cells(x_name, y_name)
    xs = axis_values(x_name, x_cells or default_x)
    ys = axis_values(y_name, y_cells or default_y)
    p99, utilization = _p99_and_utilization(workload, model, x_name, xs, y_name, ys)
    axes = {x_name: xs[None, :], y_name: ys[:, None]}
    stages = stage_grid(workload, p99.shape, axes)
    fewest = None
    if frontier and y_name == REPLICAS:
        fewest = _frontier(workload, model, x_name, xs, ys, p99)
    return P99Grid(workload, model, x_name, xs, y_name, ys, p99, utilization, stages, fewest)


def _p99_and_utilization(
    workload: Workload,
    model: ModelName,
    x_name: str,
    xs: np.ndarray,
    y_name: str,
    ys: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """p99 and utilization, shape ``(len(ys), len(xs))``, vectorized as far as the model is."""
    vectorized = {RATE, REPLICAS}
    if {x_name, y_name} == vectorized:
        rates, counts = (xs, ys) if x_name == RATE else (ys, xs)
        p99 = p99_grid(workload, rates, counts, model)
        utilization = rates[None, :] / (capacity_per_replica_rps(workload, model) * counts[:, None])
        return (p99, utilization) if x_name == RATE else (p99.T, utilization.T)
    if x_name in vectorized or y_name in vectorized:
        # One model call per value of the other input, vectorized along rate or replicas.
        fast, slow, slow_values = (
            (x_name, y_name, ys) if x_name in vectorized else (y_name, x_name, xs)
        )
        fast_values = xs if fast == x_name else ys
        lines_p99, lines_utilization = [], []
        for value in slow_values:
            line_workload = workload.with_changes(**{slow: input_value(slow, value)})
            rates = fast_values if fast == RATE else np.array([line_workload.rate_rps])
            counts = fast_values if fast == REPLICAS else np.array([line_workload.replicas], float)
            lines_p99.append(p99_grid(line_workload, rates, counts, model).ravel())
            per_replica = capacity_per_replica_rps(line_workload, model)
            lines_utilization.append((rates / (per_replica * counts)).ravel())
        p99, utilization = np.array(lines_p99), np.array(lines_utilization)
        return (p99, utilization) if slow == y_name else (p99.T, utilization.T)
    # Neither axis is vectorized in the model: one call per cell.
    p99 = np.empty((ys.size, xs.size))
    utilization = np.empty_like(p99)
    rate, count = np.array([workload.rate_rps]), np.array([float(workload.replicas)])
    for row, y_value in enumerate(ys):
        row_workload = workload.with_changes(**{y_name: input_value(y_name, y_value)})
        for column, x_value in enumerate(xs):
            cell = row_workload.with_changes(**{x_name: input_value(x_name, x_value)})
            p99[row, column] = p99_grid(cell, rate, count, model)[0, 0]
            utilization[row, column] = cell.rate_rps / (
                capacity_per_replica_rps(cell, model) * cell.replicas
            )
    return p99, utilization


def _frontier(
    workload: Workload,
    model: ModelName,
    x_name: str,
    xs: np.ndarray,
    counts: np.ndarray,
    p99_ms: np.ndarray,
) -> np.ndarray:
    """The fewest replicas (every whole count up to the slider's maximum) meeting the target in
    each column (the column's own where the target is the x axis), NaN where none does.

    p99 is not monotone in replicas (with batching, more replicas make smaller batches that wait
    longer), so no bisection; but no count at or below ``rate / capacity per replica`` is stable,
    and none above the grid's own first meeting row can be the first. Over the rate axis, each
    column's counts between those two bounds, every column's in one model call (``p99_pairs``:
    a call costs ~1 ms before its first cell): the same answer as every count in every column
    (``tests/sdlab_model/test_grids.py``). Over any other x axis, every count, one column at a time.
    """
    target = workload.p99_target_ms
    top = int(_REPLICAS.maximum)
    if x_name != RATE:
        fewest = np.full(xs.size, np.nan)
        every_count = np.arange(1, top + 1, dtype=float)
        for column, value in enumerate(xs):
            column_workload = workload.with_changes(**{x_name: input_value(x_name, value)})
            line = p99_grid(column_workload, [column_workload.rate_rps], every_count, model)
            # The column's own target: it is the x axis on a target x replicas grid.
            meets = np.flatnonzero(line[:, 0] <= column_workload.p99_target_ms)
            fewest[column] = every_count[meets[0]] if meets.size else np.nan
        return fewest
    per_replica = capacity_per_replica_rps(workload, model)
    lowest = np.clip(np.floor(xs / per_replica), 1, top)
    meets = p99_ms <= target
    highest = np.where(meets.any(axis=0), counts[np.argmax(meets, axis=0)], top)
    lowest = np.minimum(lowest, highest)
    spans = (highest - lowest + 1).astype(int)
    starts = np.concatenate(([0], np.cumsum(spans)[:-1]))
    columns = np.repeat(np.arange(xs.size), spans)
    candidates = lowest[columns] + (np.arange(spans.sum()) - starts[columns])
    meets = p99_pairs(workload, xs[columns], candidates, model) <= target
    # Each column's first meeting candidate: the least index among its meeting cells.
    first = np.minimum.reduceat(np.where(meets, np.arange(meets.size), meets.size), starts)
    return np.where(first < meets.size, candidates[np.minimum(first, meets.size - 1)], np.nan)


def stage_grid(
    workload: Workload, shape: tuple[int, ...], axes: dict[str, np.ndarray]
) -> np.ndarray:
    """The recommended stage (1-5) in every cell, by the design rules on the cell's workload.

    ``design.recommend_stage(design.needs_of(cell, result))`` for every cell at once: the same
    need-flags as arrays, the same rules in the same order. ``axes`` maps input names to values
    broadcasting to ``shape`` (the grid's two axes); every other input is ``workload``'s. (Per
    cell, a workload and a latency result cost ~100 ms a grid, most of a Heatmaps rerun.)
    ``tests/sdlab_model/test_grids.py`` checks it against the per-cell rules. The rules read
    neither p99 nor utilization.
    """

    def value(name: str) -> np.ndarray | float:
        return np.asarray(axes[name], dtype=float) if name in axes else getattr(workload, name)

    rate, count = value("rate_rps"), value("replicas")
    models = value("models_hosted")
    tight_tail = value("p99_target_ms") <= design.TIGHT_TAIL_TARGET_MS
    needs_batching = ((rate > design.BATCHING_RATE_RPS) & ~np.asarray(tight_tail)) | (
        rate > design.BATCHING_ANY_TARGET_RATE_RPS
    )
    needs_gpu = (value("model_latency_ms") >= design.HEAVY_MODEL_LATENCY_MS) & (
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
    rules = [  # design.recommend_stage, rule by rule
        ~(batching | gpu | needs_registry | needs_autoscale),
        needs_packing,
        needs_registry & gpu,
        gpu,
        batching,
    ]
    numbers = [1, 5, 4, 3, 2]
    return np.select([np.broadcast_to(rule, shape) for rule in rules], numbers, default=1)


def scenario_lines(grid: P99Grid) -> list[str]:
    """What a grid was computed from, one ``name: value`` line each: the model, the load
    balancer and every input held fixed (the two axes vary, so they are not listed)."""
    held = grid.workload.to_dict()
    lines = [f"model: {grid.model}", f"axes: {grid.x_name} x {grid.y_name}"]
    for spec in (*CHOICE_INPUTS, *TOGGLE_INPUTS, *NUMERIC_INPUTS):
        if spec.name not in (grid.x_name, grid.y_name):
            lines.append(f"{spec.name}: {held[spec.name]}")
    return lines


def grid_columns(grid: P99Grid) -> dict[str, np.ndarray]:
    """One entry per cell in each column: the two axes' values, p99 (``inf`` where unstable),
    utilization, whether it meets the target (1 or 0) and the recommended stage."""
    x, y = np.meshgrid(grid.x_values, grid.y_values)
    axes = {}
    for name, values in ((grid.x_name, x), (grid.y_name, y)):
        axes[name] = values.ravel().astype(int if NUMERIC_BY_NAME[name].integer else float)
    return {
        **axes,
        "p99_ms": grid.p99_ms.ravel(),
        "utilization": grid.utilization.ravel(),
        "meets_target": grid.meets_target.ravel().astype(int),
        "stage": grid.stage_numbers.ravel().astype(int),
    }


def _csv_cell(value: float | int) -> str:
    """A cell as pandas' ``to_csv(float_format="%.6g")`` writes it: an integer as it is, a float
    to six significant digits (``inf`` for an unstable cell), NaN as an empty cell."""
    if isinstance(value, int):
        return str(value)
    return "" if math.isnan(value) else f"{value:.6g}"


def grid_csv(grid: P99Grid) -> str:
    """The grid as CSV (``grid_columns``) after ``#`` comment lines naming the scenario it came
    from (``scenario_lines``): read it back with ``pandas.read_csv(path, comment="#")``."""
    header = "".join(f"# {line}\n" for line in ["sdlab p99 grid", *scenario_lines(grid)])
    columns = grid_columns(grid)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(columns)
    cells = [map(_csv_cell, column.tolist()) for column in columns.values()]
    writer.writerows(zip(*cells, strict=True))
    return header + text.getvalue()
