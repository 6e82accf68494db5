"""LLM serving: TTFT, TPOT and end-to-end p99 of a continuously batching engine, what binds,
where the targets hold, the cheapest deployment, and a check against the token-level simulator."""

import streamlit as st

from sdlab_ui.llm import cards, checks, controls, diagram, fields, heatmaps, lengths, sections

st.title("LLM serving: tokens, batches and the KV cache")
st.caption(
    "An analytic model of a vLLM-style engine (continuous batching, chunked prefill, a KV cache "
    "in blocks) on a roofline of the GPU, checked against a token-level simulator. These inputs "
    "are this page's own; the sidebar's workload does not apply here."
)
cards.draw()
controls.show_notices()
values = controls.draw()
workload, problem = fields.build_workload(values, lengths.draw())
if workload is None:
    st.info(problem, icon=":material/info:")
else:
    result = sections.estimate(workload)
    sections.headline(result)
    diagram.draw(result)
    sections.binding(result)
    heatmaps.draw(workload)
    checks.cheapest(workload)
    checks.disaggregation(workload)
    checks.simulator(workload, result)
