"""The Timeline page's controls: the widgets of its inputs (declared in
``sdlab_model.page_params``) and the ``TimelineInputs`` they build, kept in the URL as ``tl.*``.

The inputs start from the shared sidebar's workload: its request rate is the base rate, its
replicas the fleet at time 0 (and, unless set here, the autoscaler's minimum); everything else
(latency, batching, hardware, balancer, target, price) is the workload's. Inputs live in session
state under ``timeline.*`` (a canonical copy, as ``sdlab_ui.state`` keeps the lab's) and in the URL
as ``tl.name=value`` where they differ from their defaults; an uploaded trace stays in the
session only (a file does not fit in a link).
"""

from __future__ import annotations

import math

import streamlit as st

from sdlab_model.page_params import (
    TIMELINE_BY_NAME,
    TIMELINE_CHOICE_BY_NAME,
    TIMELINE_CHOICES,
    TIMELINE_INPUTS,
    TIMELINE_KNOBS,
    WORKLOAD_DEFAULTS,
)
from sdlab_model.params import NumericInput
from sdlab_model.timeline import (
    AutoscalerConfig,
    ColdStart,
    TimelineInputs,
    TrafficShape,
    parse_trace_csv,
)
from sdlab_model.timeline.autoscalers import (
    CPU_NODE_PROVISION_S,
    GPU_NODE_PROVISION_S,
)
from sdlab_model.timeline.traffic import UploadedTrace
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.text import replicas_text
from sdlab_ui.widgets import choice_widget, input_label, numeric_widget

PREFIX = "tl"
_VALUES_KEY = "timeline.values"
_LOADED_AT_KEY = "timeline.loaded_at"
_TRACE_KEY = "timeline.trace"
_WIDGET = "timeline.widget."
UPLOAD_KEY = "timeline.upload"
SCALER_KNOBS: dict[str, tuple[str, ...]] = {
    "none": (),
    "hpa": ("hpa_target", "hpa_down_s", "hpa_window_s"),
    "kpa": ("kpa_concurrency", "kpa_target", "kpa_stable_s", "kpa_panic_pct", "kpa_panic_x"),
    "ray": ("ray_target", "ray_up_s", "ray_down_s"),
}
"""The inputs shown for each autoscaler."""


def _default(spec: NumericInput, workload: Workload) -> float:
    if spec.name not in WORKLOAD_DEFAULTS:
        return float(spec.default)
    if spec.name == "min_replicas":
        return float(workload.replicas)
    return GPU_NODE_PROVISION_S if workload.gpu else CPU_NODE_PROVISION_S


def parse_params(given: dict[str, str], workload: Workload) -> tuple[dict, list[str]]:
    """Timeline values from URL text (missing: defaults); unreadable or out-of-range values fall
    back or are clamped, each with a notice. Never raises."""
    values: dict = {choice.name: choice.default for choice in TIMELINE_CHOICES}
    values.update({spec.name: _default(spec, workload) for spec in TIMELINE_INPUTS})
    notices: list[str] = []
    for name, text in given.items():
        shown = state.plain_text(str(text)[:30])
        if name in TIMELINE_CHOICE_BY_NAME:
            if text in TIMELINE_CHOICE_BY_NAME[name].choices:
                values[name] = text
            else:
                notices.append(f"Timeline {name}: {shown} is not a choice; kept the default.")
        elif name in TIMELINE_BY_NAME:
            field = TIMELINE_BY_NAME[name]
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                notices.append(
                    f"Timeline {input_label(field)}: {shown} is not a number; kept the default."
                )
                continue
            clamped = min(max(number, field.minimum), field.maximum)
            if clamped != number:
                notices.append(
                    f"Timeline {input_label(field)}: {shown} is outside the range; "
                    f"used {clamped:g}."
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


def _choice(name: str, values: dict) -> None:
    spec = TIMELINE_CHOICE_BY_NAME[name]
    choice_widget(spec, _WIDGET + name, values[name], _set, (name,))


def _number(name: str, values: dict) -> None:
    numeric_widget(TIMELINE_BY_NAME[name], _WIDGET + name, values[name], _set, (name,))


def draw(workload: Workload) -> dict:
    """Draw the inputs; returns their values (already in the URL)."""
    values = current_values(workload)
    left, middle, right = st.columns(3)
    with left:
        st.markdown(f"**Traffic** (base rate: the sidebar's {workload.rate_rps:,.0f} req/s)")
        _choice("traffic", values)
        kind = values["traffic"]
        if kind in ("step", "spike"):
            _number("factor", values)
            _number("at_s", values)
        if kind == "spike":
            _number("spike_s", values)
        if kind == "diurnal":
            _number("peak_to_trough", values)
        if kind == "uploaded":
            _upload(left)
        _number("duration_s", values)
        _number("step_s", values)
    with middle:
        st.markdown(f"**Autoscaler** (starts at the sidebar's {replicas_text(workload.replicas)})")
        _choice("scaler", values)
        _number("min_replicas", values)
        _number("max_replicas", values)
        for name in SCALER_KNOBS[values["scaler"]]:
            _number(name, values)
        _number("queue_limit", values)
    with right:
        st.markdown("**Cold start** = provisioning + size ÷ bandwidth")
        _number("provision_s", values)
        _number("model_gb", values)
        _number("load_gbps", values)
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
                **{knob: values[name] for name, knob in TIMELINE_KNOBS.items()},
            ),
            cold_start=ColdStart(values["provision_s"], values["model_gb"], values["load_gbps"]),
            duration_s=values["duration_s"],
            step_s=values["step_s"],
            queue_limit_requests=values["queue_limit"],
        )
    except ValueError as error:
        return None, f"These inputs cannot run: {state.plain_text(str(error))}."
    return inputs, None
