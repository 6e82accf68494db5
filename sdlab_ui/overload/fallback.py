"""The Overload page's fallback section and its diagram: a cheaper fallback model taking what
the primary sheds, drawn from ``sdlab_model.overload.fallback.with_fallback``'s one result.

Its inputs are declared in ``sdlab_model.page_params`` (``FALLBACK_INPUTS``) and kept in the URL
as ``fallback.*``. The headline, the diagram (``overload_dot``) and the chart's marked point are
the same ``FallbackResult``; no number is computed here.
"""

from __future__ import annotations

from dataclasses import astuple

import plotly.graph_objects as go
import streamlit as st

from sdlab_model.overload import FallbackModel, FallbackResult, OverloadPolicy, with_fallback
from sdlab_model.overload.diagram import OPTIMISTIC, ms_text, overload_dot, share_text
from sdlab_model.overload.goodput import MULTIPLES
from sdlab_model.overload.policy import Station
from sdlab_model.page_params import FALLBACK_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui import diagram
from sdlab_ui.figures import FONT, TEMPLATE
from sdlab_ui.page_inputs import PageInputs, parse_numbers
from sdlab_ui.server import budget
from sdlab_ui.text import rate_text

KEY = "overload.fallback"
"""Keys of the section's headline, chart and diagram; its inputs are ``fallback.*``."""
_PAGE = "Overload"
_KEY = {Workload: astuple, OverloadPolicy: astuple, FallbackModel: astuple}
LEGEND = (
    "The request path: :green-badge[green] healthy · :orange-badge[amber] sheds or is over 80% "
    "busy · :red-badge[red] unstable, or losing over 1% · edges carry the share of requests "
    "that take them; the fallback takes the primary's overflow."
)
WITH_COLOUR, WITHOUT_COLOUR = "#0f766e", "#6b7280"


def _parse(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Section values from URL text (missing: defaults); unreadable or out of range: the
    default, with a notice. Never raises."""
    return parse_numbers(given, FALLBACK_BY_NAME, _PAGE, "fallback.")


INPUTS = PageInputs("fallback", _parse)


def model_of(values: dict) -> FallbackModel:
    """The ``FallbackModel`` the section's values make (their ranges are the model's)."""
    return FallbackModel(
        replicas=int(values["replicas"]),
        workers_per_replica=int(values["workers"]),
        model_latency_ms=float(values["latency_ms"]),
        queue_limit=int(values["queue_limit"]) or None,
        take_timed_out=bool(values["take_timed_out"]),
        usd_per_replica_hour=float(values["usd_per_replica_hour"]),
    )


def fallback_inputs() -> FallbackModel:
    """Draw the section's inputs in one row; the model they make, in the URL from here on."""
    INPUTS.show_notices()
    return model_of(INPUTS.number_row(FALLBACK_BY_NAME))


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner=False)
def cached_result(
    workload: Workload, policy: OverloadPolicy, fallback: FallbackModel
) -> FallbackResult:
    """``with_fallback`` at the design's own rate."""
    return with_fallback(workload, policy, fallback)


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner="Computing goodput with a fallback…")
def cached_curve(
    workload: Workload, policy: OverloadPolicy, fallback: FallbackModel
) -> tuple[tuple[FallbackResult, ...], tuple[FallbackResult, ...]]:
    """``with_fallback`` at ``goodput.MULTIPLES`` of capacity: with the fallback and without."""
    capacity = Station.of(workload).capacity_rps
    off = FallbackModel(replicas=0)
    with budget.slot(budget.WORK):
        return tuple(
            tuple(with_fallback(workload, policy, model, m * capacity) for m in MULTIPLES)
            for model in (fallback, off)
        )


def headline(result: FallbackResult) -> None:
    """Each path's share and p99, what is lost, goodput and $/h: fields of ``result``."""
    with st.container(key=KEY + ".headline"):
        primary, fallback, lost, answered, cost = st.columns(5)
        primary.metric(
            "Primary answers",
            share_text(result.primary_share),
            help=f"p99 {ms_text(result.primary_p99_ms)} (served, late included).",
        )
        primary.caption(f"p99 {ms_text(result.primary_p99_ms)}")
        fallback.metric("Fallback answers", share_text(result.fallback_share))
        optimistic = OPTIMISTIC if result.fallback_share > 0 else ""
        fallback.caption(f"p99 {ms_text(result.fallback_p99_ms)}{optimistic}")
        lost.metric("Lost", share_text(result.lost_share), help="Answered by neither path.")
        answered.metric("Goodput, both paths", rate_text(result.goodput_rps), help="In time.")
        answered.caption(f"p99 of every answer {ms_text(result.answered_p99_ms)}")
        cost.metric("Primary $/h", _usd(result.primary_usd_per_hour))
        cost.caption(f"fallback {_usd(result.fallback_usd_per_hour)}")
    if not result.fallback_is_stable:
        st.error(
            "The fallback is past its capacity with no queue limit or deadline: its queue grows "
            "without bound and it answers nothing in time. Give it more replicas or workers, or "
            "a queue limit.",
            icon=":material/error:",
        )
    notes = [n for n in (result.approximate_because, result.flagged_because) if n]
    if notes:
        st.caption("Approximate: " + "; ".join(notes) + ".")


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value == value else "—"


def curve_figure(curve, capacity_rps: float, current_rps: float) -> go.Figure:
    """Goodput against offered load with the fallback and without it."""
    figure = go.Figure()
    x = list(MULTIPLES)
    for results, name, colour in zip(
        curve,
        ("with the fallback", "without (your settings)"),
        (WITH_COLOUR, WITHOUT_COLOUR),
        strict=True,
    ):
        figure.add_trace(
            go.Scatter(
                x=x,
                y=[r.goodput_rps for r in results],
                customdata=[r.fallback_share for r in results],
                name=name,
                mode="lines+markers",
                line={"color": colour, "width": 2},
                hovertemplate="%{x:.2f}× capacity: %{y:,.0f} req/s in time "
                "(fallback answers %{customdata:.1%})<extra>" + name + "</extra>",
            )
        )
    figure.add_vline(x=current_rps / capacity_rps, line={"color": "grey", "dash": "dash"})
    figure.add_hline(y=capacity_rps, line={"color": "grey", "width": 1})
    figure.update_layout(
        template=TEMPLATE,
        font=FONT,
        height=340,
        xaxis_title="Offered load (× the primary's capacity)",
        yaxis_title="Goodput (req/s within the p99 target)",
        legend={"orientation": "h", "y": -0.3},
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 80, "r": 10, "t": 30, "b": 104},
    )
    return figure


def render_fallback(workload: Workload, policy: OverloadPolicy | None) -> FallbackResult | None:
    """The section: inputs, the headline, the diagram and goodput with and without it."""
    st.markdown("#### Fallback model")
    st.caption(
        "A cheaper, lower-quality model answers what the primary turns away at its queue limit "
        "(and, if chosen, what waits out its deadline) instead of a retry. The overflow reaches "
        "it as a Poisson stream in this model; a bounded queue's overflow is burstier, so its "
        "wait there is longer than shown (docs/overload.md, Degradation)."
    )
    fallback = fallback_inputs()
    if policy is None:
        return None
    result = cached_result(workload, policy, fallback)
    headline(result)
    diagram.draw(overload_dot(result, policy), legend=LEGEND, key=KEY + ".diagram")
    if fallback.is_on:
        curve = cached_curve(workload, policy, fallback)
        capacity = result.primary.capacity_rps
        figure = curve_figure(curve, capacity, result.primary.fresh_rps)
        st.plotly_chart(figure, key=KEY + ".chart")
    return result
