"""Lab: the workload in the sidebar, the architecture, the numbers and why they change."""

from sdlab_ui import cache, diagram, figures, state
from sdlab_ui.lab import cards, compare, headline, scenario_files, sections

lab = state.current()
view = cache.lab_view(lab.workload, lab.model, lab.residency)

# The stylesheet, the title and its lead, then the p99 and the diagram: both in view on a laptop
# screen without scrolling.
headline.headline(view.result, header=True)
compare.section(view, lab)
diagram.architecture(view)
# Each heading ends the Markdown element above it: every element is a message on every rerun.
sections.recommended_shape(view.result, then=cards.HEADING)
cards.scenario_cards(heading=False)
cards.walkthrough()
sections.breakdown(view)
sections.analysis(view.result, then=sections.accuracy_heading(view))
sections.accuracy(view, heading=False, then=sections.DOWNLOADS_HEADING)
sections.report_downloads(view, heading=False)
scenario_files.restore_from_file(lab)
figures.preload_plotly_once()
