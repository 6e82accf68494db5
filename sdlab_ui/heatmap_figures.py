"""The heatmaps' figures: p99 over two inputs on a log colour scale, with the target line, the
fewest-replicas frontier and the current setting, alone or as a 2 x 2 view on one scale.

p99 spans five decades between an idle fleet and saturation, so heatmap colour is log10(p99) with
tick labels in ms; the unstable region (arrivals at or above capacity, p99 = ∞) is drawn as its
own grey layer rather than as a very large colour value. Built as plain figure specs for
``prepared_figure.PreparedFigure`` (no Streamlit here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go

from sdlab_model.grids import P99Grid
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_ui.figures import (
    FONT,
    FRONTIER_COLOUR,
    TARGET_COLOUR,
    TEMPLATE_SPEC,
    UNSTABLE_GREY,
    label_in_prose,
    log_tick_format,
)
from sdlab_ui.text import ms_text, replicas_text

_COLOURSCALE = "Viridis"
# The colour scale as plotly's validation expands it, for the specs that skip it.
_COLOURSCALE_SPEC = [list(stop) for stop in plotly.colors.get_colorscale(_COLOURSCALE)]


LOG_MS_TICKS = tuple(m * 10.0**e for e in range(-2, 7) for m in (1, 3))
"""Colour-bar ticks of log-millisecond heatmaps: 1, 3, 10, 30 … from 0.01 ms to 3,000 s."""


def log_ms_colourbar(low: float, high: float, title: str) -> dict:
    """A colour bar for log10(ms) values from ``low`` to ``high``, ticked in milliseconds."""
    ticks = [t for t in LOG_MS_TICKS if low - 0.01 <= math.log10(t) <= high + 0.01]
    return {
        "title": {"text": title},
        "tickvals": [math.log10(t) for t in ticks],
        "ticktext": [ms_text(t) for t in ticks],
        "len": 0.9,
    }


def unstable_layer(place: dict, stable: np.ndarray) -> go.Heatmap:
    """Grey over a heatmap's unstable (∞) cells, at the heatmap's ``place`` (its x and y)."""
    return go.Heatmap(
        **place,
        z=np.where(stable, np.nan, 1.0),
        colorscale=[[0, UNSTABLE_GREY], [1, UNSTABLE_GREY]],
        showscale=False,
        hovertemplate="unstable (∞)<extra></extra>",
        hoverongaps=False,
        name="unstable (∞)",
    )


def log_colour_range(grids: Sequence[P99Grid]) -> tuple[float, float]:
    """One log10(p99) colour range for several grids, so their colours compare."""
    finite = [g.p99_ms[np.isfinite(g.p99_ms)] for g in grids]
    values = np.concatenate([f for f in finite if f.size] or [np.array([1.0, 10.0])])
    low = math.log10(max(float(values.min()), 0.1))
    high = math.log10(max(float(values.max()), 10 ** (low + 1)))
    return low, high


def _axis_title(name: str) -> str:
    """'Request rate (req/s)', 'Replicas': the input's label and unit."""
    spec = NUMERIC_BY_NAME[name]
    return f"{spec.label} ({spec.unit})" if spec.unit else spec.label


def _axis_scale(name: str) -> dict:
    """Input ``name``'s scale on a plotly axis, every tick labelled in full; whole-number ticks
    for replicas."""
    spec = NUMERIC_BY_NAME[name]
    if spec.scale != "log":
        return {"type": spec.scale}
    axis = {"type": "log", "tickformat": log_tick_format(float(spec.minimum), float(spec.maximum))}
    return axis | {"dtick": "D2"} if name == "replicas" else axis


def _axis_layout(name: str, values: np.ndarray) -> dict:
    """A plotly axis for input ``name`` at grid ``values``: its scale, its title, and the cells'
    extent as its range (autorange pads it for the markers on top, down to a "500m" tick)."""
    axis = {**_axis_scale(name), "title": {"text": _axis_title(name)}}
    at = np.log10(values) if axis["type"] == "log" else np.asarray(values, dtype=float)
    half = (at[[1, -1]] - at[[0, -2]]) / 2 if at.size > 1 else np.array([0.5, 0.5])
    return axis | {"range": [float(at[0] - half[0]), float(at[-1] + half[1])]}


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
        colour["colorbar"] = log_ms_colourbar(low, high, "p99")
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
        "xaxis": _axis_layout(grid.x_name, grid.x_values),
        "yaxis": _axis_layout(grid.y_name, grid.y_values),
        "height": 520,
        "font": FONT,
        "template": TEMPLATE_SPEC,
        # Room for any axis's labels: a margin the axes push makes plotly draw the chart twice.
        "margin": {"l": 92, "r": 10, "t": 40 if title else 16, "b": 10},
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
    is skipped (their data stays, for the tests and the CSV to read). Hover and selection read
    the points' data, so ``maxdisplayed`` draws one marker, not an invisible one per cell.
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
            "marker": {"size": 14, "color": "rgba(0,0,0,0)", "maxdisplayed": 1},
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
# out: make_subplots and adding traces to it validated every property again (docs/performance.md).
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
        "font": FONT,
        "template": TEMPLATE_SPEC,
        "margin": {"l": 84, "r": 120, "t": 40, "b": 76},
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
            **_axis_scale(grid.x_name),
            "domain": list(x_domain),
            "anchor": f"y{number}",
            "showticklabels": row == 1,
        }
        y_axis = {
            **_axis_scale(grid.y_name),
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
