"""The Tail at scale page's heatmap: the hedged request's p99.9 (load fed back) over fan-out and
the hedge percentile, on a log colour scale, unstable rows in grey, the current design marked.

Rows are drawn at their index (percentiles as ticks), so the crowded top percentiles (99, 99.5,
99.9) get rows as wide as the rest. No Streamlit here.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from sdlab_model.page_params import TAIL_BY_NAME
from sdlab_model.tail import TailHeatmap
from sdlab_ui.figures import FONT, TEMPLATE, log_tick_format
from sdlab_ui.heatmap_figures import log_ms_colourbar, unstable_layer
from sdlab_ui.text import ms_text
from sdlab_ui.widgets import input_label

X_TITLE = input_label(TAIL_BY_NAME["fanout"])
Y_TITLE = input_label(TAIL_BY_NAME["hedge_percentile"])


def _current_marker(current: tuple[int, float], heatmap: TailHeatmap) -> go.Scatter:
    """The design on the page, at its fan-out and its percentile's row."""
    return go.Scatter(
        x=[current[0]],
        y=[heatmap.percentiles.index(current[1])],
        mode="markers",
        marker={"symbol": "x", "size": 13, "color": "white", "line": {"width": 1.5}},
        name="this design",
        hoverinfo="skip",
    )


def hedged_figure(heatmap: TailHeatmap, current: tuple[int, float], height: int = 460) -> go.Figure:
    """The grid's quantile in ms; ``current`` is (fan-out, percentile) of the page's design."""
    name = f"p{heatmap.quantile * 100:g}, hedged"
    values = heatmap.quantile_ms
    stable = heatmap.stable & np.isfinite(values)
    rows = np.arange(len(heatmap.percentiles))
    log_ms = np.where(stable, np.log10(np.where(stable, np.maximum(values, 1e-6), 1.0)), np.nan)
    finite = log_ms[np.isfinite(log_ms)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    high = max(high, low + 1.0)
    labels = [f"p{p:g}" for p in heatmap.percentiles]
    hover_rows = np.array([[label] * len(heatmap.fanouts) for label in labels])
    shown = np.vectorize(ms_text)(np.where(stable, values, np.inf))
    place = {"x": list(heatmap.fanouts), "y": rows}
    figure = go.Figure()
    figure.add_trace(
        go.Heatmap(
            **place,
            z=log_ms,
            zmin=low,
            zmax=high,
            colorscale="Viridis",
            colorbar=log_ms_colourbar(low, high, f"request {name}"),
            customdata=np.dstack([hover_rows, shown]),
            hovertemplate="fan-out %{x:,}<br>hedge at the leaf's %{customdata[0]}<br>"
            f"request {name} %{{customdata[1]}}<extra></extra>",
            hoverongaps=False,
            name=f"request {name}",
        )
    )
    figure.add_trace(unstable_layer(place, stable))
    figure.add_trace(_current_marker(current, heatmap))
    ticks = log_tick_format(min(heatmap.fanouts), max(heatmap.fanouts))
    figure.update_xaxes(title_text=X_TITLE, type="log", tickformat=ticks)
    figure.update_yaxes(title_text=Y_TITLE, tickvals=rows, ticktext=labels)
    figure.update_layout(
        title={"text": f"The fanned-out request's {name} (load fed back)"},
        height=height,
        font=FONT,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 94, "r": 188, "t": 40, "b": 75},
        legend={"orientation": "h", "y": -0.25},
        template=TEMPLATE,
    )
    return figure
