"""The Overload page's priority section: classes served by strict priority, their p99s.

Reads the design (a ``Workload``), takes the classes' shares and p99 targets from its own
widgets, and draws what ``sdlab_model.overload.priorities`` computes: each class's p99 against
its target and against one FIFO queue, and each class's p99 over offered load. No model here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from sdlab_model.overload.priorities import (
    LoadSweep,
    PriorityClass,
    PriorityLatency,
    PriorityQueue,
    p99_against_load,
    priority_latency,
    queue_from_workload,
)
from sdlab_model.page_params import PRIORITY_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui.figures import FONT, TARGET_COLOUR, TEMPLATE, log_axis_ticks
from sdlab_ui.page_inputs import PageInputs, parse_numbers
from sdlab_ui.server import budget
from sdlab_ui.text import ms_delta_text, ms_text, rate_text

KEY = "overload.priorities"
"""Keys of the section's table and chart; its inputs are ``priority.*`` (``INPUTS``)."""
CLASS_NAMES = ("interactive", "standard", "batch")
_DEFAULTS = {name: spec.default for name, spec in PRIORITY_BY_NAME.items()}
_PAGE = "Overload"
SWEEP_UTILIZATIONS = (*np.round(np.linspace(0.3, 0.95, 14), 3).tolist(), 0.97, 1.05, 1.15, 1.3)
"""Up to 130%: past capacity the upper classes are still served while the lowest grows."""
CLASS_COLOURS = {"interactive": "#2563eb", "standard": "#16a34a", "batch": "#ea580c"}
FIFO_COLOUR = "#6b7280"

CLASS_COLUMN = "class"
P99_COLUMN = "p99"
FIFO_COLUMN = "FIFO p99"
"""Columns of the table the tests read. Rows run from the class served first; 'mean wait' is
Cobham's, 'vs FIFO' the p99's change against one queue without priority."""

ClassSpec = tuple[tuple[str, float, float], ...]
"""(name, share, p99 target ms) per class, highest priority first: hashable for the cache."""


def _queue(rate_rps: float, servers: int, service_ms: float, specs: ClassSpec) -> PriorityQueue:
    classes = tuple(PriorityClass(name, share, target) for name, share, target in specs)
    return PriorityQueue(rate_rps, servers, service_ms, classes)


@st.cache_data(max_entries=256, show_spinner=False)
def cached_latency(
    rate_rps: float, servers: int, service_ms: float, specs: ClassSpec
) -> PriorityLatency:
    """``priority_latency``: milliseconds to a few tenths of a second near saturation."""
    return priority_latency(_queue(rate_rps, servers, service_ms, specs))


@st.cache_data(max_entries=64, show_spinner="Sweeping the load…")
def cached_sweep(servers: int, service_ms: float, specs: ClassSpec) -> LoadSweep:
    """``p99_against_load`` over ``SWEEP_UTILIZATIONS`` (the rate does not enter: it is swept)."""
    queue = _queue(servers * 1000.0 / service_ms, servers, service_ms, specs)
    with budget.slot(budget.WORK):  # visitors missing the cache together take turns
        return p99_against_load(queue, np.array(SWEEP_UTILIZATIONS))


def _parse(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Section values from URL text (missing: defaults); unreadable, out of range or shares
    leaving nothing for the last class: defaults, with a notice. Never raises."""
    values, notices = parse_numbers(given, PRIORITY_BY_NAME, _PAGE, "priority.")
    if _spec(values, 1.0)[0] is None:
        notices.append(f"{_spec(values, 1.0)[1][0]} The classes start from their defaults.")
        values = dict(_DEFAULTS)
    return values, notices


INPUTS = PageInputs("priority", _parse)


def class_inputs(service_ms: float) -> tuple[ClassSpec | None, list[str]]:
    """The class count, shares and targets; the spec, or None and the messages saying why."""
    INPUTS.show_notices()
    values = INPUTS.current()
    names = _names(values)
    shown = ["classes", *(f"{name}_share_pct" for name in names[:-1])]
    shown += [f"{name}_target_x" for name in names]
    values = INPUTS.number_row(PRIORITY_BY_NAME, shown)
    st.caption(
        f"**{_names(values)[-1]}** takes the rest of the requests and is served last; targets "
        f"in service times ({ms_text(service_ms)} each)."
    )
    return _spec(values, service_ms)


def _names(values: dict) -> tuple[str, ...]:
    return ("interactive", "batch") if int(values["classes"]) == 2 else CLASS_NAMES


def _spec(values: dict, service_ms: float) -> tuple[ClassSpec | None, list[str]]:
    """Shares (%) of all but the last class must leave some for it: their sum under 100%."""
    names = _names(values)
    shares = {name: float(values[f"{name}_share_pct"]) for name in names[:-1]}
    given = sum(shares.values())
    if given >= 100.0:
        listed = " + ".join(f"{name} {shares[name]:g}%" for name in shares)
        return None, [
            f"The shares add up to {given:g}% ({listed}): they must sum to under 100%, "
            f"leaving a share for {names[-1]}, which takes the rest."
        ]
    fractions = {name: share / 100.0 for name, share in shares.items()}
    fractions[names[-1]] = 1.0 - sum(fractions.values())
    return tuple(
        (name, fractions[name], float(values[f"{name}_target_x"]) * service_ms) for name in names
    ), []


def _ms(value_ms: float) -> str:
    """``ms_text``, with '—' where the model gives no number (a mean past capacity)."""
    return "—" if math.isnan(value_ms) else ms_text(value_ms)


def results_table(result: PriorityLatency) -> pd.DataFrame:
    """One row per class: p99 with priority, its target, FIFO's p99 and the change."""
    rows = []
    for spec in result.classes:
        change = spec.p99_ms - result.fifo_p99_ms
        rows.append(
            {
                CLASS_COLUMN: spec.name,
                "share": f"{spec.share:.0%}",
                P99_COLUMN: ms_text(spec.p99_ms) + (" *" if spec.approximate_because else ""),
                "target": ms_text(spec.p99_target_ms),
                "meets": "yes" if spec.meets_target else "no",
                FIFO_COLUMN: ms_text(result.fifo_p99_ms),
                "vs FIFO": ms_delta_text(change),
                "mean wait": _ms(spec.mean_wait_ms),
            }
        )
    return pd.DataFrame(rows)


def cost_sentence(result: PriorityLatency) -> str | None:
    """What the lowest class pays for the highest class's gain, at p99, in words."""
    top, low = result.classes[0], result.classes[-1]
    if not result.is_stable:
        served = [c.name for c in result.classes if c.is_stable]
        lost = [c.name for c in result.classes if not c.is_stable]
        if not served:
            return None
        return (
            f"Past capacity strict priority still serves **{', '.join(served)}** (p99 "
            f"{ms_text(top.p99_ms)} for {top.name}); **{', '.join(lost)}** pays everything: "
            "its queue grows without bound (unstable, ∞), where FIFO would fail every class."
        )
    if all(abs(c.p99_ms - result.fifo_p99_ms) < 0.01 for c in result.classes):
        return (
            f"At this load strict priority changes no class's p99: each is FIFO's "
            f"{ms_text(result.fifo_p99_ms)}."
        )
    return (
        f"Strict priority takes {ms_text(result.fifo_p99_ms)} (FIFO's p99) to "
        f"{ms_text(top.p99_ms)} for **{top.name}**; **{low.name}** pays: its p99 is "
        f"{ms_text(low.p99_ms)}, {low.p99_ms / result.fifo_p99_ms:.2g}× FIFO's."
    )


def sweep_figure(sweep: LoadSweep, specs: ClassSpec, current_utilization: float) -> go.Figure:
    """Each class's p99 and FIFO's against utilization, targets dashed, this design marked."""
    figure = go.Figure()
    x = sweep.utilizations * 100.0
    for (name, _share, target), p99, flagged in zip(
        specs, sweep.class_p99_ms, sweep.flagged, strict=True
    ):
        colour = CLASS_COLOURS[name]
        p99 = np.where(np.isfinite(p99), p99, np.nan)
        figure.add_trace(go.Scatter(x=x, y=p99, name=name, line={"color": colour}))
        figure.add_trace(
            go.Scatter(
                x=x[flagged],
                y=p99[flagged],
                mode="markers",
                marker={"color": colour, "symbol": "circle-open", "size": 9},
                name=f"{name}: approximate",
                hoverinfo="skip",
            )
        )
        figure.add_hline(y=target, line={"color": colour, "dash": "dot", "width": 1})
    figure.add_trace(
        go.Scatter(
            x=x,
            y=np.where(np.isfinite(sweep.fifo_p99_ms), sweep.fifo_p99_ms, np.nan),
            name="FIFO (no priority)",
            line={"color": FIFO_COLOUR, "dash": "dash"},
        )
    )
    figure.add_vline(x=100.0, line={"color": FIFO_COLOUR, "width": 1, "dash": "dot"})
    if current_utilization <= max(SWEEP_UTILIZATIONS):
        figure.add_vline(x=current_utilization * 100.0, line={"color": TARGET_COLOUR, "width": 1})
    figure.update_xaxes(title_text="utilization (%)")
    values = np.concatenate([np.ravel(v) for v in (*sweep.class_p99_ms, sweep.fifo_p99_ms)])
    figure.update_yaxes(title_text="p99 latency (ms)", type="log", **log_axis_ticks(values))
    figure.update_layout(
        title={"text": "Each class's p99 against load (targets dotted, this design: red line)"},
        height=380,
        font=FONT,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 75, "r": 10, "t": 40, "b": 101},
        legend={"orientation": "h", "y": -0.25},
        template=TEMPLATE,
    )
    return figure


def render_priorities(design: Workload) -> PriorityLatency | None:
    """The section: inputs, the per-class table, what the low class pays, the load chart."""
    st.markdown("#### Priority classes")
    service_ms = float(design.single_request_ms)
    specs, problems = class_inputs(service_ms)
    for problem in problems:
        st.error(problem)
    if specs is None:
        return None
    queue = queue_from_workload(design, tuple(PriorityClass(*spec) for spec in specs))
    result = cached_latency(queue.rate_rps, queue.servers, queue.service_ms, specs)
    where = "the central queue" if design.is_central_queue else "each replica"
    st.caption(
        f"Strict, non-preemptive priority at {where}: {queue.servers} servers, "
        f"{rate_text(queue.rate_rps)}, {ms_text(service_ms)} per request, utilization "
        f"{queue.utilization:.0%}. Unbatched only: each request served alone."
        + (
            " (This design batches; the section ignores its batching.)"
            if design.dynamic_batching
            else ""
        )
    )
    st.dataframe(results_table(result), hide_index=True, key=f"{KEY}.table")
    sentence = cost_sentence(result)
    if sentence:
        st.markdown(sentence)
    notes = [f"{c.name}: {c.approximate_because}" for c in result.classes if c.approximate_because]
    if notes:
        st.caption("\\* Approximate beyond 5%: " + "; ".join(notes))
    sweep = cached_sweep(queue.servers, queue.service_ms, specs)
    st.plotly_chart(sweep_figure(sweep, specs, queue.utilization), key=f"{KEY}.chart")
    return result
