"""The LLM page's heatmaps: TTFT or TPOT p99 over the request rate and one more input, on a log
colour scale, with the unstable region in grey, the target contour and the current design.

Rows are drawn at their index (labels as ticks), so uneven steps (tensor parallel 1, 2, 4, 8)
get even rows and the contour follows them. No Streamlit here.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from sdlab_model.llm import LlmHeatmap
from sdlab_model.page_params import LLM_BY_NAME, LLM_HEATMAP_AXIS
from sdlab_ui.figures import FONT, TARGET_COLOUR, log_tick_format
from sdlab_ui.heatmap_figures import log_ms_colourbar, unstable_layer
from sdlab_ui.text import ms_text
from sdlab_ui.widgets import input_label

AXIS_TITLES = {
    "rate_rps": input_label(LLM_BY_NAME["rate_rps"]),
    **{name: LLM_HEATMAP_AXIS.label_of(name) for name in LLM_HEATMAP_AXIS.choices},
}


def _row_label(field: str, value: float) -> str:
    return f"{value:,.0f}" if field != "rate_rps" else f"{value:.3g}"


def p99_figure(
    heatmap: LlmHeatmap, name: str, current: tuple[float, float], height: int = 460
) -> go.Figure:
    """``name`` ("TTFT" or "TPOT") p99 over the heatmap's grid; ``current`` is (x, y) of the
    design on the page, drawn as a marker."""
    p99 = heatmap.ttft_p99_ms if name == "TTFT" else heatmap.tpot_p99_ms
    target = heatmap.ttft_target_ms if name == "TTFT" else heatmap.tpot_target_ms
    stable = heatmap.is_stable & np.isfinite(p99)
    rows = np.arange(len(heatmap.y_values))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p99 = np.where(stable, np.log10(np.maximum(p99, 1e-3)), np.nan)
    finite = log_p99[np.isfinite(log_p99)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    high = max(high, low + 1.0)
    labels = [_row_label(heatmap.y_field, v) for v in heatmap.y_values]
    hover_rows = np.array([[label] * len(heatmap.x_values) for label in labels])
    shown = np.vectorize(ms_text)(np.where(stable, p99, np.inf))
    approximate = np.where(heatmap.approximate, " (approximate)", "")
    place = {"x": list(heatmap.x_values), "y": rows}
    figure = go.Figure()
    figure.add_trace(
        go.Heatmap(
            **place,
            z=log_p99,
            zmin=low,
            zmax=high,
            colorscale="Viridis",
            colorbar=log_ms_colourbar(low, high, f"{name} p99"),
            customdata=np.dstack([hover_rows, shown, approximate]),
            hovertemplate=f"rate %{{x:.3g}} req/s<br>{AXIS_TITLES[heatmap.y_field]} "
            f"%{{customdata[0]}}<br>{name} p99 %{{customdata[1]}}%{{customdata[2]}}<extra></extra>",
            hoverongaps=False,
            name=f"{name} p99",
        )
    )
    figure.add_trace(unstable_layer(place, stable))
    with np.errstate(invalid="ignore"):
        over = np.where(stable, log_p99 - math.log10(target), 10.0)
    figure.add_trace(
        go.Contour(
            **place,
            z=over,
            showscale=False,
            contours={"start": 0.0, "end": 0.0, "size": 1, "coloring": "none"},
            line={"color": TARGET_COLOUR, "width": 2},
            hoverinfo="skip",
            name=f"{name} target {ms_text(target)}",
            showlegend=True,
        )
    )
    if current[0] > 0:  # a rate of 0 is off the log axis
        figure.add_trace(_current_marker(current, heatmap))
    figure.update_xaxes(
        title_text=AXIS_TITLES[heatmap.x_field],
        type="log",
        tickformat=log_tick_format(min(heatmap.x_values), max(heatmap.x_values)),
    )
    figure.update_yaxes(
        title_text=AXIS_TITLES[heatmap.y_field], tickvals=rows, ticktext=labels, nticks=12
    )
    figure.update_layout(
        title={"text": f"{name} p99"},
        height=height,
        font=FONT,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 71, "r": 110, "t": 40, "b": 119},
        legend={"orientation": "h", "y": -0.25},
        template="none",
    )
    return figure


def _current_marker(current: tuple[float, float], heatmap: LlmHeatmap) -> go.Scatter:
    """The design on the page, at its rate and its row."""
    return go.Scatter(
        x=[current[0]],
        y=[heatmap.y_values.index(current[1])],
        mode="markers",
        marker={"symbol": "x", "size": 13, "color": "white", "line": {"width": 1.5}},
        name="this design",
        hoverinfo="skip",
    )
