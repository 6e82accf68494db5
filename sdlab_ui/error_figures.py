"""The Heatmaps simulation check's figure: each cell's model p99 error against the simulation,
with the cells where the two disagree about stability set apart, and its summary.

Built as a plotly figure for ``prepared_figure.PreparedFigure`` (no Streamlit here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from sdlab_model.grids import P99Grid
from sdlab_ui.figures import (
    DISAGREE_COLOUR,
    ERROR_FLAG_PCT,
    FONT,
    TEMPLATE,
    UNSTABLE_GREY,
)
from sdlab_ui.text import ms_text


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
        font=FONT,
        template=TEMPLATE,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 84, "r": 92, "t": 50, "b": 131},
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
