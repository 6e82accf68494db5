"""The Advice page's sections: the cheapest design, the cost–p99 frontier, levers, what breaks.

Every number comes from ``sdlab_model.advice.search`` (the analytic model under the chosen LB
policy); a recommended design outside the model's validated range is also simulated, and the page
says whether the simulation agrees that it meets the target.
"""

from __future__ import annotations

import math
from dataclasses import astuple

import plotly.graph_objects as go
import streamlit as st

from sdlab_model.advice.hardware import CATALOG, hardware_by_id, parse_profile_csv
from sdlab_model.advice.search import (
    HEADROOM,
    Advice,
    BreakingPoint,
    Lever,
    advise,
    breaking_points,
    levers,
    workload_cost,
)
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui import budget, state
from sdlab_ui.figures import ms_text

_KEY = {Workload: astuple}


ADVICE_SIMULATION_REQUESTS = 60_000


def _simulated_p99(workload: Workload) -> float:
    from sdlab_model.simulation.simulator import simulate

    return simulate(workload, n_requests=ADVICE_SIMULATION_REQUESTS, seed=0).p99_ms


@st.cache_data(
    max_entries=32, hash_funcs=_KEY, show_spinner="Searching designs and simulating the best…"
)
def cached_advice(workload: Workload) -> Advice:
    """``advise`` with approximate candidates confirmed by simulation, cached (a second or a
    few of work)."""
    with budget.slot(budget.WORK):
        return advise(workload, simulate_p99=_simulated_p99)


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner=False)
def cached_levers(workload: Workload) -> tuple[Lever, ...]:
    return levers(workload)


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner=False)
def cached_breaking_points(workload: Workload) -> tuple[BreakingPoint, ...]:
    return breaking_points(workload)


def money(usd: float) -> str:
    """Dollars as a person reads them: cents below $100, whole dollars above."""
    if not math.isfinite(usd):
        return "—"
    return f"${usd:,.2f}" if usd < 100 else f"${usd:,.0f}"


def cost_line(workload: Workload) -> str:
    """'$2.86/h · $3.97 per 1M inferences' for the workload at its own prices."""
    cost = workload_cost(workload)
    return f"{money(cost.usd_per_hour)}/h · {money(cost.usd_per_million)} per 1M inferences"


def recommendation(workload: Workload) -> Advice:
    """The cheapest design and a one-click switch to it."""
    advice = cached_advice(workload)
    best = advice.best
    st.subheader("Cheapest design that meets the target")
    st.caption(
        f"Searched {advice.configurations_searched} configurations (CPU or GPU replicas, batching "
        "off or on over several windows and max batch sizes) × 1–500 replicas with the "
        f"{_policy(workload)} balancer, keeping {HEADROOM:.0%} capacity headroom (utilization "
        "at most 75%, the lab's safe-capacity line)."
    )
    if best is None:
        st.error(
            f"No design in the search space meets the {ms_text(workload.p99_target_ms)} target "
            "with that headroom. The frontier below shows the fastest each budget buys."
        )
        return advice
    columns = st.columns(4)
    columns[0].metric(
        "Design", f"{best.workload.replicas} × {'GPU' if best.workload.gpu else 'CPU'}"
    )
    columns[1].metric("Cost", f"{money(best.cost.usd_per_hour)}/h")
    if best.simulated_p99_ms is not None:  # as the Lab does: simulation where the model is unsure
        columns[2].metric("p99 (simulated)", ms_text(best.simulated_p99_ms))
    else:
        columns[2].metric("p99 (model)", ms_text(best.p99_ms))
    columns[3].metric("Utilization", f"{best.utilization:.0%}")
    st.markdown(
        f"**{best.label}** — {money(best.cost.usd_per_million)} per 1M inferences. The current "
        f"design: {advice.current.label}, {cost_line(workload)}, p99 "
        f"{ms_text(advice.current.p99_ms)}."
    )
    if best.simulated_p99_ms is not None:
        st.info(
            f"The model is outside its validated range for this design, so it was simulated "
            f"({ADVICE_SIMULATION_REQUESTS:,} requests): p99 {ms_text(best.simulated_p99_ms)}, "
            f"within the {ms_text(workload.p99_target_ms)} target. Cheaper designs the model "
            "liked but the simulation did not were passed over.",
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


def frontier_chart(workload: Workload, advice: Advice) -> None:
    st.subheader("Cost against p99")
    st.caption(
        "Each point is the cheapest design for its p99 (the Pareto frontier over every searched "
        "configuration and replica count with the headroom); the dashed line is the target."
    )
    frontier = advice.frontier
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[d.cost.usd_per_hour for d in frontier],
            y=[d.p99_ms for d in frontier],
            mode="lines+markers",
            name="frontier",
            text=[d.label for d in frontier],
            hovertemplate="%{text}<br>$%{x:,.2f}/h · p99 %{y:.1f} ms<extra></extra>",
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
                hovertemplate="%{text}<br>$%{x:,.2f}/h · p99 %{y:.1f} ms<extra></extra>",
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
                hovertemplate="%{text}<br>$%{x:,.2f}/h · p99 %{y:.1f} ms<extra></extra>",
            )
        )
    figure.add_hline(y=workload.p99_target_ms, line_dash="dash")
    figure.update_xaxes(title_text="fleet cost ($/h)", type="log")
    figure.update_yaxes(title_text="p99 (ms)", type="log")
    figure.update_layout(height=380, margin={"l": 10, "r": 10, "t": 10, "b": 10})
    st.plotly_chart(figure, key="advice.frontier")


def lever_table(workload: Workload) -> None:
    st.subheader("Levers: one change at a time")
    rows = [
        {
            "change": lever.label,
            "p99": ms_text(lever.p99_ms),
            "Δ p99": _delta_ms(lever.delta_p99_ms),
            "cost": f"{money(lever.usd_per_hour)}/h",
            "Δ cost": f"{lever.delta_usd_per_hour:+,.2f} $/h",
            "meets target": "yes" if lever.meets_target else "no",
        }
        for lever in cached_levers(workload)
    ]
    st.dataframe(rows, hide_index=True, width="stretch")


def breaking_table(workload: Workload) -> None:
    st.subheader("What breaks first")
    st.caption("How far each input can move before the p99 misses the target or the queue grows.")
    st.markdown("\n".join(f"- {point.text}" for point in cached_breaking_points(workload)))


def _delta_ms(delta: float) -> str:
    if not math.isfinite(delta):
        return "unstable (∞)" if delta > 0 else "—"
    return f"{delta:+.1f} ms"


def _policy(workload: Workload) -> str:
    return workload.lb_policy.replace("_", " ")


_CATALOG_KEY = "advice.catalog_choice"
_PROFILE_KEY = "advice.profile_upload"
_PROFILE_MESSAGE_KEY = "sdlab.profile_message"


def catalog_pricing(workload: Workload) -> None:
    """Price the CPU or GPU replica from the hardware catalog (every price sourced and dated)."""
    st.subheader("Price a replica from the catalog")
    st.caption(
        "On-demand list prices, each with its source and the date it was read "
        "(docs/hardware_catalog.md). Choosing one sets the price and the slots of that kind of "
        "replica; the model's speed stays yours (upload a measured profile below to set it)."
    )
    rows = [
        {
            "instance": h.name,
            "kind": h.kind.upper(),
            "accelerator": h.accelerator or "—",
            "memory (GB)": h.accelerator_memory_gb,
            "slots": h.slots,
            "$/h": h.usd_per_hour,
            "price read": h.price_date,
            "estimate": "yes" if h.is_estimate else "no",
        }
        for h in CATALOG
    ]
    st.dataframe(rows, hide_index=True, width="stretch")
    choice = st.selectbox(
        "Instance type",
        [h.id for h in CATALOG],
        key=_CATALOG_KEY,
        format_func=lambda id_: (
            f"{hardware_by_id(id_).name} · ${hardware_by_id(id_).usd_per_hour:g}/h"
        ),
    )
    st.button(
        "Use this price and slots", key="advice.use_catalog", on_click=_use_catalog, args=(choice,)
    )


def changes_for_hardware(workload: Workload, hardware_id: str) -> dict:
    """The workload changes that price a replica as ``hardware_id`` (and give it its slots)."""
    hardware = hardware_by_id(hardware_id)
    if hardware.kind == "gpu":
        return {
            "gpu": True,
            "gpu_usd_per_replica_hour": hardware.usd_per_hour,
            "gpu_instances_per_replica": hardware.slots,
        }
    return {
        "gpu": False,
        "cpu_usd_per_replica_hour": hardware.usd_per_hour,
        "cpu_workers_per_replica": hardware.slots,
    }


def _use_catalog(hardware_id: str) -> None:
    workload = state.current().workload
    state.load(workload.with_changes(**changes_for_hardware(workload, hardware_id)))


def changes_for_profile(workload: Workload, text: str) -> tuple[dict, str]:
    """Workload changes that make the current replica kind follow a measured batch profile.

    The profile (batch size -> latency of *your* model on that hardware) is fitted with the
    lab's batch cost ``s1 (f + (1 - f) b)``; on GPU ``s1`` sets the speed-up over the CPU
    latency, on CPU it is the model latency. Raises ValueError with a message for a bad file or
    a fit outside the inputs' ranges.
    """
    profile = parse_profile_csv(text)
    fit = profile.affine_fit()
    s1, share, error = fit.single_request_ms, fit.overhead_share, fit.max_relative_error
    note = (
        f"Fitted s1 = {s1:.3g} ms, fixed share f = {share:.3f} over {len(profile.batch_sizes)} "
        f"batch sizes (worst point {error:.1%} off the fit)."
    )
    if workload.gpu:
        speedup = workload.model_latency_ms / s1
        spec = NUMERIC_BY_NAME["gpu_speedup"]
        if not spec.minimum <= speedup <= spec.maximum:
            raise ValueError(
                f"the profile's single request takes {s1:.3g} ms, a GPU speed-up of "
                f"{speedup:.3g}x over the {workload.model_latency_ms:g} ms model latency, outside "
                f"{spec.minimum:g}-{spec.maximum:g}x; set the model latency first."
            )
        limit = NUMERIC_BY_NAME["gpu_batch_overhead_share"].maximum
        return {"gpu_speedup": speedup, "gpu_batch_overhead_share": min(share, limit)}, note
    spec = NUMERIC_BY_NAME["model_latency_ms"]
    if not spec.minimum <= s1 <= spec.maximum:
        raise ValueError(
            f"the profile's single request takes {s1:.3g} ms, outside the model latency range "
            f"{spec.minimum:g}-{spec.maximum:g} ms."
        )
    limit = NUMERIC_BY_NAME["cpu_batch_overhead_share"].maximum
    return {"model_latency_ms": s1, "cpu_batch_overhead_share": min(share, limit)}, note


def profile_upload(workload: Workload) -> None:
    st.subheader("Measured batch profile")
    kind = "GPU" if workload.gpu else "CPU"
    st.caption(
        f"Upload your model's measured latency by batch size on the {kind} replica: a CSV with "
        "`batch_size,latency_ms`, or perf_analyzer's `-f` CSV with a `Batch Size` column added. "
        "It is fitted with the lab's batch cost and sets that replica's speed and fixed share."
    )
    st.file_uploader(
        "Profile CSV", type=["csv", "txt"], key=_PROFILE_KEY, on_change=_on_profile_upload
    )
    message = st.session_state.get(_PROFILE_MESSAGE_KEY)
    if message:
        kind_of_message, text = message
        (st.error if kind_of_message == "error" else st.success)(state.plain_text(text))


def _on_profile_upload() -> None:
    uploaded = st.session_state.get(_PROFILE_KEY)
    if uploaded is None or not hasattr(uploaded, "getvalue"):
        st.session_state.pop(_PROFILE_MESSAGE_KEY, None)
        return
    workload = state.current().workload
    try:
        raw = uploaded.getvalue()
        text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
        changes, note = changes_for_profile(workload, text)
    except (ValueError, UnicodeDecodeError) as error:
        st.session_state[_PROFILE_MESSAGE_KEY] = ("error", f"Profile not used: {error}")
        return
    state.load(workload.with_changes(**changes))
    st.session_state[_PROFILE_MESSAGE_KEY] = ("success", f"Profile loaded. {note}")
