"""The Advice page's sections: the cheapest design, the cost–p99 frontier, levers, what breaks.

Every verdict comes from ``sdlab_model.advice.search``, which judges each design as the Lab does
(the queueing model where it is trusted, a simulation where it is approximate); this module only
caches, budgets and draws.
"""

from __future__ import annotations

import math
from dataclasses import astuple, replace

import plotly.graph_objects as go
import streamlit as st

from sdlab_model.advice.search import (
    HEADROOM,
    MAX_SIMULATIONS,
    Advice,
    BreakingPoint,
    Comparison,
    Design,
    Lever,
    advise,
    breaking_points,
    comparisons,
    current_design,
    levers,
    search_key,
    workload_cost,
)
from sdlab_model.assessment import needs_simulation
from sdlab_model.params import CHOICE_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui import cache, state
from sdlab_ui.figures import TARGET_COLOUR
from sdlab_ui.server import budget
from sdlab_ui.text import (
    money,
    ms_delta_text,
    ms_text,
    per_million_text,
    replicas_text,
    usd_delta_text,
)

_KEY = {Workload: astuple}


@st.cache_data(
    max_entries=32, hash_funcs=_KEY, show_spinner="Searching designs and simulating where needed…"
)
def _cached_search(key: Workload) -> Advice:
    with budget.slot(budget.WORK):
        return advise(key)


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner=False)
def _cached_current(workload: Workload) -> Design:
    with budget.slot(budget.WORK if needs_simulation(workload) else None):
        return current_design(workload)


def cached_advice(workload: Workload) -> Advice:
    """``advise``, cached: every configuration judged as the Lab judges (seconds where the judge
    simulates, at most ``MAX_SIMULATIONS`` simulations), one search for every design of the same
    traffic (``search_key``), so loading the recommended design does not search again."""
    return replace(_cached_search(search_key(workload)), current=_cached_current(workload))


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner="Judging each lever…")
def cached_levers(workload: Workload) -> tuple[Lever, ...]:
    # A lever's design may simulate where the current one does not: always in the work lane.
    with budget.slot(budget.WORK):
        return levers(workload)


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner=False)
def cached_comparisons(workload: Workload) -> tuple[Comparison, ...]:
    return comparisons(workload)


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner="Finding what breaks first…")
def cached_breaking_points(workload: Workload) -> tuple[BreakingPoint, ...]:
    with budget.slot(budget.WORK):
        return breaking_points(workload)


def p99_label(design: Design) -> str:
    """The Lab headline's words for where a p99 is from: 'p99' or 'p99 (simulated…)'."""
    if design.simulation is None:
        return "p99"
    return "p99 (simulated)" if design.simulation.converged else "p99 (simulated, not converged)"


def cost_line(workload: Workload) -> str:
    """'$2.86/h · $3.97 per 1M inferences' for the workload at its own prices; no price per 1M
    where its fleet cannot serve the rate, as the Lab's headline says."""
    cost = workload_cost(workload)
    serves = math.isfinite(_cached_current(workload).p99_ms)
    return f"{money(cost.usd_per_hour)}/h · " + per_million_text(
        cost.usd_per_million, serves, "per 1M inferences"
    )


def recommendation(workload: Workload) -> Advice:
    """The cheapest design and a one-click switch to it."""
    advice = cached_advice(workload)
    best = advice.best
    st.subheader("Cheapest design that meets the target")
    st.caption(
        f"Searched {advice.configurations_searched} configurations (CPU or GPU replicas, batching "
        "off or on over several windows and max batch sizes) × 1–500 replicas with the "
        f"{_policy_text(advice.lb_policy)} balancer, keeping {HEADROOM:.0%} capacity headroom "
        "(load at most 75% of capacity, the lab's safe line). Each design is judged as the "
        "Lab judges it: by the queueing model where it is trusted, by simulation where it is "
        f"approximate ({advice.simulations} simulations here, at most {MAX_SIMULATIONS})."
    )
    if advice.lb_policy != workload.lb_policy:
        st.info(
            f"The lab's balancer, {_policy_text(workload.lb_policy)}, is an idealization no "
            f"server runs; the search uses {_policy_text(advice.lb_policy)} instead.",
            icon=":material/info:",
        )
    if not advice.complete:
        st.warning(
            f"The simulation budget ({MAX_SIMULATIONS}) ran out before {advice.unsettled} "
            "configurations were settled: one of them might meet the target for less. "
            + (
                "The design below is the cheapest the judgement passed among the rest."
                if best
                else ""
            ),
            icon=":material/hourglass_bottom:",
        )
    if best is None:
        st.error(
            f"No design in the search space meets the {ms_text(workload.p99_target_ms)} target "
            "with that headroom"
            + ("." if advice.complete else " among the configurations settled.")
            + " The frontier below shows the fastest each budget buys, by the queueing model."
        )
        return advice
    columns = st.columns(4)
    columns[0].metric(
        "Design", f"{best.workload.replicas} × {'GPU' if best.workload.gpu else 'CPU'}"
    )
    columns[1].metric("Cost", f"{money(best.cost.usd_per_hour)}/h")
    columns[2].metric(p99_label(best), ms_text(best.p99_ms))
    # The Lab's "load" (against full-batch capacity), not its slots' busy share ("utilization").
    columns[3].metric("Load (of capacity)", f"{best.utilization:.0%}")
    current = advice.current
    price = per_million_text(best.cost.usd_per_million, True, "per 1M inferences")
    st.markdown(
        f"**{best.label}** — {price}. The current "
        f"design: {current.label}, {cost_line(workload)}, {p99_label(current)} "
        f"{ms_text(current.p99_ms)}."
    )
    _placement_note(best)
    if best.is_simulated:
        st.info(
            "The queueing model is approximate for this design, so its p99 is the simulation's, "
            "as on the Lab; cheaper designs the simulation did not pass were passed over.",
            icon=":material/science:",
        )
    if best.workload != workload:
        st.button(
            "Use this design",
            key="advice.use",
            on_click=state.load,
            args=(best.workload,),
            type="primary",
        )
    else:
        st.success("The current design is the cheapest one that meets the target.")
    return advice


def _placement_note(best: Design) -> None:
    """Where the Lab's packing decision finds a placement of the models that meets the target
    for less than this search (which sends every model to every replica), say so."""
    lab = state.current()
    packing = cache.lab_view(lab.workload, "queueing", lab.residency).queueing.packing
    if packing is None or packing.recommended in (None, "dedicated"):
        return
    if packing.recommended_usd_per_hour >= best.cost.usd_per_hour:
        return
    st.info(
        f"Placing the models does better: {packing.recommended_label} meets the target with "
        f"{replicas_text(packing.recommended_replicas)} for "
        f"{money(packing.recommended_usd_per_hour)}/h "
        "(Models and memory; the Lab recommends it). This search sends every model to every "
        "replica.",
        icon=":material/hub:",
    )


_MODEL_HOVER = "%{text}<br>$%{x:,.2f}/h · p99 %{y:.1f} ms (queueing model)<extra></extra>"
_JUDGED_HOVER = "%{text}<br>$%{x:,.2f}/h · p99 %{y:.1f} ms, as on the Lab<extra></extra>"


def frontier_chart(workload: Workload, advice: Advice) -> None:
    st.subheader("Cost against p99")
    st.caption(
        "Each point is the cheapest design for its p99 by the queueing model (the Pareto "
        "frontier over every searched configuration and replica count with the headroom); the "
        "current and recommended designs are at their judged p99, as on the Lab. The dashed "
        "line is the target."
    )
    frontier = advice.frontier
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[d.cost.usd_per_hour for d in frontier],
            y=[d.p99_ms for d in frontier],
            mode="lines+markers",
            name="frontier (queueing model)",
            text=[d.label for d in frontier],
            hovertemplate=_MODEL_HOVER,
        )
    )
    current = advice.current
    if math.isfinite(current.p99_ms):
        figure.add_trace(
            go.Scatter(
                x=[current.cost.usd_per_hour],
                y=[current.p99_ms],
                mode="markers",
                marker={"symbol": "star", "size": 16},
                name="current design",
                text=[current.label],
                hovertemplate=_JUDGED_HOVER,
            )
        )
    if advice.best is not None:
        figure.add_trace(
            go.Scatter(
                x=[advice.best.cost.usd_per_hour],
                y=[advice.best.p99_ms],
                mode="markers",
                marker={"symbol": "diamond", "size": 14},
                name="recommended",
                text=[advice.best.label],
                hovertemplate=_JUDGED_HOVER,
            )
        )
    figure.add_hline(y=workload.p99_target_ms, line_dash="dash", line_color=TARGET_COLOUR)
    figure.update_xaxes(title_text="fleet cost ($/h)", type="log", tickformat="$~g")
    figure.update_yaxes(title_text="p99 (ms)", type="log", dtick="D2", tickformat="~g")
    figure.update_layout(
        height=380,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 73, "r": 10, "t": 17, "b": 110},
        legend={"orientation": "h", "y": -0.25},
    )
    st.plotly_chart(figure, key="advice.frontier")


def lever_table(workload: Workload) -> None:
    st.subheader("Levers: one change at a time")
    found = cached_levers(workload)
    st.caption(
        "Each change judged as the Lab would judge the design it makes."
        + (
            " Marked ≈: the queueing model's p99, approximate there, not simulated (the "
            "simulation budget was spent on likelier levers), so no verdict."
            if not all(lever.is_judged for lever in found)
            else ""
        )
    )
    rows = [
        {
            "change": lever.label,
            "p99": ms_text(lever.p99_ms) if lever.is_judged else f"≈ {ms_text(lever.p99_ms)}",
            "Δ p99": _delta_ms(lever.delta_p99_ms),
            "cost": f"{money(lever.usd_per_hour)}/h",
            "Δ cost": usd_delta_text(lever.delta_usd_per_hour, "/h"),
            "meets target": _verdict(lever.meets_target),
        }
        for lever in found
    ]
    st.dataframe(
        rows,
        hide_index=True,
        width="stretch",
        height="content",
        # The longest change ("Load balancer: Least request (power of two choices)") whole.
        column_config={"change": st.column_config.TextColumn(width="large")},
    )
    for comparison in cached_comparisons(workload):
        st.caption(
            f"For comparison, not a lever: {comparison.label}, {comparison.note}, would give a "
            f"p99 of {ms_text(comparison.p99_ms)} by the queueing model: what the balancer "
            "costs, not a design to build."
        )


def _verdict(meets: bool | None) -> str:
    return "not checked" if meets is None else ("yes" if meets else "no")


def breaking_table(workload: Workload) -> None:
    st.subheader("What breaks first")
    st.caption("How far each input can move before the p99 misses the target or the queue grows.")
    st.markdown("\n".join(f"- {point.text}" for point in cached_breaking_points(workload)))


def _delta_ms(delta: float) -> str:
    if not math.isfinite(delta):
        return "unstable (∞)" if delta > 0 else "—"
    return ms_delta_text(delta)


def _policy_text(policy: str) -> str:
    return CHOICE_BY_NAME["lb_policy"].label_of(policy).lower()
