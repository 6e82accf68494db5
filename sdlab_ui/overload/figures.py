"""The Overload page's chart: goodput against offered load, one line per variant, the chosen
policy's own line drawn over them and the design's current rate marked. No Streamlit here."""

from __future__ import annotations

import plotly.graph_objects as go

from sdlab_model.overload import GoodputCurve
from sdlab_model.overload.goodput import VARIANTS
from sdlab_ui.figures import FONT, TEMPLATE
from sdlab_ui.text import rate_text

COLOURS = {
    "no shedding": "#d62728",
    "queue limit": "#1f77b4",
    "queue limit + deadline": "#2ca02c",
    "retries, no budget": "#ff7f0e",
    "retries, budget": "#9467bd",
}
CURRENT = "current"


def goodput_figure(curve: GoodputCurve, current_rps: float, height: int = 440) -> go.Figure:
    """Goodput (req/s within the target) over offered load (x capacity) per variant."""
    figure = go.Figure()
    x = list(curve.multiples)
    for name in VARIANTS:
        figure.add_trace(
            go.Scatter(
                x=x,
                y=list(curve.goodput_rps(name)),
                mode="lines+markers",
                name=name,
                line={"color": COLOURS[name], "width": 2},
                marker={"size": 5},
                customdata=[r.amplification for r in curve.results[name]],
                hovertemplate="%{x:.2f}× capacity: %{y:,.0f} req/s within the target "
                "(%{customdata:.2f} attempts per request)<extra>" + name + "</extra>",
            )
        )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=list(curve.goodput_rps(CURRENT)),
            mode="lines",
            name="your settings",
            line={"color": "black", "width": 5, "dash": "dot"},
            opacity=0.6,
            hovertemplate="%{x:.2f}× capacity: %{y:,.0f} req/s<extra>your settings</extra>",
        )
    )
    figure.add_vline(
        x=current_rps / curve.capacity_rps,
        line={"color": "grey", "dash": "dash"},
        annotation_text=f"now: {rate_text(current_rps)}",
    )
    figure.add_hline(y=curve.capacity_rps, line={"color": "grey", "width": 1})
    figure.update_layout(
        template=TEMPLATE,
        font=FONT,
        height=height,
        xaxis_title="Offered load (× capacity, fresh requests)",
        yaxis_title="Goodput (req/s served within the p99 target)",
        legend={"orientation": "h", "y": -0.25},
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 80, "r": 10, "t": 30, "b": 115},
    )
    return figure
