"""The Tail at scale page's widgets; its values are kept under ``tail.*`` in the session and in
the URL (``sdlab_ui.page_inputs``)."""

from __future__ import annotations

import streamlit as st

from sdlab_model.page_params import TAIL_BY_NAME
from sdlab_ui import state
from sdlab_ui.page_inputs import PageInputs
from sdlab_ui.tail.fields import parse_params, url_values
from sdlab_ui.widgets import numeric_widget

PREFIX = "tail"
INPUTS = PageInputs(PREFIX, parse_params)
WIDGET = INPUTS.widget
"""Widget keys: this prefix and the input's name."""
current_values = INPUTS.current
show_notices = INPUTS.show_notices
_set = INPUTS.set_from_widget
_ROWS = (
    ("leaf_p50_ms", "leaf_p95_ms", "leaf_p99_ms"),
    ("fanout", "hedge_percentile", "base_utilization", "tie_delay_ms"),
)
"""The leaf's quantiles, then the fan-out, the hedge with its load and the tied request."""


def draw() -> dict:
    """Draw the inputs; returns their values, which are in the URL from here on."""
    values = current_values()
    for names in _ROWS:
        for column, name in zip(st.columns(len(names)), names, strict=True):
            with column:
                numeric_widget(TAIL_BY_NAME[name], WIDGET + name, values[name], _set, (name,))
    values = current_values()
    state.set_page_params(PREFIX, url_values(values))
    return values
