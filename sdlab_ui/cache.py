"""Cached, bounded wrappers around the model: what the pages call instead of the model directly.

Every cache has ``max_entries``, so a visitor moving sliders for an hour cannot make the server
hold unbounded results. Data results use ``st.cache_data`` (each caller gets its own copy).
Plotly figures use ``st.cache_resource``: ``st.cache_data`` would pickle a figure on every hit,
and unpickling a figure re-validates every trace, which costs more than drawing it; the figures
are never mutated after they are built, so sharing one object is safe.
"""

from __future__ import annotations

from dataclasses import replace

import plotly.graph_objects as go
import streamlit as st

from sdlab_model import evaluate
from sdlab_model.assessment import Assessment, ModelName
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui import figures, grids

_GRID_AXES = ("rate_rps", "replicas")
SMALL_MULTIPLES: tuple[tuple[str, dict[str, bool]], ...] = (
    ("CPU, batching off", {"dynamic_batching": False, "gpu": False}),
    ("CPU, batching on", {"dynamic_batching": True, "gpu": False}),
    ("GPU, batching off", {"dynamic_batching": False, "gpu": True}),
    ("GPU, batching on", {"dynamic_batching": True, "gpu": True}),
)


@st.cache_data(max_entries=512, show_spinner=False)
def assessment(workload: Workload, model: ModelName) -> Assessment:
    """``sdlab_model.evaluate``, cached."""
    return evaluate(workload, model)


def _grid_key(workload: Workload) -> Workload:
    """The workload with the grid's own axes at their defaults: moving the rate or replicas
    slider moves the marker, not the grid, so it should not recompute the grid."""
    return workload.with_changes(**{n: NUMERIC_BY_NAME[n].default for n in _GRID_AXES})


@st.cache_data(max_entries=32, show_spinner=False)
def _grid(key: Workload, model: ModelName) -> grids.P99Grid:
    return grids.compute_grid(key, model)


def grid(workload: Workload, model: ModelName) -> grids.P99Grid:
    """The p99 grid for ``workload`` (cached on everything but rate and replicas)."""
    return replace(_grid(_grid_key(workload), model), workload=workload)


@st.cache_resource(max_entries=32, show_spinner=False)
def heatmap_figure(workload: Workload, model: ModelName) -> go.Figure:
    """The main p99 heatmap."""
    return figures.p99_heatmap(grid(workload, model))


@st.cache_resource(max_entries=16, show_spinner=False)
def small_multiples_figure(workload: Workload, model: ModelName) -> go.Figure:
    """Batching off/on x CPU/GPU, one colour scale."""
    panels = [grid(workload.with_changes(**changes), model) for _, changes in SMALL_MULTIPLES]
    return figures.small_multiples(panels, [title for title, _ in SMALL_MULTIPLES])


@st.cache_data(max_entries=32, show_spinner=False)
def grid_csv(workload: Workload, model: ModelName) -> str:
    """The grid as CSV text for the download button."""
    return grids.grid_csv(grid(workload, model))
