"""Timeline: traffic over time through an autoscaled fleet, cold starts, a canary rollout."""

import streamlit as st

from sdlab_model.timeline.comparison import compare_with_fixed
from sdlab_ui import state
from sdlab_ui.timeline import canary, controls, sections

lab = state.current()
workload = lab.workload
st.title("Timeline: traffic over time, autoscalers, cold starts and canaries")
st.caption(
    "A time-stepped model: each step is a queue at that step's rate and ready fleet, with the "
    "backlog carried from step to step; p99 is the queueing model's steady state where there is "
    "no backlog, else the wait to drain it. The queueing model is used whatever the sidebar's "
    "latency model."
)
values = controls.draw(workload)
inputs, problem = controls.build_inputs(values, workload)
if inputs is None:
    st.info(problem, icon=":material/info:")
else:
    autoscaled, fixed = sections.run_both(inputs)
    st.markdown(sections.ramp_story(autoscaled))
    band = sections.hpa_band_caption(inputs)
    if band:
        st.caption(band)
    st.plotly_chart(sections.timeline_figure(autoscaled), key="timeline.chart")
    st.subheader("Autoscaled against a fixed fleet sized for the peak")
    st.markdown(state.plain_text(compare_with_fixed(autoscaled, fixed).sentence))
    sections.totals_table(autoscaled, fixed)
    sections.simulator_check(inputs, autoscaled)
st.divider()
canary.render(workload)
