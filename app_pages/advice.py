"""Advice: the cheapest design that meets the target, its cost, the levers and what breaks."""

import streamlit as st

from sdlab_ui import state
from sdlab_ui.advice import hardware, sections

lab = state.current()
workload = lab.workload
st.title("Advice: what to build, and what it costs")
st.markdown(f"The current design costs **{sections.cost_line(workload)}**.")
advice = sections.recommendation(workload)
sections.frontier_chart(workload, advice)
sections.lever_table(workload)
sections.breaking_table(workload)
hardware.catalog_pricing(workload)
hardware.profile_upload(workload)
