"""Lab: the workload in the sidebar, the architecture, the numbers and why they change."""

import streamlit as st

from sdlab_ui import cache, cards, panels, state

lab = state.current()
view = cache.lab_view(lab.workload, lab.model)

st.title("System Design Lab: real-time model serving")
st.markdown(
    "Serving a model in real time is a trade between throughput and the tail: dynamic batching "
    "and GPUs buy capacity, and each spends part of your **p99 budget**. Move the workload in the "
    "sidebar and watch the recommended architecture, the bottlenecks and the p99 respond — from "
    "one endpoint to batching, GPU autoscaling, a registry with canaries and multi-model packing."
)
cards.scenario_cards()
cards.walkthrough()
panels.headline(view.result, view.sim)

left, right = st.columns([3, 2], gap="large")
with left:
    panels.architecture(view)
with right:
    panels.recommended_shape(view.result)
panels.breakdown(view)
panels.meters(view.result)
panels.decisions(view.result)
panels.reasons(view.result)
panels.accuracy(view)
panels.scenario_files(lab)
