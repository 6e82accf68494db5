"""TTFT and TPOT p99 over any two numeric inputs: the page's heatmaps, one numpy pass.

``llm_heatmap(base, x_field, x_values, y_field, y_values)`` varies two fields of ``base`` (names
from ``INPUT_RANGES``) over a grid and returns the analytic p99s, ∞ where unstable, with the
``approximate`` flag per cell; the targets are ``base``'s, for the page's contour lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdlab_model.llm.analytic import llm_grid
from sdlab_model.llm.calibration import DEFAULT_EFFICIENCY
from sdlab_model.llm.iteration import EngineEfficiency
from sdlab_model.llm.workload import INPUT_RANGES, LlmWorkload

MAX_CELLS = 4096


@dataclass(frozen=True)
class LlmHeatmap:
    """p99s (ms) on a grid: rows follow ``y_values``, columns ``x_values``."""

    x_field: str
    x_values: tuple[float, ...]
    y_field: str
    y_values: tuple[float, ...]
    ttft_p99_ms: np.ndarray
    tpot_p99_ms: np.ndarray
    is_stable: np.ndarray
    approximate: np.ndarray
    ttft_target_ms: float
    tpot_target_ms: float


def llm_heatmap(
    base: LlmWorkload,
    x_field: str,
    x_values,
    y_field: str,
    y_values,
    efficiency: EngineEfficiency = DEFAULT_EFFICIENCY,
) -> LlmHeatmap:
    """The analytic TTFT and TPOT p99 at every (x, y); ``ValueError`` on an unknown field, a
    value outside its range, the same field twice or more than ``MAX_CELLS`` cells."""
    for field in (x_field, y_field):
        if field not in INPUT_RANGES:
            raise ValueError(f"unknown input {field!r}; choose from {sorted(INPUT_RANGES)}")
    if x_field == y_field:
        raise ValueError(f"the two axes must differ, got {x_field!r} twice")
    xs, ys = tuple(x_values), tuple(y_values)
    if not xs or not ys or len(xs) * len(ys) > MAX_CELLS:
        raise ValueError(f"a heatmap needs 1 to {MAX_CELLS} cells, got {len(xs)} × {len(ys)}")
    workloads = [base.with_changes(**{x_field: x, y_field: y}) for y in ys for x in xs]
    grid = llm_grid(workloads, efficiency, quantiles=(0.99,), with_e2e=False)
    shape = (len(ys), len(xs))
    return LlmHeatmap(
        x_field=x_field,
        x_values=xs,
        y_field=y_field,
        y_values=ys,
        ttft_p99_ms=grid.ttft_ms[:, 0].reshape(shape),
        tpot_p99_ms=grid.tpot_ms[:, 0].reshape(shape),
        is_stable=grid.stable.reshape(shape),
        approximate=grid.approximate.reshape(shape),
        ttft_target_ms=base.ttft_p99_target_ms,
        tpot_target_ms=base.tpot_p99_target_ms,
    )
