"""The Models and memory page's sections: residency inputs, the placements side by side, the limits.

Every number comes from ``sdlab_model.residency.plan_residency`` for the lab's workload and the
residency inputs (``state.LabState.residency``, kept in the URL like every other input).
"""

from __future__ import annotations

import math
from dataclasses import astuple

import streamlit as st

from sdlab_model.advice.hardware import hardware_by_id
from sdlab_model.page_params import ACCELERATOR_INPUT
from sdlab_model.params import RESIDENCY_INPUTS, NumericInput
from sdlab_model.residency import ResidencyInputs
from sdlab_model.residency.inputs import parse_sizes
from sdlab_model.residency.latency import LOAD_TIME_SHARE
from sdlab_model.residency.placement import (
    Placement,
    ResidencyPlan,
    plan_residency,
    replica_usd_per_hour,
    routed_reason,
)
from sdlab_model.residency.simulated import simulate_packed, simulate_routed
from sdlab_model.simulation.converged import interval_ms_text
from sdlab_model.simulation.simulator import ResidencySimResult
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.server import budget
from sdlab_ui.text import ms_text, replicas_text
from sdlab_ui.widgets import choice_widget, numeric_widget

_KEY = {Workload: astuple, ResidencyInputs: astuple}
KEY_PREFIX = "residency."
SIZES_KEY = KEY_PREFIX + "model_sizes_gb"
ACCELERATOR_KEY = KEY_PREFIX + "accelerator"


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner="Comparing placements of the models…")
def cached_plan(workload: Workload, inputs: ResidencyInputs) -> ResidencyPlan:
    """``plan_residency``, cached (a tenth of a second to a second of work)."""
    with budget.slot(budget.WORK):
        return plan_residency(workload, inputs)


SIM_REQUESTS = 200_000
"""Requests per simulated placement: four replications, as ``simulate_packed`` runs them."""
RECOMMENDED_SIM_REQUESTS = 2_000_000
"""Requests for the recommended routed design at the replicas it needs: sized that close to
capacity, its busiest replicas reach their steady state only in long runs, and short runs read
its p99 low."""


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner=False)
def simulated_placement(
    workload: Workload,
    inputs: ResidencyInputs,
    pinned_models: int,
    placement_id: str = "",
    requests: int = SIM_REQUESTS,
) -> ResidencySimResult:
    """One packed or routed placement simulated (a tenth of a second to half a second of work),
    cached and budgeted."""
    with budget.slot(budget.WORK):
        if placement_id == "model_aware":
            return simulate_routed(workload, inputs, n_requests=requests)
        return simulate_packed(workload, inputs, pinned_models, n_requests=requests)


def checked_designs(plan: ResidencyPlan) -> list[tuple[str, Workload, Placement, float, int]]:
    """(row label, workload, placement, model p99, requests) for each design the page simulates:
    every stable non-dedicated placement the model calls approximate, at the lab's replicas, and
    the recommended routed one at the replicas it needs when that is approximate too.

    An unstable placement is not simulated: a finite run of a queue that grows without bound
    reports a finite p99 that only says how long the run was.
    """
    rows = [
        (p.label, plan.workload, p, p.p99_ms, SIM_REQUESTS)
        for p in plan.placements
        if p.id != "dedicated" and p.accuracy == "approximate" and p.is_stable
    ]
    chosen = plan.placement(plan.recommended) if plan.recommended else None
    if (
        chosen is not None
        and chosen.id == "model_aware"
        and chosen.accuracy_to_meet == "approximate"
        and chosen.replicas_to_meet != plan.workload.replicas
    ):
        sized = plan.workload.with_changes(replicas=chosen.replicas_to_meet)
        label = f"{chosen.label} at {replicas_text(sized.replicas)} (recommended)"
        rows.append((label, sized, chosen, chosen.p99_ms_to_meet, RECOMMENDED_SIM_REQUESTS))
    return rows


def simulation_check(plan: ResidencyPlan) -> None:
    """Where the model calls a stable placement approximate, its simulated p99 beside."""
    designs = checked_designs(plan)
    if not designs:
        return
    target = plan.workload.p99_target_ms
    rows = []
    with st.spinner("Simulating the placements the model is unsure of…"):
        for label, workload, p, model_p99, requests in designs:
            result = simulated_placement(workload, plan.inputs, p.pinned_models, p.id, requests)
            low, high = result.p99_ci_ms
            rows.append(
                {
                    "placement": label,
                    "model p99": ms_text(model_p99),
                    "simulated p99": ms_text(result.p99_ms),
                    "95% interval": _interval_text(low, high),
                    f"meets {ms_text(target)} (simulated)": "yes"
                    if result.p99_ms <= target
                    else "no",
                    "hit ratio (simulated)": f"{result.batch_hit_ratio:.1%}",
                }
            )
    st.markdown("**Simulated where the model is approximate**")
    st.dataframe(
        rows, hide_index=True, width="stretch", height="content", key=KEY_PREFIX + "simulated"
    )
    st.caption(
        f"These placements are outside the range where the residency model was checked against "
        f"the simulator, so the simulated p99 is the one to trust: {SIM_REQUESTS:,} requests "
        f"({RECOMMENDED_SIM_REQUESTS:,} for the recommended routed design, close to capacity) in "
        "four repeatable replications, each replica's LRU cache of models simulated with loads "
        "holding the slot that took the batch; routed by model, each request goes only to a "
        "replica that holds its model."
    )


def _interval_text(low_ms: float, high_ms: float) -> str:
    """'7.93–7.97 ms' (never '7.95 ms – 7.95 ms'), 'at least 120 ms' where it has no end."""
    if not math.isfinite(low_ms):
        return "—"
    if not math.isfinite(high_ms):
        return f"at least {ms_text(low_ms)}"
    return f"{interval_ms_text(low_ms, high_ms)} ms"


def money(usd_per_hour: float) -> str:
    """'$282.00/h', or 'cannot meet it' for an infinite cost."""
    return f"${usd_per_hour:,.2f}/h" if math.isfinite(usd_per_hour) else "cannot meet it"


def inputs_form(inputs: ResidencyInputs) -> None:
    """The residency inputs; each change goes to ``state.load_residency`` (and the URL)."""
    left, right = st.columns(2)
    with left:
        choice_widget(
            ACCELERATOR_INPUT, ACCELERATOR_KEY, inputs.accelerator, _on_change, ("accelerator",)
        )
        for spec in RESIDENCY_INPUTS[:2]:
            _numeric(spec, inputs)
    with right:
        for spec in RESIDENCY_INPUTS[2:]:
            _numeric(spec, inputs)
        st.session_state[SIZES_KEY] = ",".join(f"{s:g}" for s in inputs.model_sizes_gb)
        st.text_input(
            "Model sizes, most popular first (GB, comma-separated; optional)",
            key=SIZES_KEY,
            on_change=_on_sizes_change,
            max_chars=4000,
            help="Overrides the one size: the i-th size is the i-th most popular model's; models "
            "past the end take the last size. Empty: every model takes the size above.",
        )


def summary(plan: ResidencyPlan) -> None:
    """What fits and what a load costs, in one paragraph."""
    inputs, workload = plan.inputs, plan.workload
    sizes = inputs.sizes_gb(workload.models_hosted)
    load_ms = float(inputs.load_ms(sizes).mean())
    st.markdown(
        f"Each GPU has **{inputs.accelerator_memory_gb:g} GB**; less the "
        f"{inputs.activation_reserve_gb:g} GB reserve, **{plan.usable_memory_gb:g} GB** hold "
        f"weights: **{plan.models_fit_per_replica} of {workload.models_hosted:,} "
        f"model{'s' if workload.models_hosted != 1 else ''}** fit "
        f"on a replica at once. Loading one takes **{ms_text(load_ms)}** on average "
        f"({inputs.load_overhead_ms:g} ms fixed + the copy at {inputs.load_gb_per_s:g} GB/s)."
    )


def placements_table(plan: ResidencyPlan) -> None:
    """The placements side by side, then the plain warnings their numbers call for."""
    target = plan.workload.p99_target_ms
    rows = []
    for p in plan.placements:
        pinned = f" ({p.pinned_models} pinned)" if p.id == "packed_pinned" else ""
        rows.append(
            {
                "placement": p.label + pinned,
                "replicas": p.replicas,
                "cost": money(p.usd_per_hour),
                "p99": ("≤ " if p.p99_is_bound and math.isfinite(p.p99_ms) else "")
                + ms_text(p.p99_ms),
                f"meets {ms_text(target)}": "yes" if p.meets_target else "no",
                "hit ratio": f"{p.hit_ratio:.1%}",
                "requests waiting for a load": f"{p.load_wait_share:.1%}",
                "replicas to meet the target": (
                    f"{p.replicas_to_meet:,}" if p.replicas_to_meet else "none up to 500"
                ),
                "cost to meet it": money(p.usd_per_hour_to_meet),
                "accuracy": p.accuracy,
            }
        )
    st.dataframe(rows, hide_index=True, width="stretch", height="content", key=KEY_PREFIX + "table")
    for p in plan.placements:
        if p.p99_is_load_time and p.is_stable:
            st.warning(
                f"{p.label}: {p.load_wait_share:.1%} of requests wait for a model to load, more "
                f"than {LOAD_TIME_SHARE:.0%}, so its p99 of {ms_text(p.p99_ms)} is a load time, "
                "not a queueing time.",
                icon=":material/hourglass_top:",
            )
        elif not p.is_stable and p.id != "dedicated":
            st.error(f"{p.label}: unstable (∞). {p.note}", icon=":material/error:")


def recommendation(plan: ResidencyPlan) -> None:
    """The design the numbers favour, the memory the target needs, where packing stops paying."""
    if plan.recommended is None:
        st.error(
            "No placement meets the p99 target with up to 500 replicas.", icon=":material/error:"
        )
    else:
        chosen = plan.placement(plan.recommended)
        st.success(
            f"Recommended: **{chosen.label}** — the cheapest that meets the target: "
            f"{money(chosen.usd_per_hour_to_meet)} with {replicas_text(chosen.replicas_to_meet)}.",
            icon=":material/check_circle:",
        )
        reason = routed_reason(plan)
        if reason:
            st.markdown(reason)
    memory = plan.memory_for_target_gb
    if memory is None:
        line = (
            "Even with every model resident the packed fleet misses the target at "
            f"{replicas_text(plan.workload.replicas)}: memory alone cannot fix it."
        )
    else:
        line = (
            f"A packed LRU fleet at {replicas_text(plan.workload.replicas)} meets the target with "
            f"**{memory:.1f} GB** per GPU (the reserve included); this one has "
            f"{plan.inputs.accelerator_memory_gb:g} GB."
        )
    st.markdown(line)
    if plan.packing_stops_paying_gb is not None:
        st.markdown(
            "Packing with LRU, sized to meet the target, costs more than dedicated replicas "
            f"from **{plan.packing_stops_paying_gb:g} GB** a model on."
        )
    elif plan.packing_pays_everywhere:
        st.markdown("Packing with LRU costs less than dedicated replicas at every size tried.")
    st.caption(
        "Hit ratios: Che's approximation for LRU (Che, Tung & Wang 2002; Fricker, Robert & "
        "Roberts 2012), within 0.02 of a simulated LRU cache on Zipf streams. A miss loads the "
        "model on the slot its batch took; the p99 mixes the requests that wait for a load with "
        "those that queue behind loads (scripts/residency_check.py checks it against the "
        "simulator). Dedicated: each model on its own replicas, the fewest that meet the "
        "target; its p99 is the worst model's, an upper bound. Model-aware routing: each model "
        "on the fewest replicas its traffic needs within each GPU's memory, each request only "
        "to a replica holding its model, as KServe ModelMesh and SageMaker multi-model "
        "endpoints route; in steady state nothing is loaded. " + _price_text(plan)
    )


def _price_text(plan: ResidencyPlan) -> str:
    """Which price the placements' costs use, with its figures (every placement alike)."""
    hardware = hardware_by_id(plan.inputs.accelerator)
    gpus = plan.workload.gpu_instances_per_replica
    price = replica_usd_per_hour(plan.workload, plan.inputs)
    return (
        f"Costs: ${price:,.2f} a replica-hour for every placement, the hardware catalog's "
        f"{hardware.accelerator} price (${hardware.usd_per_hour / hardware.slots:,.3f} a GPU-hour"
        f", {hardware.id}) times {gpus} GPU{'s' if gpus != 1 else ''} a replica."
    )


def _numeric(spec: NumericInput, inputs: ResidencyInputs) -> None:
    value = getattr(inputs, spec.name)
    numeric_widget(spec, KEY_PREFIX + spec.name, value, _on_change, (spec.name,))


def _on_change(name: str) -> None:
    value = st.session_state[KEY_PREFIX + name]
    try:
        state.load_residency(state.current().residency.with_changes(**{name: value}))
    except ValueError as error:  # a widget offers only valid values; keep the inputs if not
        state.set_notices((str(error),))


def _on_sizes_change() -> None:
    sizes, notice = parse_sizes(str(st.session_state[SIZES_KEY]))
    state.load_residency(state.current().residency.with_changes(model_sizes_gb=sizes))
    if notice:
        state.set_notices((notice,))
