"""sdlab: the System Design Lab for real-time model serving. Run with ``streamlit run app.py``.

Pages live in ``app_pages/``, not ``pages/``: Streamlit treats a ``pages/`` folder next to the
entry script as its legacy multipage mechanism, which fights ``st.navigation``.
"""

from pathlib import Path

import streamlit as st

from sdlab_ui import forged, sidebar, state, uploads
from sdlab_ui.server import runs, sockets, warmup

_PAGES_DIR = Path(__file__).parent / "app_pages"

st.set_page_config(page_title="sdlab · model serving", page_icon="🧪", layout="wide")
if "sdlab.nodelay" not in st.session_state:  # once per session: its connection is open now
    st.session_state["sdlab.nodelay"] = sockets.ensure_nodelay()
warmup.start()  # the model's numba kernels, compiled in the background once per server process
forged.install_log_filter()


_PAGES = (
    # file, title, icon, URL path (the Lab is the default page, at the root)
    ("lab.py", "Lab", ":material/science:", None),
    ("heatmaps.py", "Heatmaps", ":material/grid_on:", "heatmaps"),
    ("timeline.py", "Timeline", ":material/timeline:", "timeline"),
    ("advice.py", "Advice & cost", ":material/payments:", "advice"),
    ("residency.py", "Models and memory", ":material/memory:", "residency"),
    ("llm.py", "LLM serving", ":material/chat:", "llm"),
    ("tail.py", "Tail at scale", ":material/call_split:", "tail"),
    ("overload.py", "Overload", ":material/traffic:", "overload"),
    ("tradeoffs.py", "Tradeoffs & sources", ":material/menu_book:", "tradeoffs"),
)


_PAGES_KEY = "sdlab.pages"


def _session_pages() -> list:
    """This session's pages, made on its first run and kept for its others.

    Each ``st.Page`` looks its file up on the disk, which on every run showed in the load test's
    p95 (docs/performance.md). Per session, not per process: ``st.navigation`` marks the page it
    returns, and that page's ``run`` clears the mark.
    """
    if _PAGES_KEY not in st.session_state:
        st.session_state[_PAGES_KEY] = [
            st.Page(_PAGES_DIR / file, title=title, icon=icon, url_path=path, default=not path)
            for file, title, icon, path in _PAGES
        ]
    return st.session_state[_PAGES_KEY]


page = st.navigation(_session_pages())
# The sidebar, then the page (the Lab's summary line sits at the sidebar's top). The page is
# drawn even when the sidebar fails, so what went wrong is shown where the visitor looks.
# A value only a forged message sends: reset, say so, one log line (sdlab_ui/forged.py).
with forged.recovering(), runs.slot():  # a few runs draw at a time (sdlab_ui/server/runs.py)
    forged.show_notice()
    state.show_notices()
    warmup.notice()
    try:
        sidebar.render(summary=page.title == "Lab")
    finally:
        try:
            page.run()
        finally:
            uploads.release_this_sessions_unused()  # Streamlit keeps them till the end
