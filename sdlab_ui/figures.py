"""Plotly figures built from model results. No Streamlit here: pages draw what these return.

p99 spans five decades between an idle fleet and saturation, so heatmap colour is log10(p99) with
tick labels in ms; the unstable region (arrivals at or above capacity, p99 = ∞) is drawn as its
own grey layer rather than as a very large colour value.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

from sdlab_model.design import STAGES
from sdlab_model.grids import P99Grid
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_ui.text import ms_text, replicas_text

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
_COLOURSCALE = "Viridis"
_MS_TICKS = (1, 3, 10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
_FONT = {"family": "sans-serif", "size": 12}
# Streamlit's own chart theme styles the figures; plotly's default template would add ~6 KB of
# layout defaults to every figure, serialised again on every rerun.
_TEMPLATE = "none"
# The same two as plotly's validation expands them, for the figure specs that skip it
# (``PreparedFigure``): the specs then give exactly the JSON a validated figure would.
_TEMPLATE_SPEC = pio.templates[_TEMPLATE].to_plotly_json()
_COLOURSCALE_SPEC = [list(stop) for stop in plotly.colors.get_colorscale(_COLOURSCALE)]


class PreparedFigure(go.Figure):
    """A figure whose dict form is computed once, for figures cached and never changed.

    ``st.plotly_chart`` calls ``to_dict`` on every rerun, which deep-copies every trace and
    re-encodes every array: most of the cost of redrawing an unchanged chart. Returning the
    dict made at construction gives the same JSON for a fraction of the work.

    Made from a figure spec (a plain dict, as the ``*_spec`` functions below return), it skips
    plotly's validation of every property, which costs more than building the spec (~20 ms for
    the main heatmap, ~60 ms for a 2 x 2 view): then ``data`` and ``layout`` stay empty, and the
    figure is read through ``to_dict()`` (``go.Figure(figure.to_dict())`` for a full one).
    Tests validate every spec through ``go.Figure``.
    """

    def __init__(self, figure: go.Figure | dict) -> None:
        if isinstance(figure, dict):
            # The empty figure's own state, shared by every figure made from a spec: building it
            # was most of a small chart's cost (~0.7 ms, a fresh Lab's breakdown), and these
            # figures' data and layout stay empty and are never changed.
            self.__dict__.update(_empty_figure_state())
            self._prepared_dict = _encoded(
                {"data": figure.get("data", []), "layout": figure.get("layout", {})}
            )
        else:
            super().__init__(figure)
            self._prepared_dict = super().to_dict()

    def to_dict(self) -> dict:
        return self._prepared_dict


@functools.lru_cache(maxsize=1)
def _empty_figure_state() -> dict:
    return dict(go.Figure().__dict__)


def _encoded(spec: object) -> object:
    """A copy of ``spec`` with numpy arrays as plotly's binary array specs (what plotly's own
    ``to_dict`` sends), leaving ``spec`` unchanged."""
    if isinstance(spec, dict):
        return {
            key: value if is_skipped_key(key) else _encoded(value) for key, value in spec.items()
        }
    if isinstance(spec, list | tuple):
        return [_encoded(value) for value in spec]
    if is_homogeneous_array(spec):
        return to_typed_array_spec(spec)
    return spec


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


def log_colour_range(grids: Sequence[P99Grid]) -> tuple[float, float]:
    """One log10(p99) colour range for several grids, so their colours compare."""
    finite = [g.p99_ms[np.isfinite(g.p99_ms)] for g in grids]
    values = np.concatenate([f for f in finite if f.size] or [np.array([1.0, 10.0])])
    low = math.log10(max(float(values.min()), 0.1))
    high = math.log10(max(float(values.max()), 10 ** (low + 1)))
    return low, high


def _colourbar(low: float, high: float) -> dict:
    ticks = [t for t in _MS_TICKS if low - 0.01 <= math.log10(t) <= high + 0.01]
    return {
        "title": {"text": "p99"},
        "tickvals": [math.log10(t) for t in ticks],
        "ticktext": [ms_text(t) for t in ticks],
        "len": 0.9,
    }


def _axis_title(name: str) -> str:
    """'Request rate (req/s)', 'Replicas': the input's label and unit."""
    spec = NUMERIC_BY_NAME[name]
    return f"{spec.label} ({spec.unit})" if spec.unit else spec.label


def _axis_layout(name: str) -> dict:
    """A plotly axis for input ``name``: its scale, its title; whole-number ticks for replicas."""
    axis = {"type": NUMERIC_BY_NAME[name].scale, "title": {"text": _axis_title(name)}}
    if name == "replicas":
        axis["dtick"] = "D2"
    return axis


def _hover_value(name: str, placeholder: str) -> str:
    """How a hover shows input ``name``'s value at ``placeholder`` (``x`` or ``y``)."""
    spec = NUMERIC_BY_NAME[name]
    if name == "rate_rps":
        return f"rate %{{{placeholder}:,.0f}} req/s"
    if name == "replicas":
        return f"replicas %{{{placeholder}}}"
    number = "%{" + placeholder + (":,.0f}" if spec.integer else ":,.3~r}")
    unit = {"": "", "x": "x"}.get(spec.unit, f" {spec.unit}")
    return f"{label_in_prose(spec.label)} {number}{unit}"


def label_in_prose(label: str) -> str:
    """An input's label inside a sentence: its first letter lower-cased, acronyms kept ("CPU
    workers per replica", "arrival burstiness (CV)")."""
    first = label.split(" ", 1)[0]
    if len(first) > 1 and first.isupper():
        return label
    return label[:1].lower() + label[1:]


def _where(grid: P99Grid) -> str:
    return f"{_hover_value(grid.x_name, 'x')}<br>{_hover_value(grid.y_name, 'y')}<br>"


def _heatmap_traces(
    grid: P99Grid,
    low: float,
    high: float,
    show_scale: bool,
    full_hover: bool = True,
    axes: tuple[str, str] = ("x", "y"),
) -> list[dict]:
    """Colour layer, unstable layer and the p99-target contour of one grid, as trace specs.

    Hover data is numeric (float32, which plotly sends as a binary array), not a label per cell:
    per-cell strings made the Heatmaps page's five grids ~1.9 MB of JSON to encode, send and
    parse on every visit. Without ``full_hover`` a cell's hover gives its p99 only (the small
    multiples, which the main heatmap details), a third of the hover data.
    """
    stable = np.isfinite(grid.p99_ms)
    with np.errstate(divide="ignore"):
        log_p99 = np.where(stable, np.log10(np.maximum(grid.p99_ms, 1e-9)), np.nan)
    where = _where(grid)
    p99_ms = np.where(stable, grid.p99_ms, np.nan)
    if full_hover:
        customdata = np.dstack([p99_ms, grid.utilization, grid.stage_numbers]).astype(np.float32)
        hover = where + (
            "p99 %{customdata[0]:,.3~r} ms<br>utilization %{customdata[1]:.0%}<br>"
            "recommended: stage %{customdata[2]}<extra></extra>"
        )
        unstable_data = grid.utilization.astype(np.float32)
        unstable_hover = where + (
            "p99 unstable (∞): arrivals at or above capacity<br>utilization "
            "%{customdata:.0%}<extra></extra>"
        )
    else:
        customdata = p99_ms.astype(np.float32)
        hover = where + "p99 %{customdata:,.3~r} ms<extra></extra>"
        unstable_data = None
        unstable_hover = where + "p99 unstable (∞)<extra></extra>"
    place = {"x": grid.x_values, "y": grid.y_values, "xaxis": axes[0], "yaxis": axes[1]}
    colour = {
        "type": "heatmap",
        **place,
        "z": log_p99.astype(np.float32),
        "zmin": low,
        "zmax": high,
        "colorscale": _COLOURSCALE_SPEC,
        "customdata": customdata,
        "hovertemplate": hover,
        "hoverongaps": False,
        "showscale": show_scale,
        "name": "p99",
    }
    if show_scale:
        colour["colorbar"] = _colourbar(low, high)
    unstable = {
        "type": "heatmap",
        **place,
        "z": np.where(stable, np.nan, 1.0).astype(np.float32),
        "colorscale": [[0, UNSTABLE_GREY], [1, UNSTABLE_GREY]],
        "showscale": False,
        "hovertemplate": unstable_hover,
        "hoverongaps": False,
        "name": "unstable",
    }
    if unstable_data is not None:
        unstable["customdata"] = unstable_data
    contour = {
        "type": "contour",
        **place,
        "z": _target_contour_z(grid, stable, log_p99),
        "showscale": False,
        # "lines" would colour the line from the colour scale; "none" draws it in line.color.
        "contours": {"start": 0.0, "end": 0.0, "size": 1, "coloring": "none"},
        "line": {"color": TARGET_COLOUR, "width": 2},
        "hoverinfo": "skip",
        "name": "p99 target",
        "showlegend": False,
    }
    return [colour, unstable, contour]


def _target_contour_z(grid: P99Grid, stable: np.ndarray, log_p99: np.ndarray) -> np.ndarray:
    """Zero where the p99 equals each cell's own target (an axis, or the workload's); a contour
    needs numbers everywhere, so unstable cells sit ten decades over their target."""
    with np.errstate(invalid="ignore"):
        return np.where(stable, log_p99 - np.log10(grid.target_ms), 10.0).astype(np.float32)


def p99_heatmap_spec(grid: P99Grid, title: str = "") -> dict:
    """p99 over the grid's two inputs with the target contour, the unstable region, the current
    point and (where the y axis is replicas) the min-replica frontier, as a figure spec."""
    low, high = log_colour_range([grid])
    traces = _heatmap_traces(grid, low, high, show_scale=True)
    if grid.frontier_replicas is not None:
        traces.append(
            {
                "type": "scatter",
                "x": grid.x_values,
                "y": grid.frontier_replicas,
                "text": [replicas_text(count) for count in grid.frontier_replicas],
                "mode": "lines",
                "line": {"color": FRONTIER_COLOUR, "width": 2.5, "dash": "dot", "shape": "hv"},
                "name": "fewest replicas meeting the target",
                "hovertemplate": _hover_value(grid.x_name, "x")
                + "<br>needs %{text}<extra></extra>",
            }
        )
    traces = _with_click_layer(traces, grid)
    traces.append(_current_point(grid, size=16, outline=1.5, name="current settings"))
    traces.append(
        {
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "lines",
            "name": "p99 target",
            "line": {"color": TARGET_COLOUR, "width": 2},
        }
    )
    traces.append(
        {
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "markers",
            "name": "unstable (∞)",
            "marker": {"symbol": "square", "size": 12, "color": UNSTABLE_GREY},
        }
    )
    layout = {
        "xaxis": _axis_layout(grid.x_name),
        "yaxis": _axis_layout(grid.y_name),
        "height": 520,
        "font": _FONT,
        "template": _TEMPLATE_SPEC,
        "margin": {"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        "legend": {"orientation": "h", "y": -0.18},
        # A click selects a cell (the page loads it into the Lab); no box or lasso.
        "clickmode": "event+select",
        "dragmode": "zoom",
    }
    if title:
        layout["title"] = {"text": title}
    return {"data": traces, "layout": layout}


def _with_click_layer(traces: list[dict], grid: P99Grid) -> list[dict]:
    """The main heatmap's colour and unstable layers, each with an invisible point per cell.

    Plotly cannot select heatmap cells, but it selects scatter points: a click on a cell selects
    its point, and the page loads that cell into the Lab. Plotly shows one hover at a time (the
    nearest point wins), so the points carry the cells' hover and the heatmap layers' own hover
    is skipped (their data stays, for the tests and the CSV to read).
    """
    colour, unstable, *rest = traces
    stable = np.isfinite(grid.p99_ms)
    x, y = np.meshgrid(grid.x_values, grid.y_values)
    layers = []
    for layer, cells in ((colour, stable), (unstable, ~stable)):
        if not cells.any():
            continue
        points = {
            "type": "scatter",
            "x": x[cells].astype(np.float64),
            "y": y[cells].astype(np.float64),
            "mode": "markers",
            "marker": {"size": 14, "color": "rgba(0,0,0,0)"},
            "hovertemplate": layer["hovertemplate"],
            "showlegend": False,
            "name": f"{layer['name']} cells",
        }
        data = layer.get("customdata")
        if data is not None:
            points["customdata"] = np.asarray(data)[cells]
        layers.append(points)
    hidden = [{**layer, "hoverinfo": "skip"} for layer in (colour, unstable)]
    return [*hidden, *rest, *layers]


def p99_heatmap(grid: P99Grid, title: str = "") -> go.Figure:
    """``p99_heatmap_spec`` as a validated plotly figure."""
    return go.Figure(p99_heatmap_spec(grid, title))


# The 2 x 2 layout make_subplots(rows=2, cols=2, shared axes, spacing 0.05 x 0.1) builds, written
# out: make_subplots and adding traces to it validated every property again (~60 ms a view).
_PANEL_DOMAINS = (  # (x domain, y domain) of panels 1-4, row by row from the top
    ((0.0, 0.475), (0.55, 1.0)),
    ((0.525, 1.0), (0.55, 1.0)),
    ((0.0, 0.475), (0.0, 0.45)),
    ((0.525, 1.0), (0.0, 0.45)),
)


def panel_title(title: str) -> str:
    """A small multiple's title on short lines ("CPU,<br>batching off"): on a phone a panel is
    under 100 px wide, and one long line ran into its neighbour's."""
    return title.replace(", ", ",<br>").replace(" (", "<br>(")


def small_multiples_spec(grids: Sequence[P99Grid], titles: Sequence[str]) -> dict:
    """2 x 2 p99 heatmaps on one colour scale, each with its target contour, as a figure spec.

    No current-settings star: the sidebar's settings are one of the four panels at most, and the
    main heatmap above already marks them. Columns share their x axis, rows their y axis.
    """
    low, high = log_colour_range(grids)
    traces: list[dict] = []
    layout: dict = {
        "height": 640,
        "font": _FONT,
        "template": _TEMPLATE_SPEC,
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "annotations": [],
    }
    for index, (grid, title) in enumerate(zip(grids, titles, strict=True)):
        number = "" if index == 0 else str(index + 1)
        x_domain, y_domain = _PANEL_DOMAINS[index]
        row, column = divmod(index, 2)
        traces += _heatmap_traces(
            grid,
            low,
            high,
            show_scale=index == 0,
            full_hover=False,
            axes=(f"x{number}", f"y{number}"),
        )
        x_axis = {
            "type": NUMERIC_BY_NAME[grid.x_name].scale,
            "domain": list(x_domain),
            "anchor": f"y{number}",
            "showticklabels": row == 1,
        }
        y_axis = {
            "type": NUMERIC_BY_NAME[grid.y_name].scale,
            "domain": list(y_domain),
            "anchor": f"x{number}",
            "showticklabels": column == 0,
        }
        if row == 0:  # shared with the panel below
            x_axis["matches"] = f"x{index + 3}"
        else:
            x_axis["title"] = {"text": _axis_title(grid.x_name)}
        if column == 1:  # shared with the panel to the left
            y_axis["matches"] = f"y{'' if index == 1 else 3}"
        else:
            y_axis["title"] = {"text": _axis_title(grid.y_name)}
        layout[f"xaxis{number}"], layout[f"yaxis{number}"] = x_axis, y_axis
        layout["annotations"].append(
            {
                "text": panel_title(title),
                "x": sum(x_domain) / 2,
                "y": y_domain[1],
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 12},
            }
        )
    return {"data": traces, "layout": layout}


def small_multiples(grids: Sequence[P99Grid], titles: Sequence[str]) -> go.Figure:
    """``small_multiples_spec`` as a validated plotly figure."""
    return go.Figure(small_multiples_spec(grids, titles))


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
        "font": _FONT,
        "template": _TEMPLATE_SPEC,
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
        font=_FONT,
        template=_TEMPLATE,
        xaxis_title="latency (ms)",
        yaxis_title="share of requests",
        yaxis_tickformat=".0%",
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        showlegend=False,
    )
    return figure


@dataclass(frozen=True)
class ErrorSummary:
    """How far a grid's model p99 is from the simulated one, over the cells both call stable."""

    compared_cells: int
    median_abs_error_pct: float
    max_abs_error_pct: float
    over_limit_cells: int
    stability_disagreements: int

    @property
    def flagged_cells(self) -> int:
        return self.over_limit_cells + self.stability_disagreements

    def text(self) -> str:
        if not self.compared_cells:
            return (
                f"No cell is stable in both; {self.stability_disagreements} disagree on stability."
            )
        return (
            f"|error| median {self.median_abs_error_pct:.1f}%, max "
            f"{self.max_abs_error_pct:.1f}% over {self.compared_cells} cells · "
            f"{self.flagged_cells} flagged ({self.over_limit_cells} beyond "
            f"{ERROR_FLAG_PCT:.0f}%, {self.stability_disagreements} disagree on stability)"
        )


def p99_error_pct(model_p99_ms: np.ndarray, simulated_p99_ms: np.ndarray) -> np.ndarray:
    """100 x (model − simulated) / simulated where both are finite and positive, NaN elsewhere."""
    both = np.isfinite(model_p99_ms) & np.isfinite(simulated_p99_ms) & (simulated_p99_ms > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(both, 100.0 * (model_p99_ms - simulated_p99_ms) / simulated_p99_ms, np.nan)


def error_summary(model_p99_ms: np.ndarray, simulated_p99_ms: np.ndarray) -> ErrorSummary:
    """Median and max |error| over the comparable cells, and the cells to look at twice."""
    error = np.abs(p99_error_pct(model_p99_ms, simulated_p99_ms))
    compared = error[np.isfinite(error)]
    disagree = np.isfinite(model_p99_ms) != np.isfinite(simulated_p99_ms)
    return ErrorSummary(
        compared_cells=int(compared.size),
        median_abs_error_pct=float(np.median(compared)) if compared.size else math.nan,
        max_abs_error_pct=float(compared.max()) if compared.size else math.nan,
        over_limit_cells=int((compared > ERROR_FLAG_PCT).sum()),
        stability_disagreements=int(disagree.sum()),
    )


def error_map(
    grid: P99Grid,
    simulated_p99_ms: np.ndarray,
    simulated_interval_ms: np.ndarray | None = None,
) -> go.Figure:
    """Model p99 error against simulation per cell, in percent, on a diverging scale.

    Cells unstable in both are grey; cells where one says unstable and the other does not are
    drawn dark, apart from any error colour (white is 0% error, so an unstable cell must not be
    white). Cells beyond ``ERROR_FLAG_PCT`` carry a cross. Hover gives the model's and the
    simulated p99, and the simulated interval when ``simulated_interval_ms`` (shape
    ``(*grid, 2)``) is given. The title is the summary (``error_summary``).
    """
    model = grid.p99_ms
    error_pct = p99_error_pct(model, simulated_p99_ms)
    limit = float(np.nanmax(np.abs(error_pct))) if np.isfinite(error_pct).any() else 10.0
    limit = max(5.0, min(limit, 100.0))
    model_stable, sim_stable = np.isfinite(model), np.isfinite(simulated_p99_ms)
    where = "rate %{x:,.0f} req/s<br>replicas %{y}<br>"
    channels = [np.where(model_stable, model, 0.0), np.where(sim_stable, simulated_p99_ms, 0.0)]
    hover = where + (
        "model p99 %{customdata[0]:,.3~r} ms<br>simulated p99 %{customdata[1]:,.3~r} ms"
    )
    if simulated_interval_ms is not None:
        interval = np.nan_to_num(np.asarray(simulated_interval_ms, dtype=float), posinf=0.0)
        channels += [interval[..., 0], interval[..., 1]]
        hover += " (interval %{customdata[2]:,.3~r}–%{customdata[3]:,.3~r} ms)"
    hover += "<br>model vs simulation %{z:+.1f}%<extra></extra>"
    both_unstable = ~model_stable & ~sim_stable
    disagree = model_stable != sim_stable
    disagree_text = np.full(model.shape, "", dtype=object)
    for row, column in zip(*np.nonzero(disagree), strict=True):
        disagree_text[row, column] = _stability_text(
            float(model[row, column]), float(simulated_p99_ms[row, column])
        )
    flagged = np.abs(np.nan_to_num(error_pct)) > ERROR_FLAG_PCT
    flag_rows, flag_cols = np.nonzero(flagged)
    figure = go.Figure(
        [
            go.Heatmap(
                x=grid.rates_rps,
                y=grid.replicas,
                z=error_pct.astype(np.float32),
                zmin=-limit,
                zmax=limit,
                zmid=0,
                colorscale="RdBu_r",
                colorbar={"title": {"text": "error %"}},
                customdata=np.dstack(channels).astype(np.float32),
                hovertemplate=hover,
                hoverongaps=False,
                name="error",
            ),
            _mask_layer(grid, both_unstable, UNSTABLE_GREY, "unstable (∞) in both"),
            _mask_layer(
                grid,
                disagree,
                DISAGREE_COLOUR,
                "stability differs",
                text=disagree_text,
            ),
            go.Scatter(
                x=grid.rates_rps[flag_cols],
                y=grid.replicas[flag_rows],
                mode="markers",
                marker={"symbol": "x-thin", "size": 7, "line": {"color": "black", "width": 1.5}},
                name=f"|error| > {ERROR_FLAG_PCT:.0f}%",
                hoverinfo="skip",
            ),
        ]
    )
    for name, colour in (
        ("unstable (∞) in both", UNSTABLE_GREY),
        ("stability differs", DISAGREE_COLOUR),
    ):
        figure.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=name,
                marker={"symbol": "square", "size": 12, "color": colour},
            )
        )
    # A tick format labels every tick in full ("20", not a bare "2" between 10 and 100).
    figure.update_xaxes(type="log", title_text="request rate (req/s)", tickformat="~s")
    figure.update_yaxes(type="log", title_text="replicas", dtick="D2", tickformat="~g")
    figure.update_layout(
        # Two lines: on one, a half-width chart cut the summary off at its edge.
        title={
            "text": error_summary(model, simulated_p99_ms).text().replace(" · ", "<br>"),
            "font": {"size": 12},
        },
        height=560,
        font=_FONT,
        template=_TEMPLATE,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.18},
    )
    return figure


def _stability_text(model_p99_ms: float, simulated_p99_ms: float) -> str:
    """Hover for a cell that one of model and simulation calls unstable and the other not."""
    if math.isfinite(model_p99_ms):
        return f"model p99 {ms_text(model_p99_ms)}; the simulation is unstable (∞)"
    return f"model: unstable (∞); simulated p99 {ms_text(simulated_p99_ms)}"


def _mask_layer(
    grid: P99Grid, mask: np.ndarray, colour: str, label: str, text: np.ndarray | None = None
) -> go.Heatmap:
    """One flat colour over the cells in ``mask``; hover gives ``text`` per cell or ``label``."""
    return go.Heatmap(
        x=grid.rates_rps,
        y=grid.replicas,
        z=np.where(mask, 1.0, np.nan).astype(np.float32),
        colorscale=[[0, colour], [1, colour]],
        showscale=False,
        text=text,
        hovertemplate="rate %{x:,.0f} req/s<br>replicas %{y}<br>"
        + ("%{text}" if text is not None else label)
        + "<extra></extra>",
        hoverongaps=False,
        name=label,
    )


def _current_point(grid: P99Grid, *, size: float, outline: float, name: str | None = None) -> dict:
    """The star marking the sidebar's values of the grid's two inputs (in the legend if named)."""
    return {
        "type": "scatter",
        "x": [getattr(grid.workload, grid.x_name)],
        "y": [getattr(grid.workload, grid.y_name)],
        "mode": "markers",
        "marker": {
            "symbol": "star",
            "size": size,
            "color": "white",
            "line": {"color": "black", "width": outline},
        },
        "name": name,
        "showlegend": name is not None,
        "hovertemplate": "current settings<extra></extra>",
    }


PRELOAD_KEY = "sdlab-plotly-preload"
_PRELOADED_KEY = "sdlab.plotly_preloaded"


def preload_plotly_once() -> None:
    """On a session's first Lab run, a hidden empty plotly chart: the browser loads plotly.js
    then, at the foot of the page, while the person reads the Lab.

    The Lab draws its charts as SVG, so without this the first page with a plotly chart (the
    Heatmaps) would load and compile plotly.js on arrival, and the next click waited for it:
    1.6–2.2 s for the first switch back to the Lab, measured in Chromium. Drawn once, the chart
    is gone from the next run on, and plotly.js stays loaded.
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
