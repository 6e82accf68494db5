"""The Timeline page's controls: the widgets of its input fields (``fields.py``) and the
``TimelineInputs`` they build, kept in the URL as ``tl.*``.

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
from sdlab_ui.timeline.fields import CHOICES, FIELD_BY_NAME, FIELDS, KNOBS, SCALER_KNOBS, Field

PREFIX = "tl"
_VALUES_KEY = "timeline.values"
_LOADED_AT_KEY = "timeline.loaded_at"
_TRACE_KEY = "timeline.trace"
_WIDGET = "timeline.widget."
UPLOAD_KEY = "timeline.upload"


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


def draw(workload: Workload) -> dict:
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
