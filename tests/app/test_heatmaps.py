"""AppTest of the Heatmaps page: the heatmaps, the CSV, the simulation check."""

from __future__ import annotations

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
