"""The LLM page's heatmaps: where the TTFT and TPOT targets hold, over the request rate and a
second input the visitor picks (replicas, tensor parallel or prompt length).

The grid is ``llm_heatmap``'s (one numpy pass), computed in the work lane and cached; the rate
axis, on a log scale, reaches past the largest stable rate (``max_stable_rates``) of the most
capable row, so every row's unstable edge is in view. Both are built only while their expander is
open (as the Lab's distribution is): a grid and its axis's search are most of a fresh rerun, and
every input change would otherwise pay for them.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from sdlab_model.llm import INPUT_RANGES, LlmHeatmap, LlmWorkload, llm_heatmap
from sdlab_model.llm.capacity import max_stable_rates
from sdlab_model.page_params import LLM_HEATMAP_AXIS
from sdlab_ui.llm import controls
from sdlab_ui.llm.fields import cache_key
from sdlab_ui.llm.figures import p99_figure
from sdlab_ui.server import budget, runs

RATE_STEPS = 40
RATE_SPAN = 300.0
"""The rate axis spans its top over this factor (log scale)."""
ROWS = 12
Y_FIELDS = LLM_HEATMAP_AXIS.choices
Y_KEY = controls.WIDGET + LLM_HEATMAP_AXIS.name
CHART_KEYS = {"TTFT": "llm.heatmap.ttft", "TPOT": "llm.heatmap.tpot"}
OPEN_KEY = "llm.heatmaps_open"
LABEL = "TTFT and TPOT p99 over the request rate and one more input"
_KEY = {LlmWorkload: cache_key}


def _y_values(workload: LlmWorkload, field: str) -> tuple[float, ...]:
    """The second axis: whole steps around the design's own value, which is always one of them."""
    current = getattr(workload, field)
    if field == "tensor_parallel":
        values = {1, 2, 4, 8, current}
    elif field == "replicas":
        top = min(max(8, 2 * current), INPUT_RANGES["replicas"][1])
        values = {round(float(v)) for v in np.geomspace(1, top, ROWS)} | {current}
    else:
        top = min(32_768.0, workload.model.max_context_tokens - workload.output_tokens_mean)
        steps = {float(round(v, -1)) for v in np.geomspace(64, top, ROWS)}
        values = {v for v in steps if 1.0 <= v <= top} | {current}
    return tuple(sorted(values))


def _x_values(workload: LlmWorkload, y_field: str, rows: tuple[float, ...]) -> tuple[float, ...]:
    """Request rates on a log scale, up to past where the most capable row stops being stable
    (the first or the last row: capacity moves one way along each second axis)."""
    ends = [workload.with_changes(**{y_field: y}) for y in (rows[0], rows[-1])]
    limit = float(max(max_stable_rates(ends, rounds=2)))  # ~4% is plenty for an axis's top
    top = min(max(2.0 * workload.rate_rps, 1.5 * limit, 0.1), INPUT_RANGES["rate_rps"][1])
    rates = set(np.geomspace(top / RATE_SPAN, top, RATE_STEPS).round(6))
    if workload.rate_rps > 0:
        rates.add(workload.rate_rps)
    return tuple(sorted(float(r) for r in rates))


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner="Computing the heatmaps…")
def cached_heatmap(workload: LlmWorkload, y_field: str) -> LlmHeatmap:
    """``llm_heatmap`` over rate × ``y_field`` (a few hundred cells: tens of ms)."""
    rows = _y_values(workload, y_field)
    with budget.slot(budget.WORK):
        columns = _x_values(workload, y_field, rows)
        return llm_heatmap(workload, "rate_rps", columns, y_field, rows)


@runs.fragment
def draw(workload: LlmWorkload) -> None:
    """The two heatmaps side by side, in an expander, built only while it is open; opening it
    or choosing the second axis reruns this section alone. A link with an axis of its own
    opens it."""
    st.subheader("Where the targets hold")
    axis_in_link = controls.current_values()[LLM_HEATMAP_AXIS.name] != LLM_HEATMAP_AXIS.default
    panel = st.expander(LABEL, expanded=axis_in_link, key=OPEN_KEY, on_change="rerun")
    if panel.open:
        with panel:
            _charts(workload)


def _charts(workload: LlmWorkload) -> None:
    y_field = controls.view(LLM_HEATMAP_AXIS)
    heatmap = cached_heatmap(workload, y_field)
    current = (workload.rate_rps, getattr(workload, y_field))
    for column, name in zip(st.columns(2), CHART_KEYS, strict=True):
        with column:
            st.plotly_chart(p99_figure(heatmap, name, current), key=CHART_KEYS[name])
    measured = workload.length_sample is not None and y_field == "prompt_tokens_mean"
    st.caption(
        "Red line: the p99 target; grey: unstable (the rate exceeds what the deployment serves); "
        "×: this design. Cells where the model flags itself approximate say so on hover."
        + " Rows other than this design's are lognormal prompts with the measured spread."
        * measured
    )
