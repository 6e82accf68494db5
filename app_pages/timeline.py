"""Timeline: traffic over time through an autoscaled fleet, cold starts, a canary rollout."""

import streamlit as st

from sdlab_ui import canary_panel, state, timeline_panel

lab = state.current()
workload = lab.workload
st.title("Timeline: traffic over time, autoscalers, cold starts and canaries")
st.caption(
    "A time-stepped model: each step is a queue at that step's rate and ready fleet, with the "
    "backlog carried from step to step; p99 is the queueing model's steady state where there is "
    "no backlog, else the wait to drain it. The queueing model is used whatever the sidebar's "
    "latency model."
)
values = timeline_panel.controls(workload)
inputs, problem = timeline_panel.build_inputs(values, workload)
if inputs is None:
    st.info(problem, icon=":material/info:")
else:
    autoscaled, fixed = timeline_panel.run_both(inputs)
    st.markdown(timeline_panel.ramp_story(autoscaled))
    st.plotly_chart(timeline_panel.timeline_figure(autoscaled), key="timeline.chart")
    st.subheader("Autoscaled against a fixed fleet sized for the peak")
    timeline_panel.totals_table(autoscaled, fixed)
    timeline_panel.simulator_check(inputs, autoscaled)
st.divider()
canary_panel.render(workload)
