"""The Timeline page's sections: its inputs (kept in the URL as ``tl.*``), the charts over time,
the totals, the autoscaled fleet against a fixed one sized for the peak, and the simulator check.

The inputs start from the shared sidebar's workload: its request rate is the base rate, its
replicas the fleet at time 0 (and, unless set here, the autoscaler's minimum); everything else
(latency, batching, hardware, balancer, target, price) is the workload's. Inputs live in session
state under ``timeline.*`` (a canonical copy, as ``sdlab_ui.state`` keeps the lab's) and in the URL
as ``tl.name=value`` where they differ from their defaults; an uploaded trace stays in the
session only (a file does not fit in a link).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from sdlab_model.timeline import (
    AutoscalerConfig,
    ColdStart,
    TimelineInputs,
    TimelineResult,
    TrafficShape,
    parse_trace_csv,
    run_fixed_for_peak,
    run_timeline,
)
from sdlab_model.timeline.autoscalers import (
    AUTOSCALER_KINDS,
    AUTOSCALER_LABELS,
    CPU_NODE_PROVISION_S,
    GPU_NODE_PROVISION_S,
    HPA_CPU_INITIALIZATION_PERIOD_S,
    HPA_METRIC_WINDOW_S,
    KNOB_RANGES,
    MAX_REPLICAS,
)
from sdlab_model.timeline.model import hpa_metric_delay_s, replicas_at_target
from sdlab_model.timeline.traffic import TRAFFIC_KINDS, TRAFFIC_LABELS, UploadedTrace
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.cache import shared_cache
from sdlab_ui.figures import TARGET_COLOUR
from sdlab_ui.server import budget
from sdlab_ui.text import money, ms_text

PREFIX = "tl"
_VALUES_KEY = "timeline.values"
_LOADED_AT_KEY = "timeline.loaded_at"
_TRACE_KEY = "timeline.trace"
_WIDGET = "timeline.widget."
UPLOAD_KEY = "timeline.upload"
MAX_CHART_POINTS = 1_500
"""Points per line: a day at 1 s is 86,400 steps, drawn as at most this many buckets."""
CHECK_KEY = "timeline.check"


@dataclass(frozen=True)
class Field:
    """One timeline input: its URL name, label, range and default (None: from the workload)."""

    name: str
    label: str
    minimum: float
    maximum: float
    default: float | None
    step: float
    integer: bool = False
    help: str = ""


KNOBS: dict[str, str] = {}
"""Page input name -> the ``AutoscalerConfig`` field it sets."""


def _knob(name: str, knob: str, label: str, step: float, help_text: str) -> Field:
    """An autoscaler input whose range and default are the model's (``KNOB_RANGES``, the
    ``AutoscalerConfig`` defaults, each cited in ``sdlab_model.timeline.autoscalers``)."""
    low, high = KNOB_RANGES[knob]
    KNOBS[name] = knob
    default = AutoscalerConfig.__dataclass_fields__[knob].default
    return Field(name, label, low, high, float(default), step, help=help_text)


SCALER_KNOBS: dict[str, tuple[str, ...]] = {
    "none": (),
    "hpa": ("hpa_target", "hpa_down_s"),
    "kpa": ("kpa_concurrency", "kpa_target", "kpa_stable_s", "kpa_panic_pct", "kpa_panic_x"),
    "ray": ("ray_target", "ray_up_s", "ray_down_s"),
}
"""The inputs shown for each autoscaler."""

CHOICES: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "traffic": ("step", TRAFFIC_KINDS, TRAFFIC_LABELS),
    "scaler": ("hpa", AUTOSCALER_KINDS, AUTOSCALER_LABELS),
}
FIELDS: tuple[Field, ...] = (
    Field("factor", "Multiplier k (×)", 0.0, 100.0, 3.0, 0.5),
    Field("at_s", "At t (s)", 0.0, 172_800.0, 60.0, 10.0),
    Field("spike_s", "Spike lasts d (s)", 0.0, 172_800.0, 120.0, 10.0),
    Field("peak_to_trough", "Peak / trough", 1.0, 100.0, 4.0, 0.5),
    Field(
        "duration_s",
        "Duration (s)",
        60.0,
        172_800.0,
        600.0,
        60.0,
        help="86400 is a day. The model runs a day at 1 s steps in well under a second.",
    ),
    Field("step_s", "Step (s)", 0.1, 60.0, 1.0, 0.5),
    Field(
        "min_replicas",
        "Min replicas",
        1,
        MAX_REPLICAS,
        None,
        1,
        True,
        "Unless set, the sidebar's replicas (also the fleet at time 0).",
    ),
    Field("max_replicas", "Max replicas", 1, MAX_REPLICAS, 100.0, 1, True),
    _knob(
        "hpa_target",
        "hpa_target_utilization",
        "HPA target utilization",
        0.05,
        "70% here (the issue's); Kubernetes defaults to 80% when an HPA names no metric, and its "
        "walkthrough uses 50%.",
    ),
    _knob(
        "hpa_down_s",
        "hpa_scale_down_stabilization_s",
        "HPA scale-down stabilization (s)",
        30.0,
        "Kubernetes' default: 300 s (--horizontal-pod-autoscaler-downscale-stabilization).",
    ),
    _knob(
        "kpa_concurrency",
        "kpa_container_concurrency",
        "KPA container concurrency (0 = slots × max batch)",
        1.0,
        "Requests one pod takes at once (containerConcurrency). Knative's default is 0 "
        "(unlimited, target 100); here 0 means what the replica can serve at once.",
    ),
    _knob(
        "kpa_target",
        "kpa_target_utilization",
        "KPA target utilization",
        0.05,
        "Knative's default: 70% of container concurrency "
        "(container-concurrency-target-percentage).",
    ),
    _knob(
        "kpa_stable_s",
        "kpa_stable_window_s",
        "KPA stable window (s)",
        10.0,
        "Knative's default: 60 s (stable-window; allowed 6 s to 1 h).",
    ),
    _knob(
        "kpa_panic_pct",
        "kpa_panic_window_percentage",
        "KPA panic window (% of stable)",
        1.0,
        "Knative's default: 10% (panic-window-percentage), 6 s of a 60 s stable window.",
    ),
    _knob(
        "kpa_panic_x",
        "kpa_panic_threshold",
        "KPA panic threshold (× ready pods)",
        0.1,
        "Knative's default: 200% (panic-threshold-percentage; allowed 110–1000%).",
    ),
    _knob(
        "ray_target",
        "ray_target_ongoing_requests",
        "Ray target ongoing requests per replica",
        0.5,
        "Ray Serve's default: 2 (target_ongoing_requests).",
    ),
    _knob(
        "ray_up_s",
        "ray_upscale_delay_s",
        "Ray upscale delay (s)",
        5.0,
        "Ray Serve's default: 30 s (upscale_delay_s).",
    ),
    _knob(
        "ray_down_s",
        "ray_downscale_delay_s",
        "Ray downscale delay (s)",
        30.0,
        "Ray Serve's default: 600 s (downscale_delay_s).",
    ),
    Field(
        "provision_s",
        "Node provisioning (s)",
        0.0,
        3600.0,
        None,
        5.0,
        help=f"Unless set: {CPU_NODE_PROVISION_S:g} s for a CPU node, "
        f"{GPU_NODE_PROVISION_S:g} s for a GPU node (sources: the Tradeoffs page).",
    ),
    Field("model_gb", "Model size (GB)", 0.0, 2000.0, 2.0, 0.5),
    Field(
        "load_gbps",
        "Load bandwidth (GB/s)",
        0.01,
        1000.0,
        2.0,
        0.5,
        help="~20–25 GB/s from host memory over PCIe 4.0; a few GB/s from local NVMe; "
        "less from network storage.",
    ),
    Field("queue_limit", "Queue limit (requests, 0 = none)", 0.0, 1e9, 0.0, 100.0, True),
)
FIELD_BY_NAME = {f.name: f for f in FIELDS}


def _default(field: Field, workload: Workload) -> float:
    if field.default is not None:
        return field.default
    if field.name == "min_replicas":
        return float(workload.replicas)
    return GPU_NODE_PROVISION_S if workload.gpu else CPU_NODE_PROVISION_S


def parse_params(given: dict[str, str], workload: Workload) -> tuple[dict, list[str]]:
    """Timeline values from URL text (missing: defaults); unreadable or out-of-range values fall
    back or are clamped, each with a notice. Never raises."""
    values: dict = {name: spec[0] for name, spec in CHOICES.items()}
    values.update({f.name: _default(f, workload) for f in FIELDS})
    notices: list[str] = []
    for name, text in given.items():
        shown = state.plain_text(str(text)[:30])
        if name in CHOICES:
            if text in CHOICES[name][1]:
                values[name] = text
            else:
                notices.append(f"Timeline {name}: {shown} is not a choice; kept the default.")
        elif name in FIELD_BY_NAME:
            field = FIELD_BY_NAME[name]
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                notices.append(
                    f"Timeline {field.label}: {shown} is not a number; kept the default."
                )
                continue
            clamped = min(max(number, field.minimum), field.maximum)
            if clamped != number:
                notices.append(
                    f"Timeline {field.label}: {shown} is outside the range; used {clamped:g}."
                )
            values[name] = float(round(clamped)) if field.integer else clamped
        else:
            notices.append(f"Ignored unknown timeline setting {state.plain_text(name[:30])}.")
    return values, notices


def current_values(workload: Workload) -> dict:
    """The page's inputs: from the URL on a session's first run and after Back/Forward."""
    loads = state.url_loads()
    if st.session_state.get(_LOADED_AT_KEY) != loads or _VALUES_KEY not in st.session_state:
        values, notices = parse_params(state.page_params(PREFIX), workload)
        st.session_state[_VALUES_KEY] = values
        st.session_state[_LOADED_AT_KEY] = loads
        for notice in notices[: state.MAX_NOTICES_SHOWN]:
            st.warning(notice, icon=":material/warning:")
    return dict(st.session_state[_VALUES_KEY])


def url_values(values: dict, workload: Workload) -> dict[str, str]:
    """The inputs that differ from their defaults, as URL text."""
    defaults, _ = parse_params({}, workload)
    out = {}
    for name, value in values.items():
        if value == defaults[name]:
            continue
        out[name] = value if isinstance(value, str) else f"{value:.6g}"
    return out


def _set(name: str) -> None:
    values = dict(st.session_state[_VALUES_KEY])
    values[name] = st.session_state[_WIDGET + name]
    st.session_state[_VALUES_KEY] = values


def _choice(column, name: str, label: str, values: dict) -> None:
    _, choices, labels = CHOICES[name]
    st.session_state[_WIDGET + name] = values[name]
    column.selectbox(
        label,
        choices,
        key=_WIDGET + name,
        format_func=labels.__getitem__,
        on_change=_set,
        args=(name,),
    )


def _number(column, name: str, values: dict) -> None:
    field = FIELD_BY_NAME[name]
    value = values[name]
    st.session_state[_WIDGET + name] = int(value) if field.integer else float(value)
    column.number_input(
        field.label,
        min_value=int(field.minimum) if field.integer else float(field.minimum),
        max_value=int(field.maximum) if field.integer else float(field.maximum),
        step=int(field.step) if field.integer else float(field.step),
        key=_WIDGET + name,
        help=field.help or None,
        on_change=_set,
        args=(name,),
    )


def controls(workload: Workload) -> dict:
    """Draw the inputs; returns their values (already in the URL)."""
    values = current_values(workload)
    left, middle, right = st.columns(3)
    with left:
        st.markdown(f"**Traffic** (base rate: the sidebar's {workload.rate_rps:,.0f} req/s)")
        _choice(left, "traffic", "Shape", values)
        kind = values["traffic"]
        if kind in ("step", "spike"):
            _number(left, "factor", values)
            _number(left, "at_s", values)
        if kind == "spike":
            _number(left, "spike_s", values)
        if kind == "diurnal":
            _number(left, "peak_to_trough", values)
        if kind == "uploaded":
            _upload(left)
        _number(left, "duration_s", values)
        _number(left, "step_s", values)
    with middle:
        st.markdown(f"**Autoscaler** (starts at the sidebar's {workload.replicas} replicas)")
        _choice(middle, "scaler", "Policy", values)
        _number(middle, "min_replicas", values)
        _number(middle, "max_replicas", values)
        for name in SCALER_KNOBS[values["scaler"]]:
            _number(middle, name, values)
        _number(middle, "queue_limit", values)
    with right:
        st.markdown("**Cold start** = provisioning + size ÷ bandwidth")
        _number(right, "provision_s", values)
        _number(right, "model_gb", values)
        _number(right, "load_gbps", values)
    values = dict(st.session_state[_VALUES_KEY])
    state.set_page_params(PREFIX, url_values(values, workload))
    return values


def _upload(column) -> None:
    uploaded = column.file_uploader(
        "Trace CSV: time_s,rate_rps",
        type=["csv"],
        key=UPLOAD_KEY,
        help="One row per change of rate, times in seconds from 0; each rate holds until the "
        "next row. At most 1 MB. The trace stays in this session (it is not in the link).",
    )
    if uploaded is not None:
        try:
            text = uploaded.getvalue().decode("utf-8-sig")  # as Excel saves "CSV UTF-8"
            st.session_state[_TRACE_KEY] = parse_trace_csv(text, source=uploaded.name[:60])
        except (UnicodeDecodeError, ValueError) as error:
            reason = (
                "the file is not UTF-8 text" if isinstance(error, UnicodeDecodeError) else error
            )
            column.error(
                f"Could not use {state.plain_text(uploaded.name[:60])}: "
                f"{state.plain_text(str(reason))}. Nothing was changed.",
                icon=":material/error:",
            )
    trace = st.session_state.get(_TRACE_KEY)
    if trace is not None:
        column.caption(
            f"Using {state.plain_text(trace.source)}: {len(trace.times_s):,} rows over "
            f"{trace.duration_s:,.0f} s, peak {max(trace.rates_rps):,.0f} req/s."
        )


def build_inputs(values: dict, workload: Workload) -> tuple[TimelineInputs | None, str | None]:
    """The model's inputs from the page's values, or None and a reason a person can act on."""
    trace: UploadedTrace | None = st.session_state.get(_TRACE_KEY)
    kind = values["traffic"]
    if kind == "uploaded" and trace is None:
        return None, "Upload a trace CSV (time_s,rate_rps) to run an uploaded shape."
    try:
        low = int(values["min_replicas"])
        inputs = TimelineInputs(
            workload=workload,
            traffic=TrafficShape(
                kind=kind,
                base_rate_rps=workload.rate_rps,
                factor=values["factor"],
                at_s=values["at_s"],
                spike_duration_s=values["spike_s"],
                peak_to_trough=values["peak_to_trough"],
                uploaded=trace if kind == "uploaded" else None,
            ),
            autoscaler=AutoscalerConfig(
                kind=values["scaler"],
                min_replicas=low,
                max_replicas=max(low, int(values["max_replicas"])),
                **{knob: values[name] for name, knob in KNOBS.items()},
            ),
            cold_start=ColdStart(values["provision_s"], values["model_gb"], values["load_gbps"]),
            duration_s=values["duration_s"],
            step_s=values["step_s"],
            queue_limit_requests=values["queue_limit"],
        )
    except ValueError as error:
        return None, f"These inputs cannot run: {state.plain_text(str(error))}."
    return inputs, None


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs={TimelineInputs: repr})
def _cached_run(inputs: TimelineInputs, fixed: bool) -> TimelineResult:
    with budget.slot(budget.WORK):
        return run_fixed_for_peak(inputs) if fixed else run_timeline(inputs)


def run_both(inputs: TimelineInputs) -> tuple[TimelineResult, TimelineResult]:
    """The autoscaled timeline and the fixed fleet for the peak, with a progress bar."""
    bar = st.progress(0.0, text="Running the autoscaled timeline…")
    autoscaled = _cached_run(inputs, False)
    bar.progress(0.5, text="Running a fixed fleet sized for the peak…")
    fixed = _cached_run(inputs, True)
    bar.empty()
    return autoscaled, fixed


def _buckets(n: int) -> int:
    return max(1, math.ceil(n / MAX_CHART_POINTS))


def _reduce(values: np.ndarray, size: int, how) -> np.ndarray:
    padded = np.concatenate([values, np.repeat(values[-1:], (-len(values)) % size)])
    return how(padded.reshape(-1, size), axis=1)


def timeline_figure(result: TimelineResult) -> go.Figure:
    """Four panels over time: offered vs ready capacity, replicas, p99 against the target,
    backlog. Long timelines are drawn in buckets (mean rate, least capacity and replicas, worst
    p99 and backlog of each bucket), so nothing the eye should see is averaged away."""
    size = _buckets(len(result.times_s))
    minutes = result.times_s / 60.0
    x = _reduce(minutes, size, np.min)
    figure = make_subplots(
        rows=4,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=(
            "Offered rate vs ready capacity (req/s)",
            "Replicas: ready and starting",
            "p99 per step (ms, log) against the target",
            "Backlog (requests waiting)",
        ),
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=_reduce(result.offered_rps, size, np.mean),
            name="offered",
            line={"color": "#2563eb"},
        ),
        1,
        1,
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=_reduce(result.capacity_rps, size, np.min),
            name="ready capacity",
            line={"color": "#16a34a", "shape": "hv"},
        ),
        1,
        1,
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=_reduce(result.ready_replicas.astype(float), size, np.min),
            name="ready",
            line={"color": "#16a34a", "shape": "hv"},
        ),
        2,
        1,
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=_reduce(result.starting_replicas.astype(float), size, np.max),
            name="starting",
            line={"color": "#f59e0b", "shape": "hv"},
        ),
        2,
        1,
    )
    p99 = _reduce(result.p99_ms, size, np.max)
    figure.add_trace(
        go.Scatter(
            x=x, y=np.where(np.isfinite(p99), p99, np.nan), name="p99", line={"color": "#7c3aed"}
        ),
        3,
        1,
    )
    target = result.inputs.workload.p99_target_ms
    figure.add_trace(
        go.Scatter(
            x=[x[0], x[-1]],
            y=[target, target],
            name="target",
            line={"color": TARGET_COLOUR, "dash": "dash"},
        ),
        3,
        1,
    )
    figure.add_trace(
        go.Scatter(
            x=x,
            y=_reduce(result.backlog_requests, size, np.max),
            name="backlog",
            line={"color": "#dc2626"},
            fill="tozeroy",
        ),
        4,
        1,
    )
    figure.update_yaxes(type="log", tickformat="~g", row=3, col=1)
    figure.update_xaxes(title_text="time (min)", row=4, col=1)
    figure.update_layout(
        height=820,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h", "y": -0.08},
        template="none",
    )
    return figure


def totals_table(autoscaled: TimelineResult, fixed: TimelineResult) -> None:
    """Autoscaled against the fixed fleet for the peak, side by side."""
    label = AUTOSCALER_LABELS[autoscaled.inputs.autoscaler.kind]
    fixed_label = (
        f"Fixed at {fixed.fixed_replicas} (sized for the peak)"
        if fixed.fixed_replicas is not None
        else f"Fixed at {MAX_REPLICAS} (no fleet up to {MAX_REPLICAS} meets the target at the peak)"
    )
    left, right = st.columns(2)
    for column, result, title in ((left, autoscaled, label), (right, fixed, fixed_label)):
        totals = result.totals
        column.markdown(f"**{title}**")
        a, b = column.columns(2)
        a.metric("Minutes over target", f"{totals.minutes_over_target} of {totals.minutes}")
        b.metric("Requests over target", _count(totals.requests_over_target))
        a.metric("Replica-hours", f"{totals.replica_hours:,.1f}")
        b.metric("Cost", money(totals.usd))
        a.metric("Worst p99 (a step)", ms_text(totals.worst_p99_ms))
        b.metric("Peak backlog", _count(totals.peak_backlog_requests))
        if totals.requests_dropped > 0:
            column.caption(f"Dropped at the queue limit: {_count(totals.requests_dropped)}.")


def _count(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:,.2f} M"
    return f"{value:,.0f}"


def ramp_story(result: TimelineResult) -> str:
    """What the autoscaler did and when capacity arrived; for the HPA, why its ramp is slower
    than one decision per cold start (numbers computed)."""
    steps = result.decisions >= 0
    times = result.times_s[steps]
    counts = result.decisions[steps]
    inputs = result.inputs
    cold = inputs.cold_start.cold_start_s
    if not len(times):
        return (
            f"The fleet stayed at {int(result.ready_replicas[0])} replicas "
            f"(cold start would be {cold:.0f} s)."
        )
    shown = ", ".join(f"{int(n)} at {t:.0f} s" for t, n in zip(times[:8], counts[:8], strict=True))
    more = f" and {len(times) - 8} more changes" if len(times) > 8 else ""
    story = (
        f"Decisions: {int(result.ready_replicas[0])} → {shown}{more}. Each new replica "
        f"serves {cold:.0f} s after its decision (cold start); until then the backlog grows."
    )
    if inputs.autoscaler.kind != "hpa":
        return story
    scaler = inputs.autoscaler
    delay = hpa_metric_delay_s(inputs.cold_start)
    peak = inputs.traffic.peak_rate_rps(inputs.duration_s)
    settled = replicas_at_target(inputs, peak)
    if delay > 0:
        metric = (
            f"The HPA uses a new pod's CPU only {delay:.0f} s after it turns ready (in its "
            f"first {HPA_CPU_INITIALIZATION_PERIOD_S / 60:.0f} minutes a pod's metric counts "
            f"once a whole {HPA_METRIC_WINDOW_S:.0f} s metric window follows its readiness; "
            "until then it counts as 0% on a scale-up), so its decisions come "
            f"{cold + delay:.0f} s apart, not every {cold:.0f} s."
        )
    else:
        metric = (
            "The HPA uses a new pod's CPU as soon as it is ready (its model load outlasts the "
            f"{HPA_CPU_INITIALIZATION_PERIOD_S / 60:.0f}-minute CPU initialization period)."
        )
    return (
        f"{story} {metric} While a backlog is left every replica reports 100% busy, so each "
        f"sync asks ceil(n ÷ {scaler.hpa_target_utilization:.0%}); at the peak's {peak:,.0f} "
        f"req/s without a backlog the fleet would settle at {settled} replicas."
    )


@shared_cache(maxsize=8)
def _cached_check(inputs: TimelineInputs, seed: int):
    """The simulator check of ``inputs``' autoscaled timeline, kept outside Streamlit's caches:
    any visitor's ``clear_cache`` message empties those, and this is the page's costliest result."""
    from sdlab_model.timeline.check import simulate_timeline

    result = _cached_run(inputs, False)
    with budget.slot(budget.HEAVY):
        return simulate_timeline(
            result, seed, between_chunks=lambda done, total: budget.take_turns()
        )


def _span_words(span, result: TimelineResult) -> str:
    """What the check simulates, in words: all of it, or its first minutes and why."""
    from sdlab_model.timeline.check import MAX_SIMULATED_REQUESTS

    if span.whole:
        return f"the {span.expected_requests:,.0f} requests"
    return (
        f"the first {span.minutes:,} of {len(result.minute_starts_s):,} minutes "
        f"({span.expected_requests:,.0f} requests; the check simulates at most "
        f"{MAX_SIMULATED_REQUESTS:,}, from the start)"
    )


def simulator_check(inputs: TimelineInputs, result: TimelineResult) -> None:
    """On request: the same arrivals and ready fleet through the discrete-event simulator."""
    from sdlab_model.timeline.check import MAX_SIMULATED_REQUESTS, check_span, coverage_note

    st.subheader("Check against the simulator")
    note = coverage_note(inputs.workload)
    if note is not None:
        st.caption(f"{note} Change those in the sidebar to run it.")
        return
    span = check_span(result)
    if span.minutes == 0:
        st.caption(
            f"The first minute alone has more than the check's {MAX_SIMULATED_REQUESTS:,} "
            "requests: lower the rate to check it."
        )
        return
    what = _span_words(span, result)
    if not st.button("Simulate this timeline", key=CHECK_KEY):
        st.caption(
            f"Draws {what} as a Poisson stream of the step's rate and serves them on the ready "
            "replicas the model scheduled, through the sidebar's balancer and batching; then "
            "compares each minute's p99."
        )
        return
    bar = st.progress(0.0, text=f"Simulating {span.expected_requests:,.0f} requests…")
    check = _cached_check(inputs, 0)
    bar.progress(1.0, text="Done.")
    bar.empty()
    if not span.whole:
        st.caption(f"Simulated {what}: the figures below are for those minutes.")
    errors = check.p99_errors
    st.markdown(
        f"Minutes over the target: model **{check.model_minutes_over}**, simulation "
        f"**{check.simulated_minutes_over}**. Requests over the target: model "
        f"**{_count(check.model_requests_over)}**, simulation "
        f"**{_count(check.simulated_requests_over)}**. p99 per minute: median error "
        f"**{check.median_abs_error:.1%}**, worst **{check.worst_abs_error:.1%}** over "
        f"{errors.size} minutes with at least 200 requests."
    )
    figure = go.Figure()
    x = check.minute_starts_s / 60.0
    figure.add_trace(go.Scatter(x=x, y=check.model_p99_ms, name="model", mode="lines+markers"))
    figure.add_trace(
        go.Scatter(x=x, y=check.simulated_p99_ms, name="simulation", mode="lines+markers")
    )
    figure.update_yaxes(type="log", tickformat="~g", title_text="p99 per minute (ms)")
    figure.update_xaxes(title_text="time (min)")
    figure.update_layout(height=320, margin={"l": 10, "r": 10, "t": 10, "b": 10}, template="none")
    st.plotly_chart(figure, key="timeline.check_chart")
