"""Advice: the cheapest design that meets the target, its cost, the levers and what breaks."""

import streamlit as st

from sdlab_ui import advice_panel, hardware_panel, state

lab = state.current()
workload = lab.workload
st.title("Advice: what to build, and what it costs")
st.markdown(f"The current design costs **{advice_panel.cost_line(workload)}**.")
advice = advice_panel.recommendation(workload)
advice_panel.frontier_chart(workload, advice)
advice_panel.lever_table(workload)
advice_panel.breaking_table(workload)
hardware_panel.catalog_pricing(workload)
hardware_panel.profile_upload(workload)
