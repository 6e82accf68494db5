"""Lab: the workload in the sidebar, the architecture, the numbers and why they change."""

from sdlab_ui import cache, cards, compare, figures, panels, state

lab = state.current()
view = cache.lab_view(lab.workload, lab.model, lab.residency)

# The stylesheet, the title and its lead, then the p99 and the diagram: both in view on a laptop
# screen without scrolling.
panels.headline(view.result, header=True)
panels.sticky_summary(view.result)
compare.section(view, lab)
panels.architecture(view)
# Each heading ends the Markdown element above it: every element is a message on every rerun.
panels.recommended_shape(view.result, then=cards.HEADING)
cards.scenario_cards(heading=False)
cards.walkthrough()
panels.breakdown(view)
panels.analysis(view.result, then=panels.accuracy_heading(view))
panels.accuracy(view, heading=False, then=panels.DOWNLOADS_HEADING)
panels.report_downloads(view, heading=False)
panels.scenario_files(lab)
figures.preload_plotly_once()
