"""Tradeoffs & sources: what each decision buys and costs, the rules and where they come from."""

import streamlit as st

from sdlab_model.sources import (
    FORMULAS,
    ORIGINAL_LAB,
    SOURCES,
    TEACHING_ASSUMPTIONS,
    TRADEOFFS,
)

st.title("Tradeoffs & sources")
st.caption(
    f"sdlab started from the [{ORIGINAL_LAB.title}]({ORIGINAL_LAB.url}) of the "
    f"{ORIGINAL_LAB.site} site (source: [yangzichao/lab]({ORIGINAL_LAB.source_url})). Its "
    "scenario cards, design rules and budget model are kept here as the teaching model; the "
    "queueing model and the simulator are sdlab's own."
)

st.subheader("Six decisions")
columns = st.columns(2)
for index, tradeoff in enumerate(TRADEOFFS):
    with columns[index % 2].container(border=True):
        st.markdown(f"**{tradeoff.title}**")
        st.markdown(
            f"- **Gain:** {tradeoff.gain}\n- **Cost:** {tradeoff.cost}\n- **When:** {tradeoff.when}"
        )

st.subheader("Source-backed rules")
st.caption("The durable claims behind the lab. The exact thresholds are teaching assumptions.")
for source in SOURCES:
    st.markdown(f"**{source.title}** — [{source.source_name}]({source.url})")
    st.caption(source.summary)

st.subheader("Teaching assumptions, and how the queueing model refines them")
for assumption in TEACHING_ASSUMPTIONS:
    with st.container(border=True):
        st.markdown(f"**{assumption.title}**")
        teaching, queueing = st.columns(2)
        teaching.markdown(f"*Teaching model.* {assumption.teaching}")
        queueing.markdown(f"*Queueing model.* {assumption.queueing_refinement}")

st.subheader("Formulas")
for formula in FORMULAS:
    st.markdown(f"**{formula.title}**")
    st.latex(formula.latex)
    st.write(formula.explanation)
    st.caption(f"Reference: {formula.reference}")
