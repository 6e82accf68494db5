"""The canary rollout panel (Timeline page): steps, per-version p99, extra cost, time to detect.

Every number comes from ``sdlab_model.timeline.canary.plan_rollout``; the inputs are declared in
``sdlab_model.page_params`` (from that module's bounds) and drawn by ``sdlab_ui.widgets``. They
are deliberately wider than the model accepts where a person may type something meaningless (an
error rate of 100%, a negative regression): the model's validation message is shown and nothing
is drawn.
"""

from __future__ import annotations

import math
from dataclasses import astuple

import plotly.graph_objects as go
import streamlit as st

from sdlab_model.page_params import CANARY_BY_NAME
from sdlab_model.timeline import canary
from sdlab_model.timeline.canary import CanaryPlan, CanaryRollout, Detection, plan_rollout
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.server import budget, runs
from sdlab_ui.text import money, ms_text
from sdlab_ui.widgets import numeric_widget

_KEY = {Workload: astuple, CanaryPlan: astuple}
KEY_PREFIX = "canary."


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner="Planning the rollout…")
def cached_rollout(workload: Workload, plan: CanaryPlan) -> CanaryRollout:
    """``plan_rollout``, cached (up to a second of Python: the detection-time searches), one at
    a time with the other Python-bound work (``budget.PYTHON``)."""
    with budget.slot(budget.PYTHON):
        return plan_rollout(workload, plan)


STEPS_MAX_CHARS = 120
"""The Steps field's length limit: ``canary.MAX_STEPS`` shares of a few digits each fit with room
to spare. Longer text is refused before it is parsed (4.9 MB of it cost seconds of CPU)."""
EXCERPT_CHARS = 20
"""How much of a visitor's text a message repeats."""


def parse_steps(text: str) -> tuple[float, ...]:
    """'1, 5, 25, 100' (percent) as shares; a ValueError a person can read otherwise. A message
    repeats at most ``EXCERPT_CHARS`` of the text (unescaped: the page escapes messages)."""
    if len(text) > STEPS_MAX_CHARS:
        raise ValueError(
            f"Steps: at most {STEPS_MAX_CHARS} characters, got {len(text):,}; give at most "
            f"{canary.MAX_STEPS} shares, e.g. 1, 5, 25, 100."
        )
    parts = [part.strip().rstrip("%") for part in text.replace(";", ",").split(",")]
    parts = [part for part in parts if part]
    if not parts:
        raise ValueError("Steps: give at least one share, e.g. 1, 5, 25, 100.")
    if len(parts) > canary.MAX_STEPS:
        raise ValueError(f"Steps: at most {canary.MAX_STEPS} shares, got {len(parts)}.")
    shares = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"Steps: {part[:EXCERPT_CHARS]!r} is not a number.") from None
        if not math.isfinite(value):
            raise ValueError(f"Steps: {part[:EXCERPT_CHARS]!r} is not a share of traffic.")
        shares.append(value / 100.0)
    return tuple(shares)


def duration_text(seconds: float | None) -> str:
    """Seconds for a person: '0.43 s', '45.9 s', '14.3 min', '2.1 h'."""
    if seconds is None:
        return "—"
    if seconds < 1.0:
        return f"{seconds:.2g} s"
    if seconds < 120.0:
        return f"{seconds:.3g} s"
    if seconds < 7200.0:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


def detection_text(
    detection: Detection, interval_s: float = canary.METRIC_INTERVAL_S.default
) -> str:
    """The detection time as the table shows it, with whether the window is long enough; a time
    shorter than one metric interval reads "within one metric interval" (a judge sees no
    sooner)."""
    if detection.seconds is None:
        return f"— ({detection.note})"
    verdict = "within the window" if detection.within_window else "longer than the window"
    rough = "; few bad requests, rough" if detection.is_rough else ""
    if detection.seconds < interval_s:
        return (
            f"within one metric interval (≤ {duration_text(interval_s)}; the test needs "
            f"{duration_text(detection.seconds)}{rough})"
        )
    return f"{duration_text(detection.seconds)} ({verdict}{rough})"


def detection_metric_text(
    detection: Detection, interval_s: float = canary.METRIC_INTERVAL_S.default
) -> str:
    """The headline detection time: the test's time, or "≤ one interval" below one interval."""
    if detection.seconds is not None and detection.seconds < interval_s:
        return f"≤ {duration_text(interval_s)}"
    return duration_text(detection.seconds)


_PERCENT_INPUTS = (
    "shadow_pct",
    "baseline_error_pct",
    "regressed_error_pct",
    "p99_regression_pct",
    "confidence_pct",
    "power_pct",
)
"""The percent inputs, middle column then right, each set as a share of its ``source``."""


def _inputs() -> tuple[CanaryPlan | None, float]:
    """The plan from the widgets (None after showing why it is not valid) and the metric
    interval."""
    left, middle, right = st.columns(3)
    steps_text = left.text_input(
        "Steps (% of live traffic)",
        value=", ".join(f"{share * 100:g}" for share in canary.DEFAULT_STEP_SHARES),
        key=KEY_PREFIX + "steps",
        max_chars=STEPS_MAX_CHARS,
        help="Each step's share of the live requests the new version gets, in order.",
    )
    with left:
        window_min, interval_s = _number("window_min"), _number("interval_s")
    placement = left.radio(
        "The new version runs on",
        ("own", "shared"),
        format_func={"own": "its own replicas", "shared": "the same replicas (shared)"}.get,
        key=KEY_PREFIX + "placement",
        horizontal=True,
    )
    with middle:
        shares = {name: _number(name) / 100.0 for name in _PERCENT_INPUTS[:3]}
    with right:
        shares |= {name: _number(name) / 100.0 for name in _PERCENT_INPUTS[3:]}
    try:
        plan = CanaryPlan(
            step_shares=parse_steps(steps_text),
            window_s=window_min * 60.0,
            placement=placement,
            **{CANARY_BY_NAME[name].source: share for name, share in shares.items()},
        )
    except ValueError as error:
        # Escaped: the message can quote the Steps text, and st.error renders Markdown.
        message = state.plain_text(str(error))
        st.error(f"The rollout cannot be planned: {message}", icon=":material/error:")
        return None, interval_s
    return plan, interval_s


def _number(name: str) -> float:
    """One declared canary input's value, its widget keeping its own state from the default."""
    return float(numeric_widget(CANARY_BY_NAME[name], KEY_PREFIX + name))


def rollout_table(
    rollout: CanaryRollout, interval_s: float = canary.METRIC_INTERVAL_S.default
) -> list[dict[str, str]]:
    """One row per step, as the panel shows it (the AppTest compares it with the model)."""
    rows = []
    for step in rollout.steps:
        baseline = step.baseline_latency
        rows.append(
            {
                "share": f"{step.share * 100:g}%",
                "starts": duration_text(step.start_s) if step.start_s else "0",
                "new version req/s (live + shadow)": (
                    f"{step.canary_live_rps:,.4g} + {step.shadow_rps:,.4g}"
                ),
                "replicas (new / old)": f"{step.canary_replicas} / {step.baseline_replicas}",
                "p99 new": ms_text(step.canary_latency.p99_ms),
                "p99 old": "no traffic" if baseline is None else ms_text(baseline.p99_ms),
                "extra replicas": str(step.extra_replicas),
                "extra $/h": money(step.extra_usd_per_hour),
                "detect error-rate rise": detection_text(step.error_detection, interval_s),
                "detect p99 regression": detection_text(step.latency_detection, interval_s),
            }
        )
    return rows


def rollout_chart(
    rollout: CanaryRollout, interval_s: float = canary.METRIC_INTERVAL_S.default
) -> go.Figure:
    """Share of live traffic over time (hours), with each test's detection marked where a judge
    can first see it: the first metric point at or after the test's time."""
    times_h, shares = [], []
    for step in rollout.steps:
        times_h += [step.start_s / 3600, step.end_s / 3600]
        shares += [step.share * 100, step.share * 100]
    figure = go.Figure(
        go.Scatter(x=times_h, y=shares, mode="lines", name="new version's share", line_shape="hv")
    )
    for label, symbol, pick in (
        ("error-rate rise detected", "x", lambda step: step.error_detection),
        ("p99 regression detected", "diamond", lambda step: step.latency_detection),
    ):
        xs, ys, texts = [], [], []
        for step in rollout.steps:
            detection = pick(step)
            if detection.seconds is not None and detection.within_window:
                seen = canary.first_metric_point_s(detection.seconds, interval_s)
                xs.append((step.start_s + seen) / 3600)
                ys.append(step.share * 100)
                texts.append(f"{label}: {detection_text(detection, interval_s)}")
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name=label,
                marker={"symbol": symbol, "size": 11},
                hovertext=texts,
                hoverinfo="text",
            )
        )
    figure.update_layout(
        xaxis_title="time since the rollout began (h)",
        yaxis_title="share of live traffic (%)",
        yaxis_type="log",
        yaxis_tickformat="~g",
        height=320,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend={"orientation": "h", "y": 1.12},
    )
    return figure


@runs.fragment
def render(workload: Workload) -> None:
    """The canary section: inputs, the share over time, per-step numbers and what they rest on."""
    st.subheader("Canary rollout: who serves what, and how soon a regression shows")
    plan, interval_s = _inputs()
    if plan is None:
        return
    rollout = cached_rollout(workload, plan)
    first = rollout.steps[0]
    columns = st.columns(3)
    columns[0].metric("Rollout length", duration_text(rollout.duration_s))
    columns[1].metric("Extra cost over the rollout", money(rollout.extra_usd))
    columns[2].metric(
        f"Error-rate rise detected at {first.share * 100:g}%",
        detection_metric_text(first.error_detection, interval_s),
    )
    st.plotly_chart(rollout_chart(rollout, interval_s), key=KEY_PREFIX + "chart")
    st.dataframe(
        rollout_table(rollout, interval_s),
        hide_index=True,
        height="content",
        key=KEY_PREFIX + "table",
    )
    st.caption(
        f"Time to detect: the shortest analysis window after which a {canary.TEST_DESCRIPTION} "
        f"flags the regression ({plan.baseline_error_rate:.3%} → "
        f"{plan.regressed_error_rate:.3%} errors; p99 +{plan.p99_regression:.0%}, the slowest "
        f"5% of requests stretched) at {plan.confidence:.1%} confidence with {plan.power:.0%} "
        "power, summed over Poisson request counts and checked against a Monte Carlo of the test "
        "(scripts/canary_check.py). Kayenta's default judge compares metric time series with a "
        f"Mann–Whitney U test at {canary.KAYENTA_CONFIDENCE:.0%} confidence. The 100% step has "
        "no baseline left to compare with. Per-version p99 from the queueing model at the load "
        "each version carries; own replicas are sized to the new version's share (Argo "
        "Rollouts' default), the old version stays at full size until 100%."
    )
    st.caption(
        f"A judge sees a metric point every {duration_text(interval_s)} (the metric interval; "
        "Prometheus scrapes every 60 s by default, 15 s in its example configuration, and "
        "10–60 s is usual): a time shorter than that reads “within one metric interval”, and "
        "the chart marks each detection at the first point at or after the test's time."
    )
    notes = {note for step in rollout.steps for note in step.notes}
    for note in sorted(notes):
        st.caption(note)
