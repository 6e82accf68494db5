"""Drawing a page leaves for the end of its run, after the shared sidebar.

The Lab's diagram waits for Graphviz's ``dot``, a separate process: 15–30 ms of wall time, little
of the server's CPU. Started first and drawn last, it runs while the rest of the page and the
sidebar are drawn, instead of holding them up (``diagram.architecture``). ``app.py`` clears the
list at the start of every run (a run cut short by a newer one leaves its own behind) and calls
``run`` once the sidebar is drawn.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

_KEY = "sdlab.deferred"


def clear() -> None:
    """Forget what an earlier run left (every run starts with none)."""
    st.session_state[_KEY] = []


def defer(draw: Callable[[], None]) -> None:
    """Call ``draw`` at the end of this run (in the order deferred)."""
    st.session_state.setdefault(_KEY, []).append(draw)


def run() -> None:
    """Draw everything this run deferred."""
    draws, st.session_state[_KEY] = st.session_state.get(_KEY, []), []
    for draw in draws:
        draw()
