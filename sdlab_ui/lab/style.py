"""The Lab's stylesheet, title and lead: one Markdown element at the top of the page."""

from __future__ import annotations

import streamlit as st

LAB_TITLE = "System Design Lab: real-time model serving"
_LAB_LEAD = (
    "Dynamic batching and GPUs buy capacity, and each spends part of your **p99 budget**. Move "
    "the workload in the sidebar or load a scenario below, and watch the architecture respond."
)
_LAB_STYLE_SOURCE = """<style>
[data-testid="stSidebar"] :has(.sdlab-summary) { background-color: inherit; }
[data-testid="stSidebar"] [data-testid="stElementContainer"]:has(.sdlab-summary) {
  position: sticky; top: 0; z-index: 5; flex-shrink: 0; background-color: inherit;
  padding: 0.35rem 0 0.25rem; border-bottom: 1px solid rgba(128, 128, 128, 0.3);
}
[data-testid="stElementContainer"]:has(.sdlab-summary) p { font-size: 0.9rem; }
.st-key-lab-cards { gap: 0.75rem; align-items: stretch; }
.st-key-lab-cards > div { flex: 1 1 0; min-width: 9rem; }
.st-key-lab-cards [data-testid="stButton"], .st-key-lab-cards button { height: 100%; }
.st-key-lab-cards button { justify-content: flex-start; align-items: flex-start;
  padding: 0.6rem 0.85rem; }
.st-key-lab-cards button p { white-space: normal; font-size: 0.875rem; }
.sdlab-headline { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 0.5rem 2.5rem; }
.sdlab-metric-label { font-size: 0.875rem; opacity: 0.75; }
.sdlab-metric-value { font-size: 2.25rem; line-height: 1.3; white-space: nowrap; }
.sdlab-metric-delta { display: inline-block; font-size: 0.875rem; padding: 0 0.45rem;
  border-radius: 0.5rem; }
.sdlab-metric-delta.good { color: rgb(9, 171, 59); background: rgba(9, 171, 59, 0.1); }
.sdlab-metric-delta.bad { color: rgb(255, 43, 43); background: rgba(255, 43, 43, 0.1); }
.sdlab-headline table { flex: 1 1 24rem; margin: 0; align-self: center; }
.sdlab-diagram ~ p { font-size: 0.875rem;
  color: color-mix(in srgb, currentColor 60%, transparent); }
.sdlab-diagram, [data-testid="stGraphVizChart"] { overflow-x: auto; }
[data-testid="stGraphVizChart"] svg { min-width: 46rem; }
@media (max-width: 46rem) {
  .sdlab-diagram::before, [data-testid="stGraphVizChart"]::before {
    content: "Swipe sideways to see the whole diagram."; display: block; position: sticky;
    left: 0; font-size: 0.8rem; opacity: 0.7; }
  .sdlab-headline table { font-size: 0.875rem; }
  .sdlab-headline th, .sdlab-headline td { padding: 0.25rem 0.4rem; }
}
</style>"""
"""The Lab's stylesheet: the summary line's rules (``headline.sticky_summary``), the scenario cards'
(``cards.scenario_cards``: five buttons of equal width and height, each card's text from its top),
the headline numbers' (``headline.headline``: drawn as Streamlit draws a metric, with its delta
colours) and the diagram's (never under its own size, so its text stays legible: a phone scrolls
it sideways, with a hint)."""
_LAB_STYLE = " ".join(_LAB_STYLE_SOURCE.split())
"""The stylesheet on one line: Streamlit dedents every Markdown text line by line on every rerun."""
HEADER = f"{_LAB_STYLE}\n\n# {LAB_TITLE}\n\n{_LAB_LEAD}"


def lab_header() -> None:
    """The Lab's stylesheet, title and lead as one element (each element is a message to the
    browser on every rerun, and ``st.html`` costs more than Markdown: it first checks whether its
    text names a file). All of it is literal text. (``headline`` draws it with the numbers.)"""
    st.markdown(HEADER, unsafe_allow_html=True)
