"""The Lab's breakdown as SVG (``figures.latency_breakdown_svg``): its geometry is its numbers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sdlab_model import grids
from sdlab_model.assessment import p99_grid
from sdlab_model.scenarios import SCENARIOS
from sdlab_ui import figures, heatmap_figures, prepared_figure
from sdlab_ui.figures import BREAKDOWN_PARTS, latency_breakdown_svg

ROWS = [("Queueing model", 20.0, 5.0, 3.5), ("Teaching model", 20.0, 2.5, 12.0)]
TARGET_MS = 100.0


def _bars(svg: str) -> list[tuple[float, float, str]]:
    """(x, width, fill) of each stacked part (the legend's swatches have no tooltip)."""
    return [
        (float(x), float(width), fill)
        for x, width, fill in re.findall(
            r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" fill="(#\w+)"><title>',
            svg,
        )
    ]


def test_each_part_is_as_wide_as_its_share_and_the_target_sits_at_its_value():
    svg = latency_breakdown_svg(ROWS, TARGET_MS)
    bars = _bars(svg)
    assert len(bars) == 6, f"expected three parts per model, found {len(bars)}"
    assert [fill for _, _, fill in bars] == [c for _, c in BREAKDOWN_PARTS] * 2, "parts misordered"
    values = [v for row in ROWS for v in row[1:]]
    scale = bars[0][1] / values[0]
    for (_, width, _), value in zip(bars, values, strict=True):
        assert math.isclose(width, value * scale, rel_tol=1e-3), f"{value} ms drawn {width} wide"
    origin = bars[0][0]
    for row in range(2):
        first, second, third = bars[3 * row : 3 * row + 3]
        assert math.isclose(first[0], origin, abs_tol=0.01), "a bar does not start at 0 ms"
        assert math.isclose(second[0], first[0] + first[1], abs_tol=0.02), "parts do not stack"
        assert math.isclose(third[0], second[0] + second[1], abs_tol=0.02), "parts do not stack"
    (target_x,) = re.findall(r'<line x1="([\d.]+)"[^>]*stroke-dasharray', svg)
    assert math.isclose(float(target_x), origin + TARGET_MS * scale, rel_tol=1e-3), (
        "the target line is not at the target"
    )
    assert "Teaching model: queueing 12 ms</title>" in svg, "a part's tooltip lacks its value"


def test_an_unstable_model_says_so_instead_of_a_bar_and_text_is_escaped():
    svg = latency_breakdown_svg(
        [("<b>Queueing</b> model", 20.0, 5.0, math.inf), ("Teaching model", 20.0, 2.5, 12.0)],
        TARGET_MS,
    )
    assert len(_bars(svg)) == 3, "an unstable model was drawn as a bar"
    assert "unstable (∞): arrivals exceed capacity" in svg, "the unstable row says nothing"
    assert "<b>" not in svg and "&lt;b&gt;" in svg, "a label became markup"
    assert "\n" not in svg and "$" not in svg, "Markdown would not pass the SVG through as is"


@pytest.mark.parametrize("p99s", [{"queueing": 31.0, "teaching": 30.5}, {"a": 30.5, "b": 31.0}])
def test_the_cdfs_p99_labels_point_away_from_each_other(p99s):
    figure = figures.latency_distribution(np.array([10.0, 40.0]), np.array([0.0, 1.0]), 100.0, p99s)
    anchors = {a.text: (a.x, a.xanchor) for a in figure.layout.annotations if "p99" in a.text}
    (_, low_anchor), (_, high_anchor) = sorted(anchors.values())
    assert (low_anchor, high_anchor) == ("right", "left"), (
        f"close p99 labels overprint: {anchors} (the lower should sit left of its line)"
    )


@pytest.mark.parametrize(
    ("label", "in_prose"),
    [
        ("Request rate", "request rate"),
        ("CPU workers per replica", "CPU workers per replica"),
        ("Arrival burstiness (CV)", "arrival burstiness (CV)"),
    ],
)
def test_a_label_in_a_sentence_keeps_its_acronyms(label, in_prose):
    assert figures.label_in_prose(label) == in_prose, (
        f"{label!r} reads {figures.label_in_prose(label)!r}"
    )


@pytest.mark.parametrize("y_name", ["replicas", "rate_rps"])
def test_with_the_target_as_an_axis_the_slo_line_and_frontier_follow_it(y_name):
    """Issue 21: with the p99 target on the x axis, the red line (p99 = target) and the
    fewest-replicas frontier move with each column's target, not the lab's."""
    workload = SCENARIOS[4].workload()  # card 5: its fewest replicas vary over the target
    grid = grids.compute_axes_grid(workload, "queueing", "p99_target_ms", y_name, 9, 12)
    targets = grid.x_values
    assert np.array_equal(grid.target_ms[0], targets), "a cell's target is its column's"
    # The contour the figure draws sits at 0 on log10(p99 / the cell's own target).
    (contour,) = [
        t for t in heatmap_figures.p99_heatmap_spec(grid)["data"] if t["type"] == "contour"
    ]
    stable = np.isfinite(grid.p99_ms)
    over = np.asarray(contour["z"], float) > 0
    assert np.array_equal(over[stable], (grid.p99_ms > targets[None, :])[stable]), (
        "the SLO line does not separate cells over their own target from those within it"
    )
    assert np.all(over[~stable]), "unstable cells must lie over the line"
    columns = grids.grid_columns(grid)
    assert np.array_equal(
        columns["meets_target"], (grid.p99_ms <= targets[None, :]).ravel().astype(int)
    ), "the CSV's meets_target is not each cell's own target"
    if y_name != "replicas":
        return
    every_count = np.arange(1, 501, dtype=float)
    line = p99_grid(workload, [workload.rate_rps], every_count, "queueing")[:, 0]
    expected = [every_count[np.argmax(line <= t)] if np.any(line <= t) else np.nan for t in targets]
    assert np.array_equal(grid.frontier_replicas, expected, equal_nan=True), (
        f"frontier {grid.frontier_replicas} is not each target's fewest replicas {expected}"
    )
    assert np.unique(grid.frontier_replicas[np.isfinite(grid.frontier_replicas)]).size > 1, (
        "the frontier is flat across targets from 5 to 1,000 ms"
    )


@pytest.mark.parametrize(
    ("smallest", "largest", "expected"),
    [(1, 500_000, "~s"), (1, 500, "~g"), (0.5, 20_000, "~g"), (0.01, 200, "~g")],
)
def test_log_ticks_take_si_suffixes_only_where_no_tick_is_under_one(smallest, largest, expected):
    assert figures.log_tick_format(smallest, largest) == expected


@pytest.mark.parametrize(
    ("values", "dtick", "tickformat"),
    [
        ([20.0, 35.0, 100.0], "D2", "~g"),  # one decade: 1-2-5 ticks
        ([20.0, 5_000.0], "dtick decades", "~g"),
        ([20.0, 100.0, 25_000.0, math.inf, math.nan], "dtick decades", "~s"),  # inf ignored
        ([math.inf], "D2", "~g"),  # nothing finite: any ticks, no error
    ],
)
def test_a_log_axis_ticks_decades_past_two_decades_and_labels_them_in_full(
    values, dtick, tickformat
):
    ticks = figures.log_axis_ticks(values)
    assert ticks["dtick"] == (1 if dtick == "dtick decades" else dtick), ticks
    assert ticks["tickformat"] == tickformat, ticks


def test_the_timelines_p99_panel_ticks_decades_when_a_spike_spans_three():
    from sdlab_model.timeline import TimelineInputs, TrafficShape
    from sdlab_model.timeline.model import run_timeline
    from sdlab_ui.timeline.sections import timeline_figure

    spike = TrafficShape(kind="spike", base_rate_rps=200.0, factor=75.0, spike_duration_s=300.0)
    result = run_timeline(TimelineInputs(traffic=spike, duration_s=1200.0))
    finite = result.p99_ms[np.isfinite(result.p99_ms)]
    assert finite.max() / finite.min() > 100, "the spike no longer spans two decades of p99"
    axis = timeline_figure(result).layout.yaxis3
    assert axis.type == "log" and axis.dtick == 1 and axis.tickformat == "~s", axis


@pytest.mark.parametrize(
    "values",
    [
        np.array([1, 5, 120]),  # int64 narrowed to int8
        np.array([-300, 5]),  # int16
        np.array([70_000, 1], dtype=np.uint64),  # uint32
        np.array([2**40, -1]),  # too wide for plotly.js: sent as a list
        np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],  # 2-D, not contiguous
        np.array([], dtype=float),
        np.array(["a", "b"]),
    ],
    ids=["int8", "int16", "uint32", "int64", "f4-2d", "empty", "text"],
)
def test_prepared_figures_encode_arrays_as_plotly_does(values):
    """A spec's arrays go to the browser as plotly's own ``to_dict`` would send them."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    kind, key = ("heatmap", "z") if values.ndim > 1 else ("scatter", "x")
    trace = {"type": kind, key: values}
    spec = {"data": [trace]}
    fast = pio.to_json(prepared_figure.PreparedFigure(spec).to_dict(), validate=False)
    validated = pio.to_json(go.Figure(spec).to_dict(), validate=False)
    assert json.loads(fast)["data"] == json.loads(validated)["data"]
