"""Plotly figures built from model results: the colours, font and template every figure shares,
and the Lab's own figures (the latency breakdown, the latency CDF). The heatmaps' figures are in
``heatmap_figures``, the simulation check's error map in ``error_figures``, and the figure made
once from a spec and never changed in ``prepared_figure``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from sdlab_model.design import STAGES
from sdlab_ui.prepared_figure import PreparedFigure
from sdlab_ui.text import ms_text

STAGE_LABELS = {number: f"stage {number}: {stage.title}" for number, stage in STAGES.items()}

UNSTABLE_GREY = "#cbd5e1"
TARGET_COLOUR = "#dc2626"
# Fuchsia is in neither Viridis nor the page's background, light or dark, so the frontier line and
# its legend swatch show on both (white vanished into the legend's white).
FRONTIER_COLOUR = "#d946ef"
# Cells where the model and the simulation disagree about stability: neither an error colour nor
# the grey of "both unstable".
DISAGREE_COLOUR = "#111827"
# The queueing model's own accuracy target (sdlab_model.queues.queueing: "approximate" beyond 15%).
ERROR_FLAG_PCT = 15.0
FONT = {"family": "sans-serif", "size": 12}
# Streamlit's own chart theme styles the figures; plotly's default template would add ~6 KB of
# layout defaults to every figure, serialised again on every rerun.
TEMPLATE = "none"
# The template as plotly's validation expands it, for the figure specs that skip it
# (``PreparedFigure``): the specs then give exactly the JSON a validated figure would.
TEMPLATE_SPEC = pio.templates[TEMPLATE].to_plotly_json()


def log_tick_format(smallest: float, largest: float) -> str:
    """A log axis's tick format that labels every tick in full: plotly's own labels the ticks
    between decades with a bare small digit ("2" for 20). SI suffixes where ticks reach 10,000
    ("20k"), unless they also go under 1 (where "~s" would write 0.5 as "500m")."""
    return "~s" if largest >= 10_000 and smallest >= 1 else "~g"


def log_axis_ticks(values: Iterable[float]) -> dict[str, str | int]:
    """A log axis's ``dtick`` and ``tickformat`` for ``values`` (non-finite ones ignored):
    1-2-5 ticks over up to two decades, one tick a decade beyond (a short panel's 1-2-5 labels
    from 20 to 20,000 overprint), each labelled in full (``log_tick_format``)."""
    finite = [float(v) for v in values if math.isfinite(v) and v > 0]
    smallest, largest = (min(finite), max(finite)) if finite else (1.0, 1.0)
    decades = math.log10(largest / smallest)
    return {"dtick": 1 if decades > 2 else "D2", "tickformat": log_tick_format(smallest, largest)}


def _vertical_line(x: float, line: dict, text: str | None, text_position: str) -> tuple[dict, dict]:
    """A full-height line at ``x`` and its label, as a plain layout shape and annotation.

    Equivalent to ``Figure.add_vline`` for a one-axis figure, at a fraction of its cost:
    ``add_vline`` re-validates the layout's every shape on each call (~10 ms apiece, most of a
    Lab cache miss's figure time).
    """
    shape = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": x,
        "x1": x,
        "y0": 0,
        "y1": 1,
        "line": line,
    }
    top = text_position.startswith("top")
    annotation = {
        "x": x,
        "xref": "x",
        "yref": "paper",
        "y": 1 if top else 0,
        "text": text,
        "showarrow": False,
        "yanchor": "bottom" if top else "top",
        "xanchor": "right"
        if text_position.endswith("left")
        else "left"
        if text_position.endswith("right")
        else "center",
    }
    return shape, annotation


def label_in_prose(label: str) -> str:
    """An input's label inside a sentence: its first letter lower-cased, acronyms kept ("CPU
    workers per replica", "arrival burstiness (CV)")."""
    first = label.split(" ", 1)[0]
    if len(first) > 1 and first.isupper():
        return label
    return label[:1].lower() + label[1:]


def latency_breakdown_spec(
    rows: Sequence[tuple[str, float, float, float]], target_ms: float
) -> dict:
    """Stacked horizontal bars, one per model: compute, batch formation wait and queueing, which
    add up to that model's p99; the target as a dashed line. Rows are (label, compute, batch
    wait, queue) in ms; an unstable model's row shows as text instead of an infinite bar.

    A plain figure spec (see ``PreparedFigure``): plotly's validation of these few bars cost
    ~12 ms, most of what drawing a fresh Lab's chart costs the server.
    """
    parts = BREAKDOWN_PARTS
    stable_rows = [row for row in rows if all(math.isfinite(v) for v in row[1:])]
    unstable_labels = [row[0] for row in rows if row not in stable_rows]
    traces = [
        {
            "type": "bar",
            "x": [row[index + 1] for row in stable_rows],
            "y": [row[0] for row in stable_rows],
            "orientation": "h",
            "name": part,
            "marker": {"color": colour},
            "hovertemplate": f"%{{y}}: {part} %{{x:.3g}} ms<extra></extra>",
        }
        for index, (part, colour) in enumerate(parts)
    ]
    traces += [
        {
            "type": "bar",
            "x": [0],
            "y": [label],
            "orientation": "h",
            "showlegend": False,
            "hoverinfo": "skip",
        }
        for label in unstable_labels
    ]
    annotations = [
        {
            "x": 0,
            "y": label,
            "text": "unstable (∞): arrivals exceed capacity",
            "showarrow": False,
            "xanchor": "left",
        }
        for label in unstable_labels
    ]
    shape, label = _vertical_line(
        target_ms,
        {"color": TARGET_COLOUR, "width": 2, "dash": "dash"},
        f"target {ms_text(target_ms)}",
        "top",
    )
    layout = {
        "shapes": [shape],
        "annotations": [*annotations, label],
        "barmode": "stack",
        "height": 210,
        "font": FONT,
        "template": TEMPLATE_SPEC,
        "xaxis": {"title": {"text": "ms of the p99"}},
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "legend": {"orientation": "h", "y": -0.45},
    }
    return {"data": traces, "layout": layout}


BREAKDOWN_PARTS = (
    ("compute", "#2563eb"),
    ("batch formation wait", "#f59e0b"),
    ("queueing", "#ef4444"),
)
"""The breakdown's stacked parts, in order, and their colours (the same in both drawings)."""
_SVG_WIDTH, _SVG_LABELS, _SVG_RIGHT = 800.0, 130.0, 20.0
_SVG_ROW, _SVG_TOP = 34.0, 26.0


def latency_breakdown_svg(rows: Sequence[tuple[str, float, float, float]], target_ms: float) -> str:
    """``latency_breakdown_spec``'s chart as one line of SVG, for the Lab page.

    The same stacked bars (one per model: compute, batch formation wait and queueing, adding up
    to that model's p99), the target as a dashed line, an axis in ms and a legend; each part
    names its value in a tooltip, and an unstable model's row says so instead of a bar. Text and
    axis use ``currentColor``, so the chart follows the page's light or dark theme. Drawn as
    SVG, a change of numbers costs the browser a swap of markup; a plotly chart re-rendered on
    every change cost ~80 ms of the renderer's CPU (issue 13).
    """
    plot_width = _SVG_WIDTH - _SVG_LABELS - _SVG_RIGHT
    totals = [sum(row[1:]) for row in rows if all(math.isfinite(v) for v in row[1:])]
    top = max([target_ms, *totals]) * 1.08
    step = _tick_step(top)
    scale = plot_width / top

    def x(value_ms: float) -> float:
        return _SVG_LABELS + value_ms * scale

    height = _SVG_TOP + _SVG_ROW * len(rows) + 64
    axis_y = _SVG_TOP + _SVG_ROW * len(rows) + 4
    parts = []
    ticks = [step * k for k in range(int(top / step) + 1)]
    for tick in ticks:
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="{_SVG_TOP - 4:.0f}" x2="{x(tick):.1f}" '
            f'y2="{axis_y:.0f}" stroke="currentColor" stroke-opacity="0.12"/>'
            f'<text x="{x(tick):.1f}" y="{axis_y + 16:.0f}" text-anchor="middle" '
            f'font-size="12" fill="currentColor" fill-opacity="0.75">{_e(f"{tick:g}")}</text>'
        )
    for index, (label, *values) in enumerate(rows):
        y = _SVG_TOP + _SVG_ROW * index
        parts.append(
            f'<text x="{_SVG_LABELS - 8:.0f}" y="{y + 17:.0f}" text-anchor="end" font-size="13" '
            f'fill="currentColor">{_e(label)}</text>'
        )
        if not all(math.isfinite(v) for v in values):
            parts.append(
                f'<text x="{_SVG_LABELS + 4:.0f}" y="{y + 17:.0f}" font-size="13" '
                'fill="currentColor">unstable (∞): arrivals exceed capacity</text>'
            )
            continue
        start = 0.0
        for (part, colour), value in zip(BREAKDOWN_PARTS, values, strict=True):
            parts.append(
                f'<rect x="{x(start):.2f}" y="{y + 3:.0f}" width="{value * scale:.2f}" '
                f'height="{_SVG_ROW - 10:.0f}" fill="{colour}"><title>'
                f"{_e(label)}: {part} {_e(ms_text(value))}</title></rect>"
            )
            start += value
    line_x = x(target_ms)
    parts.append(
        f'<line x1="{line_x:.2f}" y1="{_SVG_TOP - 6:.0f}" x2="{line_x:.2f}" y2="{axis_y:.0f}" '
        f'stroke="{TARGET_COLOUR}" stroke-width="2" stroke-dasharray="6 4"/>'
        f'<text x="{line_x:.2f}" y="{_SVG_TOP - 10:.0f}" text-anchor="middle" font-size="12" '
        f'fill="{TARGET_COLOUR}">target {_e(ms_text(target_ms))}</text>'
        f'<text x="{_SVG_LABELS + plot_width / 2:.0f}" y="{axis_y + 34:.0f}" '
        'text-anchor="middle" font-size="12" fill="currentColor" fill-opacity="0.75">'
        "ms of the p99</text>"
    )
    legend_x = _SVG_LABELS
    for part, colour in BREAKDOWN_PARTS:
        parts.append(
            f'<rect x="{legend_x:.0f}" y="{axis_y + 44:.0f}" width="12" height="12" '
            f'fill="{colour}"/><text x="{legend_x + 17:.0f}" y="{axis_y + 54:.0f}" '
            f'font-size="12" fill="currentColor">{part}</text>'
        )
        legend_x += 30 + 7.2 * len(part)
    return (
        f'<svg width="100%" viewBox="0 0 {_SVG_WIDTH:.0f} {height:.0f}" role="img" '
        f'aria-label="Where each model\'s p99 goes" style="height: auto; max-width: 100%" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )


def _tick_step(top: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving five to twelve ticks up to ``top``."""
    rough = top / 8
    power = 10 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= rough)


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def latency_distribution(
    cdf_latency_ms: np.ndarray,
    cdf_share: np.ndarray,
    target_ms: float,
    model_p99_ms: dict[str, float],
) -> go.Figure:
    """The simulated latency CDF with the target and each model's p99 as vertical lines."""
    figure = go.Figure(
        go.Scatter(
            x=cdf_latency_ms,
            y=cdf_share,
            mode="lines",
            name="simulated",
            line={"color": "#2563eb"},
            hovertemplate="%{y:.1%} of requests within %{x:.3g} ms<extra></extra>",
        )
    )
    lines = [
        _vertical_line(
            target_ms,
            {"color": TARGET_COLOUR, "width": 2, "dash": "dash"},
            "target",
            "bottom right",
        )
    ]
    finite = sorted(
        ((value, label) for label, value in model_p99_ms.items() if math.isfinite(value))
    )
    # The lower p99's label to the left of its line, the higher's to the right: never overprinted.
    for (value, label), dash, side in zip(
        finite, ("dot", "dashdot"), ("left", "right"), strict=False
    ):
        lines.append(
            _vertical_line(value, {"color": "#6b7280", "dash": dash}, f"{label} p99", f"top {side}")
        )
    p99_line = {
        "type": "line",
        "xref": "paper",
        "yref": "y",
        "x0": 0,
        "x1": 1,
        "y0": 0.99,
        "y1": 0.99,
        "line": {"color": "#9ca3af", "width": 1},
    }
    figure.update_layout(
        shapes=[shape for shape, _ in lines] + [p99_line], annotations=[label for _, label in lines]
    )
    figure.update_layout(
        height=300,
        font=FONT,
        template=TEMPLATE,
        xaxis_title="latency (ms)",
        yaxis_title="share of requests",
        yaxis_tickformat=".0%",
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 84, "r": 10, "t": 30, "b": 64},
        showlegend=False,
    )
    return figure


PRELOAD_KEY = "sdlab-plotly-preload"
_PRELOADED_KEY = "sdlab.plotly_preloaded"


def preload_plotly_once() -> None:
    """On a session's first Lab run, a hidden empty plotly chart: the browser loads plotly.js
    then, at the foot of the page, while the person reads the Lab.

    The Lab draws its charts as SVG, so without this the first page with a plotly chart (the
    Heatmaps) would load and compile plotly.js on arrival, and the next click waited for it
    (figures in docs/performance.md). Drawn once, the chart is gone from the next run on, and
    plotly.js stays loaded.
    """
    if st.session_state.get(_PRELOADED_KEY):
        return
    st.session_state[_PRELOADED_KEY] = True
    with st.container(key=PRELOAD_KEY):
        st.html("<style>.st-key-sdlab-plotly-preload { display: none; }</style>")
        st.plotly_chart(
            PreparedFigure({"data": [], "layout": {"height": 10}}),
            key="sdlab.plotly_preload",
            config={"staticPlot": True},
        )
