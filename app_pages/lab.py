"""Lab: the workload in the sidebar, the architecture, the numbers and why they change."""

import streamlit as st

from sdlab_ui import cache, cards, compare, figures, panels, state

lab = state.current()
view = cache.lab_view(lab.workload, lab.model, lab.residency)

# The title and its lead as one element: each element is a message on every rerun.
st.markdown(
    "# System Design Lab: real-time model serving\n\n"
    "Dynamic batching and GPUs buy capacity, and each spends part of your **p99 budget**. Move "
    "the workload in the sidebar or load a scenario below, and watch the architecture respond."
)
panels.lab_style()  # before the headline it styles
# The p99 and the diagram first, so both are in view on a laptop screen without scrolling.
panels.headline(view.result, view.sim)
panels.sticky_summary(view.result, view.sim)
compare.section(view, lab)
panels.architecture(view)
panels.recommended_shape(view.result)
cards.scenario_cards()
cards.walkthrough()
panels.breakdown(view)
panels.analysis(view.result)
panels.accuracy(view)
panels.report_downloads(view)
panels.scenario_files(lab)
figures.preload_plotly_once()
