"""AppTest of the Heatmaps page: the heatmaps, the CSV, the simulation check."""

from __future__ import annotations

import re
from collections.abc import Iterator

from apptest_helpers import HEATMAPS_PAGE, assert_no_exception, open_app, sidebar_value

from sdlab_ui.grids import rate_axis, replica_axis


def test_heatmaps_render_with_csv():
    app = open_app({"model": "teaching"}, page=HEATMAPS_PAGE)
    assert_no_exception(app)
    assert len(app.get("plotly_chart")) == 2, "expected the main heatmap and the 2x2 multiples"
    downloads = app.get("download_button")
    assert len(downloads) == 1, "the CSV download is missing"


def test_verify_with_simulation_shows_the_error_map():
    app = open_app({"model": "teaching", "rate_rps": "1000"}, page=HEATMAPS_PAGE)
    app.button(key="heatmap.verify").click().run()
    assert_no_exception(app)
    charts = app.get("plotly_chart")
    assert len(charts) == 4, f"expected analytic + error map beside the heatmaps, got {len(charts)}"
    app.select_slider(key="sdlab.widget.rate_rps").set_value(2_000).run()
    assert len(app.get("plotly_chart")) == 4, "moving the rate should keep the verified grid"
    assert sidebar_value(app, "rate_rps") == 2_000, "the rate did not move"


def test_grid_axes_span_the_sliders():
    rates, replicas = rate_axis(32), replica_axis(24)
    assert rates[0] == 1 and rates[-1] == 500_000, f"rate axis {rates[0]}..{rates[-1]}"
    assert replicas[0] == 1 and replicas[-1] == 500, f"replica axis {replicas[0]}..{replicas[-1]}"
    assert len(set(replicas)) == len(replicas), "replica counts repeat"


def test_grid_csv_has_every_cell_and_marks_unstable_ones():
    import csv
    import io

    from sdlab_model import Workload
    from sdlab_ui.grids import compute_grid, grid_csv

    grid = compute_grid(Workload(), "queueing", rate_cells=12, replica_cells=8)
    rows = list(csv.DictReader(io.StringIO(grid_csv(grid))))
    assert len(rows) == grid.p99_ms.size, f"{len(rows)} CSV rows for {grid.p99_ms.size} cells"
    unstable = [r for r in rows if r["p99_ms"] == "inf"]
    assert len(unstable) == int(grid.unstable.sum()), "unstable cells are not written as inf"
    assert unstable, "the full rate range should include unstable cells at 1 replica"
    assert {r["stage"] for r in rows} <= {"1", "2", "3", "4", "5"}, "stage outside 1-5"


def test_heatmap_hover_data_are_the_grid_in_numbers():
    """Hover carries each cell's p99, utilization and stage as float32 numbers (a compact binary
    array on the wire), not a label per cell, and they are the grid's own values."""
    import numpy as np

    from sdlab_model import Workload
    from sdlab_ui import figures, grids

    grid = grids.compute_grid(
        Workload(rate_rps=20_000), "queueing", rate_cells=24, replica_cells=16
    )
    colour, unstable_layer, _ = figures.p99_heatmap(grid).data[:3]
    hover = np.asarray(colour.customdata)
    stable = np.isfinite(grid.p99_ms)
    assert hover.dtype == np.float32, f"hover data should be float32, is {hover.dtype}"
    assert stable.any() and (~stable).any(), "the case should hold stable and unstable cells"
    np.testing.assert_allclose(hover[..., 0][stable], grid.p99_ms[stable], rtol=1e-6)
    assert np.isnan(hover[..., 0][~stable]).all(), "unstable cells must not show a finite p99"
    np.testing.assert_allclose(hover[..., 1], grid.utilization, rtol=1e-6)
    assert (hover[..., 2] == grid.stage_numbers).all(), "the stage channel is not the grid's stage"
    grey = np.asarray(unstable_layer.z)
    assert (np.isfinite(grey) == ~stable).all(), "the grey layer should cover exactly the unstable"


def test_small_multiples_hover_gives_each_cell_its_p99():
    import numpy as np

    from sdlab_model import Workload
    from sdlab_ui import figures, grids

    panels = [
        grids.compute_grid(Workload(rate_rps=20_000, gpu=gpu), "queueing", 24, 16)
        for gpu in (False, True)
    ]
    figure = figures.small_multiples(panels, ["CPU", "GPU"])
    colour_layers = [trace for trace in figure.data if trace.name == "p99"]
    assert len(colour_layers) == 2, f"expected one colour layer per panel, got {len(colour_layers)}"
    for grid, layer in zip(panels, colour_layers, strict=True):
        hover = np.asarray(layer.customdata)
        stable = np.isfinite(grid.p99_ms)
        assert hover.shape == grid.p99_ms.shape, f"one p99 per cell expected, got {hover.shape}"
        np.testing.assert_allclose(hover[stable], grid.p99_ms[stable], rtol=1e-6)
        assert np.isnan(hover[~stable]).all(), "unstable cells must not show a finite p99"


# ---- What the heatmaps show on hover and in colour (issue 12) -------------------------------

_PLACEHOLDER = re.compile(r"%\{([a-z]+)(?:\[(\d+)\])?(?::[^}]*)?\}")


def _hovered_values(trace) -> Iterator[tuple[str, object]]:
    """(placeholder, value) for every value a trace's hover would show, point by point.

    A heatmap hovers on every cell unless ``hoverongaps`` is off (then only where z is a
    number); a scatter hovers where x and y are numbers; ``hoverinfo="skip"`` never hovers.
    """
    import numpy as np

    if trace.hoverinfo == "skip" or not trace.hovertemplate:
        return
    z = np.asarray(trace.z, dtype=float) if trace.type == "heatmap" else None
    if trace.type == "heatmap":
        hovered = np.isfinite(z) if trace.hoverongaps is False else np.ones(z.shape, bool)
        rows, columns = np.nonzero(hovered)
        points = list(zip(rows, columns, strict=True))
    else:
        x = np.asarray([np.nan if v is None else v for v in trace.x], dtype=float)
        y = np.asarray([np.nan if v is None else v for v in trace.y], dtype=float)
        points = [(i,) for i in np.nonzero(np.isfinite(x) & np.isfinite(y))[0]]
    customdata = None if trace.customdata is None else np.asarray(trace.customdata)
    text = None if trace.text is None else np.asarray(trace.text, dtype=object)
    for name, channel in _PLACEHOLDER.findall(trace.hovertemplate):
        for point in points:
            if name == "z":
                yield "z", z[point]
            elif name == "customdata":
                cell = customdata[point]
                yield f"customdata[{channel}]", cell[int(channel)] if channel else cell
            elif name == "text":
                yield "text", text[point]
            elif name in ("x", "y"):
                axis = trace.x if name == "x" else trace.y
                yield name, axis[point[-1] if name == "x" else point[0]]


def _assert_no_nan_on_hover(figure, what: str) -> None:
    import numpy as np

    for trace in figure.data:
        assert "nan" not in (trace.hovertemplate or "").lower(), (
            f"{what}: trace {trace.name!r} has NaN in its hover template"
        )
        for placeholder, value in _hovered_values(trace):
            if isinstance(value, str):
                assert "nan" not in value.lower(), (
                    f"{what}: trace {trace.name!r} hovers {placeholder} = {value!r}"
                )
            else:
                assert np.isfinite(np.asarray(value, dtype=float)).all(), (
                    f"{what}: trace {trace.name!r} would hover {placeholder} = {value} "
                    "(shown as NaN)"
                )


def _small_grid(**changes):
    from sdlab_model import Workload
    from sdlab_ui import grids

    return grids.compute_grid(Workload(rate_rps=20_000, **changes), "queueing", 24, 16)


def _simulated_like(grid):
    """A stand-in simulated grid: off by 5-40%, one stable cell it calls unstable and one
    unstable cell it calls stable (the cases the error map must show apart)."""
    import numpy as np

    simulated = grid.p99_ms * np.linspace(0.6, 1.05, grid.p99_ms.size).reshape(grid.p99_ms.shape)
    stable = np.argwhere(np.isfinite(grid.p99_ms))
    unstable = np.argwhere(~np.isfinite(grid.p99_ms))
    simulated[tuple(stable[0])] = np.inf
    simulated[tuple(unstable[-1])] = 500.0
    return simulated


def test_target_contour_is_drawn_in_the_target_colour():
    from sdlab_ui import figures

    grid = _small_grid()
    for what, figure in (
        ("main heatmap", figures.p99_heatmap(grid)),
        ("small multiples", figures.small_multiples([grid, _small_grid(gpu=True)], ["a", "b"])),
    ):
        contours = [trace for trace in figure.data if trace.type == "contour"]
        assert contours, f"{what}: no target contour"
        for contour in contours:
            # coloring "lines" takes the line colour from the colour scale, whatever line.color.
            assert contour.contours.coloring == "none", (
                f"{what}: contour coloring {contour.contours.coloring!r} ignores the line colour"
            )
            assert contour.line.color == figures.TARGET_COLOUR, (
                f"{what}: target contour drawn {contour.line.color}, "
                f"not the target colour {figures.TARGET_COLOUR}"
            )


def test_heatmap_legend_and_star():
    from sdlab_ui import figures

    grid = _small_grid()
    main = figures.p99_heatmap(grid)
    frontier = next(t for t in main.data if t.name == "fewest replicas meeting the target")
    assert frontier.line.color.lower() not in ("white", "#fff", "#ffffff"), (
        "the frontier line is white: its legend swatch vanishes on a white legend"
    )
    stars = [t for t in main.data if t.type == "scatter" and t.marker.symbol == "star"]
    assert len(stars) == 1, f"the main heatmap should mark the current settings once: {stars}"
    multiples = figures.small_multiples([grid, _small_grid(gpu=True)], ["a", "b"])
    assert not [t for t in multiples.data if t.type == "scatter" and t.marker.symbol == "star"], (
        "the small multiples carry the current-settings star (it belongs to one panel at most)"
    )


def test_hover_says_replica_for_one():
    import numpy as np

    from sdlab_ui import figures

    assert figures.replicas_text(1) == "1 replica", figures.replicas_text(1)
    assert figures.replicas_text(12.0) == "12 replicas", figures.replicas_text(12.0)
    main = figures.p99_heatmap(_small_grid())
    frontier = next(t for t in main.data if t.name == "fewest replicas meeting the target")
    shown = {str(text) for text, y in zip(frontier.text, frontier.y, strict=True) if np.isfinite(y)}
    # A whole word: "41 replicas" is right, "1 replicas" is not.
    assert not [text for text in shown if re.search(r"(?<!\d)1 replicas", text)], (
        f"frontier hover says '1 replicas': {shown}"
    )
    for trace in main.data:
        assert "%{y} replicas" not in (trace.hovertemplate or ""), (
            f"{trace.name!r} hovers 'needs %{{y}} replicas', wrong for one replica"
        )


def test_no_hover_text_contains_nan():
    from sdlab_ui import figures

    grid = _small_grid()
    _assert_no_nan_on_hover(figures.p99_heatmap(grid), "main heatmap")
    _assert_no_nan_on_hover(
        figures.small_multiples([grid, _small_grid(gpu=True)], ["a", "b"]), "small multiples"
    )
    _assert_no_nan_on_hover(figures.error_map(grid, _simulated_like(grid)), "error map")


def test_error_map_sets_unstable_cells_apart_and_summarises():
    import numpy as np

    from sdlab_ui import figures

    grid = _small_grid()
    simulated = _simulated_like(grid)
    figure = figures.error_map(grid, simulated)
    error_layer = next(t for t in figure.data if t.name == "error")
    error_z = np.asarray(error_layer.z, dtype=float)
    assert error_layer.hoverongaps is False, "the error layer would hover its gaps as NaN"
    covered = np.zeros(grid.p99_ms.shape, bool)
    for trace in figure.data:
        if trace.type == "heatmap" and trace.name != "error":
            colours = {stop[1] for stop in trace.colorscale}
            assert "#ffffff" not in colours and "white" not in colours, (
                f"{trace.name!r} is white, the colour of 0% error"
            )
            covered |= np.isfinite(np.asarray(trace.z, dtype=float))
    assert (covered | np.isfinite(error_z)).all(), "some cells show neither an error nor a state"
    assert not (covered & np.isfinite(error_z)).any(), "a state layer hides an error cell"
    template = error_layer.hovertemplate
    assert "model p99" in template and "simulated p99" in template, template
    summary = figures.error_summary(grid.p99_ms, simulated)
    assert summary.stability_disagreements == 2, summary
    assert figure.layout.title.text == summary.text(), "the error map's title is not its summary"
    assert "median" in summary.text() and "flagged" in summary.text(), summary.text()
    with_interval = figures.error_map(
        grid, simulated, np.dstack([simulated * 0.95, simulated * 1.05])
    )
    assert "interval" in next(t for t in with_interval.data if t.name == "error").hovertemplate
    _assert_no_nan_on_hover(with_interval, "error map with intervals")
