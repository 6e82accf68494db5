"""What the browser tests look for on a page, in one place."""

import json

from sdlab_ui.lab.style import LAB_TITLE

DIAGRAM_SVG = '.sdlab-diagram svg, [data-testid="stGraphVizChart"] svg'
"""The architecture diagram: drawn on the server as SVG, or by the browser without Graphviz."""
EXCEPTION = '[data-testid="stException"]'
HEADLINE_P99 = '.sdlab-headline .sdlab-metric[data-label^="p99"]'
"""The Lab's headline p99 ("p99" or "p99 (simulated)"); its value is ``.sdlab-metric-value``."""
PLOTLY = (
    '[data-testid="stPlotlyChart"] .js-plotly-plot'
    ":not(.st-key-sdlab-plotly-preload .js-plotly-plot)"
)
"""A plotly chart on the page, but for the hidden one a session's first Lab run draws."""
SETTLED_JS = "() => Date.now() >= (history.sdlabSettledAt ?? 0)"
"""True once the last change has settled: the next one gets its own Back entry (a change made
sooner replaces it, as a run of slider key steps does)."""
IDLE_JS = (
    '() => !document.querySelector(\'[data-testid="stStatusWidget"], '
    '[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], '
    '[data-testid="stAppSkeleton"]\')'
)
"""True once no script run is in progress (Streamlit's running-man widget is gone) and every
element is drawn: Streamlit shows a skeleton while an element's code is still loading, so on a
first load a Markdown element can be on screen before the metrics and widgets beside it."""
LAB_TITLE_JS = f"""() => [...document.querySelectorAll('h1')]
    .some(h => h.innerText.includes({json.dumps(LAB_TITLE)}))"""
"""True once the Lab's title is on the screen."""
COMPILING_NOTICE = ".st-key-sdlab-compiling"
"""The line a page shows while the model's compiled kernels are being prepared."""
