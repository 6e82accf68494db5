"""The Lab page's sections, each drawn from an ``Assessment`` (and a simulation summary).

Text shown here comes from the model (stage titles, meter and decision texts, reasons), never
from a visitor, and is rendered as Markdown without HTML.
"""

from __future__ import annotations

import math

import streamlit as st

from sdlab_model import scenario_file
from sdlab_model.architecture import STATE_MEANING
from sdlab_model.assessment import Assessment
from sdlab_ui import cache, state
from sdlab_ui.figures import ms_text, rate_text
from sdlab_ui.simulation import SimSummary

# Streamlit's own icon font, so the marks show even where no emoji font is installed.
STATUS_ICON = {"ok": ":green[:material/check_circle:]", "warning": ":orange[:material/warning:]",
               "danger": ":red[:material/error:]"}
DECISION_BADGE = {"needed": ":red-badge[needed]", "useful": ":blue-badge[useful]",
                  "tradeoff": ":orange-badge[tradeoff]", "not-yet": ":gray-badge[not yet]"}
_UPLOAD_KEY = "lab.scenario_upload"
_UPLOAD_MESSAGE_KEY = "sdlab.upload_message"


def headline_p99(result: Assessment, sim: SimSummary | None) -> tuple[float, bool]:
    """The p99 to headline and whether it is the simulated one.

    Where the queueing model calls itself approximate, the simulation is the better number.
    """
    if result.model == "queueing" and result.accuracy == "approximate" and sim is not None:
        return sim.p99_ms, True
    return result.p99_ms, False


def architecture(result: Assessment) -> None:
    """The diagram: node colours by state, the recommended path drawn heavy, a legend."""
    st.graphviz_chart(cache.architecture_dot(result), width="stretch")
    st.caption("Heavy outline: the recommended request path. "
               + " · ".join(f"**{s}**: {m}" for s, m in STATE_MEANING.items()))


def recommended_shape(result: Assessment) -> None:
    stage = result.stage
    st.markdown(f"#### Recommended shape · stage {stage.number}")
    st.markdown(f"**{stage.title}**")
    st.write(stage.summary)
    st.caption("Request path: " + " → ".join(stage.path))


def headline(result: Assessment, sim: SimSummary | None) -> None:
    """p50/p95/p99 against the target, capacity, utilization and replicas needed."""
    target = result.workload.p99_target_ms
    p99, simulated = headline_p99(result, sim)
    columns = st.columns(3)
    columns[0].metric("p50", ms_text(sim.p50_ms if simulated else result.p50_ms))
    columns[1].metric("p95", ms_text(sim.p95_ms if simulated else result.p95_ms))
    if math.isfinite(p99):
        spare = target - p99
        margin = f"{spare:.3g} ms to spare" if spare >= 0 else f"{-spare:.3g} ms over target"
    else:
        margin = "queue grows without bound"
    columns[2].metric("p99 (simulated)" if simulated else "p99", ms_text(p99), delta=margin,
                      delta_color="normal" if math.isfinite(p99) else "inverse")
    columns = st.columns(3)
    columns[0].metric("Capacity", rate_text(result.capacity_rps))
    columns[1].metric("Utilization", f"{result.utilization:.0%}" if result.utilization < 100
                      else f"{result.utilization:,.0f}x")
    needed = result.min_replicas_for_target
    columns[2].metric("Replicas needed", "none ≤ 500" if needed is None else f"{needed}")
    if simulated:
        st.caption(f"p50/p95/p99 simulated: {result.accuracy_note}")
    elif result.p50_ms is None:
        st.caption("The teaching model defines only a p99.")


def breakdown(result: Assessment, other: Assessment) -> None:
    """Where each model's p99 goes: compute, batch formation, queueing."""
    st.plotly_chart(cache.breakdown_figure(result, other), key="lab.breakdown")


def meters(result: Assessment) -> None:
    st.markdown("#### Bottlenecks")
    for column, meter in zip(st.columns(len(result.meters)), result.meters, strict=True):
        with column:
            st.progress(min(max(meter.ratio, 0.0), 1.0),
                        text=f"{STATUS_ICON[meter.status]} **{meter.label}**")
            st.caption(f"{meter.value_text}. {meter.explanation}")


def decisions(result: Assessment) -> None:
    st.markdown("#### Decisions")
    columns = st.columns(3)
    for index, decision in enumerate(result.decisions):
        with columns[index % 3].container(border=True):
            st.markdown(f"**{decision.label}** {DECISION_BADGE.get(decision.state, '')}")
            st.caption(decision.text)


def reasons(result: Assessment) -> None:
    st.markdown("#### Why this changes")
    st.markdown("\n".join(f"- {STATUS_ICON[r.status]} {r.text}" for r in result.reasons))


def accuracy(queueing: Assessment, teaching: Assessment, sim: SimSummary | None) -> None:
    """Teaching, queueing and simulated p99 side by side, each model's error, the CDF."""
    st.markdown("#### How far to trust the p99: teaching vs queueing vs simulation")
    columns = st.columns(3)
    for column, result in zip(columns[:2], (teaching, queueing), strict=True):
        error = sim.error_text(result.p99_ms) if sim and sim.is_stable else None
        column.metric(f"{result.model.capitalize()} model p99", ms_text(result.p99_ms),
                      delta=error, delta_color="off", help=result.accuracy_note)
    if sim is None:
        columns[2].metric("Simulated p99", "—")
        return
    columns[2].metric("Simulated p99", ms_text(sim.p99_ms), help=sim.note,
                      delta=sim.interval_text(), delta_color="off")
    if sim.is_stable:
        figure = cache.distribution_figure(queueing.workload, queueing.p99_ms, teaching.p99_ms)
        st.plotly_chart(figure, key="lab.distribution")
    st.caption(sim.note)


def scenario_files(lab: state.LabState) -> None:
    """Save the lab as a JSON file; restore one (a bad file changes nothing and says why)."""
    st.markdown("#### Save or restore this lab")
    left, right = st.columns(2)
    left.download_button("Download scenario file (JSON)",
                         scenario_file.dumps(lab.workload, lab.model),
                         file_name=scenario_file.FILE_NAME, mime=scenario_file.MIME_TYPE,
                         key="lab.scenario_download", on_click="ignore")
    right.file_uploader("Restore a scenario file", type=["json"], key=_UPLOAD_KEY,
                        on_change=_on_upload)
    kind, message = st.session_state.get(_UPLOAD_MESSAGE_KEY, (None, ""))
    if kind == "error":
        # The message quotes file content only as inert code spans (scenario_file's contract).
        st.error(f"Not loaded, the lab is unchanged: {message}")
    elif kind == "success":
        st.success(message)


def _on_upload() -> None:
    uploaded = st.session_state.get(_UPLOAD_KEY)
    if uploaded is None:
        st.session_state.pop(_UPLOAD_MESSAGE_KEY, None)
        return
    try:
        loaded = scenario_file.loads(uploaded.getvalue())
    except scenario_file.ScenarioFileError as error:
        st.session_state[_UPLOAD_MESSAGE_KEY] = ("error", str(error))
        return
    state.load(loaded.workload, loaded.model)
    st.session_state[_UPLOAD_MESSAGE_KEY] = ("success", "Scenario file loaded.")


_VERIFIED_KEY = "sdlab.verified_grid"


def simulation_check(lab: state.LabState) -> None:
    """Heatmaps: on request, simulate the grid and map each cell's model error."""
    st.subheader("Verify with simulation")
    key = cache.grid_key(lab.workload)
    cells = cache.VERIFY_RATE_CELLS * cache.VERIFY_REPLICA_CELLS
    st.caption(
        f"Simulates {cells} cells ({cache.VERIFY_RATE_CELLS} rates x "
        f"{cache.VERIFY_REPLICA_CELLS} replica counts), "
        f"{cache.VERIFY_REQUESTS_PER_CELL:,} requests each, and maps the {lab.model} model's "
        "p99 error against it: red where the model is pessimistic, blue where it is optimistic."
    )
    if st.session_state.get(_VERIFIED_KEY) != key:
        st.button("Verify with simulation", key="heatmap.verify", on_click=_remember_verified,
                  args=(key,), type="primary")
        return
    analytic, errors = cache.verification_figures(lab.workload, lab.model)
    left, right = st.columns(2)
    with left:
        st.markdown("**Model p99 on the simulated cells**")
        st.plotly_chart(analytic, key="heatmap.verify.analytic")
    with right:
        st.markdown("**Model vs simulation, % error**")
        st.plotly_chart(errors, key="heatmap.verify.error")


def _remember_verified(key) -> None:
    st.session_state[_VERIFIED_KEY] = key
