"""Lab: the workload in the sidebar, the architecture, the numbers and why they change."""

import streamlit as st

from sdlab_ui import cache, cards, panels, state

lab = state.current()
result = cache.assessment(lab.workload, lab.model)
queueing = cache.assessment(lab.workload, "queueing")
teaching = cache.assessment(lab.workload, "teaching")
sim = cache.simulation(lab.workload)

st.title("System Design Lab: real-time model serving")
st.markdown(
    "Serving a model in real time is a trade between throughput and the tail: dynamic batching "
    "and GPUs buy capacity, and each spends part of your **p99 budget**. Move the workload in the "
    "sidebar and watch the recommended architecture, the bottlenecks and the p99 respond — from "
    "one endpoint to batching, GPU autoscaling, a registry with canaries and multi-model packing."
)
cards.scenario_cards()
cards.walkthrough()

left, right = st.columns([3, 2], gap="large")
with left:
    panels.architecture(result)
with right:
    panels.recommended_shape(result)
    panels.headline(result, sim)
panels.breakdown(result, teaching if lab.model == "queueing" else queueing)
panels.meters(result)
panels.decisions(result)
panels.reasons(result)
panels.accuracy(queueing, teaching, sim)
panels.scenario_files(lab)
