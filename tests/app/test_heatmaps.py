"""AppTest of the Heatmaps page: the heatmaps, the CSV, the simulation check."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator

from apptest_helpers import HEATMAPS_PAGE, assert_no_exception, open_app, sidebar_value

from sdlab_model.grids import rate_axis, replica_axis
from sdlab_model.params import CHOICE_BY_NAME
from sdlab_ui import error_figures, heatmap_figures
from sdlab_ui.server import worker


def test_heatmaps_render_with_csv():
    app = open_app({"model": "teaching"}, page=HEATMAPS_PAGE)
    assert_no_exception(app)
    charts = [chart.key for chart in app.get("plotly_chart")]
    assert charts == ["heatmap.main"], f"only the main heatmap until a 2 x 2 view opens: {charts}"
    downloads = app.get("download_button")
    assert len(downloads) == 1, "the CSV download is missing"
    app.session_state["heatmap.multiples_open"] = True
    app.run()
    assert_no_exception(app)
    charts = [chart.key for chart in app.get("plotly_chart")]
    assert charts == ["heatmap.main", "heatmap.multiples"], f"opened, the 2 x 2 shows: {charts}"


def test_the_policy_view_builds_only_when_opened(monkeypatch):
    from sdlab_ui import cache

    built = []
    original = cache.policy_multiples_figure
    monkeypatch.setattr(
        cache, "policy_multiples_figure", lambda *a: built.append(a) or original(*a)
    )
    app = open_app({"model": "queueing", "model_latency_ms": "31"}, page=HEATMAPS_PAGE)
    assert_no_exception(app)
    assert not built, "the load-balancer view was built while its section was closed"
    app.session_state["heatmap.policies_open"] = True
    app.run()
    assert_no_exception(app)
    assert built, "opening the load-balancer section did not build its view"
    assert "heatmap.policies" in [chart.key for chart in app.get("plotly_chart")]


def test_verify_with_simulation_shows_the_error_map():
    app = open_app({"model": "teaching", "rate_rps": "1000"}, page=HEATMAPS_PAGE)
    worker.WORKER.stop()
    app.button(key="heatmap.verify").click().run()
    assert_no_exception(app)
    assert worker.WORKER.running, "Verify simulated in the server's process, not the worker"
    charts = app.get("plotly_chart")
    assert len(charts) == 3, f"expected analytic + error map beside the heatmap, got {len(charts)}"
    error_map = json.loads(charts[2].proto.spec)
    hovers = " ".join(str(trace.get("hovertemplate", "")) for trace in error_map["data"])
    assert "interval" in hovers, "the error map's hover gives no simulated interval"
    app.select_slider(key="sdlab.widget.rate_rps").set_value(2_000).run()
    assert len(app.get("plotly_chart")) == 3, "moving the rate should keep the verified grid"
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
    from sdlab_model.grids import compute_grid, grid_csv

    grid = compute_grid(Workload(), "queueing", rate_cells=12, replica_cells=8)
    lines = io.StringIO(grid_csv(grid))
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert len(rows) == grid.p99_ms.size, f"{len(rows)} CSV rows for {grid.p99_ms.size} cells"
    unstable = [r for r in rows if r["p99_ms"] == "inf"]
    assert len(unstable) == int(grid.unstable.sum()), "unstable cells are not written as inf"
    assert unstable, "the full rate range should include unstable cells at 1 replica"
    assert {r["stage"] for r in rows} <= {"1", "2", "3", "4", "5"}, "stage outside 1-5"


def test_heatmap_hover_data_are_the_grid_in_numbers():
    """Hover carries each cell's p99, utilization and stage as float32 numbers (a compact binary
    array on the wire), not a label per cell, and they are the grid's own values."""
    import numpy as np

    from sdlab_model import Workload, grids

    grid = grids.compute_grid(
        Workload(rate_rps=20_000), "queueing", rate_cells=24, replica_cells=16
    )
    colour, unstable_layer, _ = heatmap_figures.p99_heatmap(grid).data[:3]
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

    from sdlab_model import Workload, grids

    panels = [
        grids.compute_grid(Workload(rate_rps=20_000, gpu=gpu), "queueing", 24, 16)
        for gpu in (False, True)
    ]
    figure = heatmap_figures.small_multiples(panels, ["CPU", "GPU"])
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
    from sdlab_model import Workload, grids

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
        ("main heatmap", heatmap_figures.p99_heatmap(grid)),
        (
            "small multiples",
            heatmap_figures.small_multiples([grid, _small_grid(gpu=True)], ["a", "b"]),
        ),
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

    grid = _small_grid()
    main = heatmap_figures.p99_heatmap(grid)
    frontier = next(t for t in main.data if t.name == "fewest replicas meeting the target")
    assert frontier.line.color.lower() not in ("white", "#fff", "#ffffff"), (
        "the frontier line is white: its legend swatch vanishes on a white legend"
    )
    stars = [t for t in main.data if t.type == "scatter" and t.marker.symbol == "star"]
    assert len(stars) == 1, f"the main heatmap should mark the current settings once: {stars}"
    multiples = heatmap_figures.small_multiples([grid, _small_grid(gpu=True)], ["a", "b"])
    assert not [t for t in multiples.data if t.type == "scatter" and t.marker.symbol == "star"], (
        "the small multiples carry the current-settings star (it belongs to one panel at most)"
    )


def test_hover_says_replica_for_one():
    import numpy as np

    from sdlab_ui.text import replicas_text

    assert replicas_text(1) == "1 replica", replicas_text(1)
    assert replicas_text(12.0) == "12 replicas", replicas_text(12.0)
    main = heatmap_figures.p99_heatmap(_small_grid())
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

    grid = _small_grid()
    _assert_no_nan_on_hover(heatmap_figures.p99_heatmap(grid), "main heatmap")
    _assert_no_nan_on_hover(
        heatmap_figures.small_multiples([grid, _small_grid(gpu=True)], ["a", "b"]),
        "small multiples",
    )
    _assert_no_nan_on_hover(error_figures.error_map(grid, _simulated_like(grid)), "error map")


def test_error_map_sets_unstable_cells_apart_and_summarises():
    import numpy as np

    grid = _small_grid()
    simulated = _simulated_like(grid)
    figure = error_figures.error_map(grid, simulated)
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
    summary = error_figures.error_summary(grid.p99_ms, simulated)
    assert summary.stability_disagreements == 2, summary
    title_lines = figure.layout.title.text.split("<br>")
    assert " · ".join(title_lines) == summary.text(), "the error map's title is not its summary"
    assert max(map(len, title_lines)) <= 60, (
        f"a title line too long for a half-width chart: {title_lines}"
    )
    assert "median" in summary.text() and "flagged" in summary.text(), summary.text()
    with_interval = error_figures.error_map(
        grid, simulated, np.dstack([simulated * 0.95, simulated * 1.05])
    )
    assert "interval" in next(t for t in with_interval.data if t.name == "error").hovertemplate
    _assert_no_nan_on_hover(with_interval, "error map with intervals")


# ---- Cheap to rebuild (issue 13): figure specs, not validated plotly objects -----------------


def test_figure_specs_give_the_validated_figures_json():
    """The page draws specs without plotly's validation; they must be what validation gives."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    from sdlab_ui import figures, prepared_figure

    grid, gpu = _small_grid(), _small_grid(gpu=True)
    for what, spec in (
        ("main heatmap", heatmap_figures.p99_heatmap_spec(grid)),
        (
            "small multiples",
            heatmap_figures.small_multiples_spec([grid, gpu, gpu, grid], list("abcd")),
        ),
        ("breakdown", figures.latency_breakdown_spec([("a", 9.0, 4.0, 2.5)], 100.0)),
        (
            "breakdown, one model unstable",
            figures.latency_breakdown_spec(
                [("a", 9.0, 4.0, 2.5), ("b", math.inf, math.inf, math.inf)], 60.0
            ),
        ),
    ):
        fast = pio.to_json(prepared_figure.PreparedFigure(spec).to_dict(), validate=False)
        validated = pio.to_json(go.Figure(spec).to_dict(), validate=False)
        assert json.loads(fast) == json.loads(validated), (
            f"{what}: the spec is not what plotly validates"
        )


def test_a_fresh_heatmaps_rerun_validates_no_figure(monkeypatch):
    """Validating traces cost ~90 ms of a 120 ms rerun: a new workload builds specs only."""
    import plotly.basedatatypes

    validated = []
    original = plotly.basedatatypes.BaseFigure.__init__

    def counting(self, data=None, *args, **kwargs):
        if data:
            validated.append(type(self).__name__)
        original(self, data, *args, **kwargs)

    app = open_app({"model": "queueing"}, page=HEATMAPS_PAGE)
    app.session_state["heatmap.multiples_open"] = True
    app.session_state["heatmap.policies_open"] = True
    app.run()
    monkeypatch.setattr(plotly.basedatatypes.BaseFigure, "__init__", counting)
    app.session_state["sdlab.workload"] = app.session_state["sdlab.workload"].with_changes(
        model_latency_ms=23.7
    )
    app.run()
    assert_no_exception(app)
    assert len(app.get("plotly_chart")) == 3, "expected the heatmap and both 2 x 2 views"
    assert not validated, f"a fresh rerun validated {len(validated)} figures: {validated}"


# ---- Any two inputs as axes; click a cell to load it (issue 12) ------------------------------


def test_the_heatmap_spans_any_two_inputs():
    import json

    from sdlab_model.params import NUMERIC_BY_NAME

    app = open_app({"model": "queueing", "model_latency_ms": "30"}, page=HEATMAPS_PAGE)
    app.selectbox(key="heatmap.x_axis").set_value("model_latency_ms").run()
    app.selectbox(key="heatmap.y_axis").set_value("batch_window_ms").run()
    assert_no_exception(app)
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    layout = spec["layout"]
    assert layout["xaxis"]["title"]["text"].startswith("Model latency"), layout["xaxis"]
    assert layout["xaxis"]["type"] == NUMERIC_BY_NAME["model_latency_ms"].scale == "log"
    assert layout["yaxis"]["title"]["text"].startswith("Batch window"), layout["yaxis"]
    assert layout["yaxis"]["type"] == NUMERIC_BY_NAME["batch_window_ms"].scale == "linear"
    names = [trace.get("name") for trace in spec["data"]]
    assert "fewest replicas meeting the target" not in names, "a frontier without a replicas axis"
    star = next(t for t in spec["data"] if t.get("marker", {}).get("symbol") == "star")
    assert (star["x"], star["y"]) == ([30.0], [5.0]), f"the star is at {star['x'], star['y']}"
    # Picking the other axis's input swaps the two.
    app.selectbox(key="heatmap.x_axis").set_value("batch_window_ms").run()
    assert app.selectbox(key="heatmap.y_axis").value == "model_latency_ms", "the axes did not swap"
    app.selectbox(key="heatmap.y_axis").set_value("replicas").run()
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    names = [trace.get("name") for trace in spec["data"]]
    assert "fewest replicas meeting the target" in names, "replicas up, but no frontier"


def _click(app, x, y) -> None:
    """Send what the browser sends when a point of the main heatmap is clicked."""
    import json

    chart = app.get("plotly_chart")[0]
    states = app._tree.get_widget_states()  # AppTest has no plotly-selection API
    state = states.widgets.add()
    state.id = chart.proto.id
    state.string_value = json.dumps(
        {"selection": {"points": [{"x": x, "y": y, "curve_number": 0}], "point_indices": [0]}}
    )
    app._run(widget_state=states)


def test_clicking_a_cell_loads_it_and_moves_the_star():
    import json

    app = open_app({"model": "queueing"}, page=HEATMAPS_PAGE)
    _click(app, 5123.4, 40)
    assert_no_exception(app)
    assert sidebar_value(app, "rate_rps") == 5_120, sidebar_value(app, "rate_rps")
    assert sidebar_value(app, "replicas") == 40, sidebar_value(app, "replicas")
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    star = next(t for t in spec["data"] if t.get("marker", {}).get("symbol") == "star")
    assert (star["x"], star["y"]) == ([5120.0], [40]), f"the star stayed at {star['x'], star['y']}"
    # On other axes the click sets those two inputs.
    app.selectbox(key="heatmap.x_axis").set_value("model_latency_ms").run()
    app.selectbox(key="heatmap.y_axis").set_value("batch_window_ms").run()
    _click(app, 47.13, 12.345)
    assert_no_exception(app)
    assert sidebar_value(app, "model_latency_ms") == 47.1, sidebar_value(app, "model_latency_ms")
    assert sidebar_value(app, "batch_window_ms") == 12.0, sidebar_value(app, "batch_window_ms")
    assert sidebar_value(app, "rate_rps") == 5_120, "a click on other axes moved the rate"


# ---- The CSV says where it came from (issue 12) ----------------------------------------------


def test_grid_csv_names_its_scenario_and_reads_back_with_pandas():
    import io

    import pandas as pd

    from sdlab_model import Workload
    from sdlab_model.grids import compute_axes_grid, grid_csv

    workload = Workload(lb_policy="least_request", model_latency_ms=33.0, models_hosted=3)
    grid = compute_axes_grid(workload, "queueing", "model_latency_ms", "replicas", 6, 5)
    text = grid_csv(grid)
    comments = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    assert "model: queueing" in comments, comments
    assert "lb_policy: least_request" in comments, comments
    assert "models_hosted: 3" in comments and "rate_rps: 200.0" in comments, comments
    held = {line.split(":")[0] for line in comments}
    missing = set(workload.to_dict()) - held - {"model_latency_ms", "replicas"}
    assert not missing, f"inputs held fixed but not named in the CSV: {missing}"
    assert not held & {"model_latency_ms", "replicas"}, "an axis is listed as held fixed"
    frame = pd.read_csv(io.StringIO(text), comment="#")
    assert list(frame.columns[:2]) == ["model_latency_ms", "replicas"], list(frame.columns)
    assert len(frame) == grid.p99_ms.size, f"{len(frame)} rows for {grid.p99_ms.size} cells"


def test_small_multiple_titles_fit_a_phones_panel():
    # At 390 px a panel of a 2 x 2 view is about 75 px wide: 12 px text fits ~14 characters a
    # line (measured in Chromium: one-line titles of 20+ characters ran into their neighbours).
    from sdlab_ui import cache

    titles = [title for title, _ in cache.SMALL_MULTIPLES] + list(
        cache.POLICY_PANEL_TITLES.values()
    )
    assert set(cache.POLICY_PANEL_TITLES) == set(CHOICE_BY_NAME["lb_policy"].choices)
    for title in titles:
        lines = heatmap_figures.panel_title(title).split("<br>")
        assert max(len(line) for line in lines) <= 14, f"title too wide for a phone: {lines}"


def _numbers(value) -> list[float]:
    """A plotly array as the page sends it: a list, or a typed binary array."""
    import base64

    import numpy as np

    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return data.astype(float).ravel().tolist()
    return [math.nan if v is None else float(v) for v in np.asarray(value, float).ravel()]


def test_with_the_target_as_an_axis_the_page_draws_each_columns_line_and_frontier():
    """Issue 21: on card 5 with the p99 target on the x axis, the fewest-replicas frontier falls
    as the target loosens, and the red line sits where p99 crosses each column's own target."""
    import itertools

    from sdlab_model.scenarios import SCENARIO_BY_ID
    from sdlab_ui.url import url_params

    card = SCENARIO_BY_ID["multi-model-scale"].workload()
    app = open_app(url_params(card, "queueing"), page=HEATMAPS_PAGE)
    app.selectbox(key="heatmap.x_axis").set_value("p99_target_ms").run()
    app.selectbox(key="heatmap.y_axis").set_value("replicas").run()
    assert_no_exception(app)
    assert "the red line is the p99 target (each cell's own)" in app.caption[0].value
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    frontier = next(
        t for t in spec["data"] if t.get("name") == "fewest replicas meeting the target"
    )
    targets, fewest = _numbers(frontier["x"]), _numbers(frontier["y"])
    met = [(t, n) for t, n in zip(targets, fewest, strict=True) if math.isfinite(n)]
    assert len({n for _, n in met}) > 3, f"the frontier is flat over the targets: {met}"
    assert all(a[1] >= b[1] for a, b in itertools.pairwise(met)), (
        f"a looser target must never need more replicas: {met}"
    )
    (contour,) = [t for t in spec["data"] if t.get("type") == "contour"]
    assert contour["contours"]["start"] == 0.0, "the line is not at p99 = the cell's target"
