"""The Heatmaps page's own controls: which two inputs the main heatmap spans, and loading a
clicked cell into the lab.

The axes are the page's state, not the lab's (they change what is drawn, not the design), kept
under this module's key so that they survive a visit to another page (Streamlit drops the state
of widgets that are not drawn). A click goes through ``state.load``, like a card or a file.
"""

from __future__ import annotations

import math

import streamlit as st

from sdlab_model import grids
from sdlab_model.params import NUMERIC_BY_NAME, NUMERIC_INPUTS
from sdlab_ui import state
from sdlab_ui.widgets import linear_step, show_value

_AXES_KEY = "sdlab.heatmap_axes"
X_WIDGET_KEY = "heatmap.x_axis"
Y_WIDGET_KEY = "heatmap.y_axis"
MAIN_CHART_KEY = "heatmap.main"
_AXIS_NAMES = tuple(spec.name for spec in NUMERIC_INPUTS)


def current_axes() -> tuple[str, str]:
    """The (x, y) inputs the main heatmap spans: request rate x replicas until chosen."""
    return st.session_state.get(_AXES_KEY, grids.DEFAULT_AXES)


def choose_axes() -> tuple[str, str]:
    """Two pickers, x and y, over every numeric input; picking the other axis's input swaps."""
    x_name, y_name = current_axes()
    left, right = st.columns(2)
    for column, key, value, label in (
        (left, X_WIDGET_KEY, x_name, "Across (x axis)"),
        (right, Y_WIDGET_KEY, y_name, "Up (y axis)"),
    ):
        show_value(key, value)  # the page's state wins every run, as in state.py
        column.selectbox(
            label,
            _AXIS_NAMES,
            key=key,
            format_func=lambda name: NUMERIC_BY_NAME[name].label,
            on_change=_on_axis_change,
        )
    return current_axes()


def _on_axis_change() -> None:
    old_x, old_y = current_axes()
    x_name, y_name = st.session_state[X_WIDGET_KEY], st.session_state[Y_WIDGET_KEY]
    if x_name not in _AXIS_NAMES or y_name not in _AXIS_NAMES:  # a forged message
        return
    if x_name == y_name:  # picked the other axis's input: swap the two
        x_name, y_name = (x_name, old_x) if x_name != old_x else (old_y, y_name)
    st.session_state[_AXES_KEY] = (x_name, y_name)


def clicked_value(name: str, value: float) -> float | int:
    """A clicked cell's value of input ``name`` as its slider would show it: whole numbers,
    the linear slider's step, three significant figures on a log slider; within the range."""
    spec = NUMERIC_BY_NAME[name]
    value = min(max(float(value), float(spec.minimum)), float(spec.maximum))
    if spec.integer:
        return round(value)
    if spec.scale == "linear":
        step = linear_step(spec)
        return min(round(round(value / step) * step, 6), float(spec.maximum))
    digits = 2 - math.floor(math.log10(abs(value))) if value else 0
    return min(max(round(value, digits), float(spec.minimum)), float(spec.maximum))


def load_clicked_cell(axes: tuple[str, str]) -> None:
    """``on_select`` of the main heatmap: load the clicked cell's two values into the lab."""
    event = st.session_state.get(MAIN_CHART_KEY)
    points = (event or {}).get("selection", {}).get("points", [])
    point = next((p for p in points if _is_number(p.get("x")) and _is_number(p.get("y"))), None)
    if point is None:
        return
    changes = {
        name: clicked_value(name, point[coordinate])
        for name, coordinate in zip(axes, "xy", strict=True)
    }
    try:
        state.load(state.current().workload.with_changes(**changes))
    except ValueError:  # a forged selection outside what the inputs take: keep the lab
        return


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)
