"""Tail at scale: a request fanned out to many leaves waits for the slowest, and hedged requests
cut that tail for a little extra load (Dean & Barroso, CACM 2013)."""

import streamlit as st

from sdlab_ui.tail import checks, controls, fields, heatmap, sections

st.title("Tail at scale: fan-out and hedged requests")
st.caption(
    "A request sent to N leaves waits for all of them, so it reads each leaf's rare slow "
    "answers; hedging sends a second copy after a delay and takes the first answer. The leaf "
    "is fitted to its p50, p95 and p99 (a lognormal body, a power-law tail). These inputs are "
    "this page's own; the sidebar's workload does not apply here."
)
controls.show_notices()
values = controls.draw()
inputs, problem = fields.build_inputs(values)
if inputs is None:
    st.info(problem, icon=":material/info:")
else:
    result = sections.judged(inputs)
    sections.headline(result)
    sections.arithmetic(result)
    sections.tied(result)
    heatmap.draw(inputs)
    checks.simulator(inputs)
