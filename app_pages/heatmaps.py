"""Heatmaps: p99 over request rate x replicas for the current settings, and the 2 x 2 tradeoff."""

import functools

import streamlit as st

from sdlab_ui import cache, figures, grids, panels, state

lab = state.current()
workload = lab.workload
st.title("Heatmaps: where the p99 budget holds")
st.caption(
    "Every input but request rate and replicas is held at the sidebar's value. Colour is p99 on "
    "a log scale; the red line is the p99 target; grey cells are unstable (arrivals at or above "
    "capacity, p99 = ∞); the dotted fuchsia line is the fewest replicas that meet the target; "
    "the star is the current setting. Hovering a cell of the main heatmap gives its p99, "
    "utilization and recommended stage: " + "; ".join(figures.STAGE_LABELS.values()) + "."
)

st.plotly_chart(cache.heatmap_figure(workload, lab.model), key="heatmap.main")
# Made when clicked (a callable), not on every rerun: see panels.scenario_files.
st.download_button(
    "Download the grid as CSV",
    functools.partial(grids.grid_csv, cache.grid(workload, lab.model)),
    file_name=f"sdlab-p99-grid-{lab.model}.csv",
    mime="text/csv",
    key="heatmap.csv",
    on_click="ignore",
)

st.subheader("Batching and GPUs at a glance")
st.caption(
    "The same grid with batching off/on and on CPU/GPU replicas, on one colour scale; the red "
    "line is the p99 target. Hover gives each cell's p99."
)
st.plotly_chart(cache.small_multiples_figure(workload, lab.model), key="heatmap.multiples")

if lab.model == "queueing":
    st.subheader("Load-balancer policy at a glance")
    st.caption(
        "The same grid under each policy. Each replica batches on its own, so how evenly the "
        "balancer spreads requests sets the batch sizes and the queueing; the central queue is "
        "the idealized fleet-wide batcher, for comparison."
    )
    st.plotly_chart(cache.policy_multiples_figure(workload, lab.model), key="heatmap.policies")

panels.simulation_check(lab)
