"""The Tail at scale page's heatmap: the hedged request's p99.9, with the hedges' load fed back,
over fan-out x hedge percentile, for the page's leaf and utilization.

The grid is ``tail_heatmap``'s (a few hundred cells, a fraction of a second), computed in the
work lane and cached; both axes always hold the page's own fan-out and percentile.
"""

from __future__ import annotations

from dataclasses import astuple

import numpy as np
import streamlit as st

from sdlab_model.page_params import TAIL_BY_NAME
from sdlab_model.tail import TailHeatmap, TailInputs, tail_heatmap
from sdlab_ui.server import budget
from sdlab_ui.tail.figures import hedged_figure

CHART_KEY = "tail.heatmap"
FANOUT_STEPS = 25
PERCENTILES = (50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 97.0, 98.0, 99.0, 99.5, 99.9)
_KEY = {TailInputs: astuple}


def axes(inputs: TailInputs) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Fan-outs on a log scale over the input's range and the percentiles, each with the page's
    own value."""
    spec = TAIL_BY_NAME["fanout"]
    steps = np.geomspace(spec.minimum, spec.maximum, FANOUT_STEPS)
    fanouts = {round(float(v)) for v in steps} | {inputs.fanout}
    return tuple(sorted(fanouts)), tuple(sorted({*PERCENTILES, inputs.hedge_percentile}))


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner="Computing the heatmap…")
def cached_heatmap(inputs: TailInputs) -> TailHeatmap:
    """``tail_heatmap`` over the page's axes (a fraction of a second)."""
    fanouts, percentiles = axes(inputs)
    with budget.slot(budget.WORK):
        return tail_heatmap(inputs, fanouts, percentiles)


def draw(inputs: TailInputs) -> None:
    """The heatmap, with what it shows in words."""
    st.subheader("Fan-out × hedge delay")
    heatmap = cached_heatmap(inputs)
    current = (inputs.fanout, inputs.hedge_percentile)
    st.plotly_chart(hedged_figure(heatmap, current), key=CHART_KEY)
    st.caption(
        "Analytic, with the hedges' load fed back at this page's leaf and utilization. Grey: "
        "unstable (∞), hedging that early adds load the leaves cannot settle under; ×: this "
        "design."
    )
