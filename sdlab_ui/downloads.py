"""Report downloads: each built once per design, under the budget.

A download button's callable runs when the file is asked for, in a worker thread of the server,
with no rerun: a visitor (or a script speaking the protocol) can ask again and again. An HTML
report costs a fraction of a second of CPU and ~5 MB (plotly.js inlined), so each build takes
the budget's ``PYTHON`` lane (``sdlab_ui/server/budget.py``) and the last few reports are kept, one
per design: asking again for the same design costs a lookup, and Streamlit's media store keeps one
copy of a file however often it is served (its file ids hash the content).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from sdlab_ui.cache import shared_cache
from sdlab_ui.server import budget


@dataclass(frozen=True)
class ReportRequest:
    """A report of one design: equal requests (same ``design``) share one build."""

    design: Hashable
    """What the report depends on, e.g. ``(workload, model, link_query)``."""
    build: Callable[[], str] = field(compare=False, repr=False)


@shared_cache(maxsize=4)  # ~5 MB a report: the designs a few visitors download at once
def built_report(request: ReportRequest) -> str:
    """``request.build()`` under the ``PYTHON`` lane, once per design while it is kept."""
    with budget.slot(budget.PYTHON):
        return request.build()
