"""The Tail at scale page's widgets and its state: values kept under ``tail.*`` in the session
and in the URL.

As the LLM page's (``sdlab_ui.llm.controls``): the values are a canonical dict in session state,
each widget a view of one value whose ``on_change`` writes it back; the URL holds the values that
differ from their defaults, read on a session's first run and on Back/Forward.
"""

from __future__ import annotations

import streamlit as st

from sdlab_model.page_params import TAIL_BY_NAME
from sdlab_ui import state
from sdlab_ui.tail.fields import parse_params, url_values
from sdlab_ui.widgets import numeric_widget

PREFIX = "tail"
_VALUES_KEY = "tail.values"
_LOADED_AT_KEY = "tail.loaded_at"
_NOTICES_KEY = "tail.notices"
WIDGET = "tail.widget."
"""Widget keys: this prefix and the input's name."""
_ROWS = (
    ("leaf_p50_ms", "leaf_p95_ms", "leaf_p99_ms"),
    ("fanout", "hedge_percentile", "base_utilization"),
)
"""The leaf's quantiles, then the fan-out and the hedge with its load."""


def current_values() -> dict:
    """The page's inputs: from the URL on a session's first run and after Back/Forward."""
    loads = state.url_loads()
    if st.session_state.get(_LOADED_AT_KEY) != loads or _VALUES_KEY not in st.session_state:
        values, notices = parse_params(state.page_params(PREFIX))
        st.session_state[_VALUES_KEY] = values
        st.session_state[_LOADED_AT_KEY] = loads
        st.session_state[_NOTICES_KEY] = tuple(notices)
    return dict(st.session_state[_VALUES_KEY])


def show_notices() -> None:
    """What the URL asked for that the page could not take as given, until the next change."""
    current_values()  # a session's first run reads the URL, and its notices, here
    notices = st.session_state.get(_NOTICES_KEY, ())
    for notice in notices[: state.MAX_NOTICES_SHOWN]:
        st.warning(notice, icon=":material/warning:")
    if len(notices) > state.MAX_NOTICES_SHOWN:
        st.warning(
            f"… and {len(notices) - state.MAX_NOTICES_SHOWN} more notices like these, not shown.",
            icon=":material/warning:",
        )


def _set(name: str) -> None:
    values = dict(st.session_state[_VALUES_KEY])
    values[name] = st.session_state[WIDGET + name]
    st.session_state[_VALUES_KEY] = values
    st.session_state[_NOTICES_KEY] = ()


def draw() -> dict:
    """Draw the inputs; returns their values, which are in the URL from here on."""
    values = current_values()
    for names in _ROWS:
        for column, name in zip(st.columns(len(names)), names, strict=True):
            with column:
                numeric_widget(TAIL_BY_NAME[name], WIDGET + name, values[name], _set, (name,))
    values = dict(st.session_state[_VALUES_KEY])
    state.set_page_params(PREFIX, url_values(values))
    return values
