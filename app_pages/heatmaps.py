"""Heatmaps: p99 over any two inputs for the current settings, and the 2 x 2 tradeoffs."""

import functools

import streamlit as st

from sdlab_model import grids
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_ui import cache, downloads, figures, state
from sdlab_ui.heatmaps import controls, verify

lab = state.current()
workload = lab.workload
st.title("Heatmaps: where the p99 budget holds")
axes = controls.choose_axes()
x_label, y_label = (figures.label_in_prose(NUMERIC_BY_NAME[name].label) for name in axes)
frontier = "; the dotted fuchsia line is the fewest replicas that meet the target" * (
    axes[1] == grids.REPLICAS
)
# On a target axis the line is where p99 equals each cell's own target.
target_line = "p99 target" + " (each cell's own)" * (grids.TARGET in axes)
st.caption(
    f"Every input but {x_label} and {y_label} is held at the sidebar's value. Colour is p99 on "
    f"a log scale; the red line is the {target_line}; grey cells are unstable (arrivals at or "
    f"above capacity, p99 = ∞){frontier}; the star is the current setting. Click a cell to load it "
    "into the lab. Hovering a cell gives its p99, utilization and recommended stage: "
    + "; ".join(figures.STAGE_LABELS.values())
    + "."
)
with st.spinner("Computing the grid…"):
    main_grid = cache.grid(workload, lab.model, axes)
st.plotly_chart(
    cache.heatmap_figure(workload, lab.model, axes),
    key=controls.MAIN_CHART_KEY,
    on_select=functools.partial(controls.load_clicked_cell, axes),
    selection_mode="points",
)
# Made when clicked, not on every rerun: see lab.sections.report_downloads.
downloads.button(
    "Download the grid as CSV",
    functools.partial(grids.grid_csv, main_grid),
    file_name=f"sdlab-p99-grid-{axes[0]}-{axes[1]}-{lab.model}.csv",
    mime="text/csv",
    key="heatmap.csv",
)

# Built only when opened: each 2 x 2 view is four more grids and a figure.
with st.expander(
    "Batching and GPUs at a glance", key="heatmap.multiples_open", on_change="rerun"
) as section:
    if section.open:
        st.caption(
            "Request rate x replicas with batching off/on and on CPU/GPU replicas, on one colour "
            "scale; the red line is the p99 target. Hover gives each cell's p99."
        )
        st.plotly_chart(cache.small_multiples_figure(workload, lab.model), key="heatmap.multiples")

if lab.model == "queueing":
    with st.expander(
        "Load-balancer policy at a glance", key="heatmap.policies_open", on_change="rerun"
    ) as section:
        if section.open:
            st.caption(
                "Request rate x replicas under each policy. Each replica batches on its own, so "
                "how evenly the balancer spreads requests sets the batch sizes and the queueing; "
                "the central queue is the idealized fleet-wide batcher, for comparison."
            )
            st.plotly_chart(
                cache.policy_multiples_figure(workload, lab.model), key="heatmap.policies"
            )

verify.simulation_check(lab)
