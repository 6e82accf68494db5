"""Models and memory: what stays loaded on a replica, what a miss costs, and where models live."""

import streamlit as st

from sdlab_model.wording import count
from sdlab_ui import state
from sdlab_ui.residency import sections
from sdlab_ui.text import replicas_text

lab = state.current()
st.title("Models and memory")
st.caption(
    f"{count(lab.workload.models_hosted, 'model')} at {lab.workload.rate_rps:,.0f} req/s on "
    f"{replicas_text(lab.workload.replicas)} (set in the sidebar): which placement keeps the p99 "
    "under the target, counting the time models take to load."
)
sections.inputs_form(lab.residency)
if not lab.workload.gpu:
    st.info(
        "Residency is modelled for GPU replicas, whose accelerator memory limits what stays "
        "loaded: turn on GPU acceleration in the sidebar.",
        icon=":material/memory:",
    )
else:  # (not st.stop(): the app draws the sidebar after the page, and a stopped run cannot)
    plan = sections.cached_plan(lab.workload, lab.residency)
    sections.summary(plan)
    sections.placements_table(plan)
    sections.simulation_check(plan)
    sections.recommendation(plan)
