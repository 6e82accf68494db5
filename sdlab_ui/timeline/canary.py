"""The canary rollout panel (Timeline page): steps, per-version p99, extra cost, and what each
canary judge does with each step.

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
from sdlab_model.timeline.canary import (
    ERROR_RATE,
    P99_EVERY_REQUEST,
    CanaryPlan,
    CanaryRollout,
    CanaryStep,
    plan_rollout,
)
from sdlab_model.timeline.canary_judges import SEQUENTIAL, JudgeOutcome, judge_descriptions
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.server import budget, runs
from sdlab_ui.text import money, ms_text, rate_number
from sdlab_ui.widgets import numeric_widget

_KEY = {Workload: astuple, CanaryPlan: astuple}
KEY_PREFIX = "canary."


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner="Planning the rollout…")
def cached_rollout(workload: Workload, plan: CanaryPlan) -> CanaryRollout:
    """``plan_rollout``, cached (~0.1 s of Python, a second or two for ten week-long steps looked
    at every second: the judges' recursions), one at a time with the other Python-bound work
    (``budget.PYTHON``)."""
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


NOT_WITHIN = "not within this step"
NEVER_SHARE = 0.005
"""Below this share of regressed canaries flagged, a judge "never" flags it (no mean time)."""


def regression_text(plan: CanaryPlan, metric: str) -> str:
    """A regression as the tables name it: 'errors 0.1% → 0.2%', 'p99 +20%, slowest 2%'."""
    if metric == ERROR_RATE:
        return (
            f"errors {plan.baseline_error_rate * 100:.3g}% → {plan.regressed_error_rate * 100:.3g}%"
        )
    where = (
        "every request" if metric == P99_EVERY_REQUEST else f"slowest {plan.tail_share * 100:.3g}%"
    )
    return f"p99 +{plan.p99_regression * 100:.3g}%, {where}"


def _percent(share: float) -> str:
    if share < 0.001:
        return "< 0.1%" if share > 0 else "0%"
    if share > 0.999:
        return "> 99.9%" if share < 1 else "100%"
    return f"{share:.1%}"


ROUGH_MARK = "≈ "


def outcome_row(plan: CanaryPlan, metric: str, outcome: JudgeOutcome) -> dict[str, str]:
    """One judge on one regression: a row of a step's table (``ROUGH_MARK`` before figures that
    few bad requests make rough)."""
    never = outcome.detected < NEVER_SHARE
    mark = ROUGH_MARK if outcome.rough else ""
    mean = "never" if never else mark + duration_text(outcome.mean_s)
    return {
        "regression": regression_text(plan, metric),
        "judge": outcome.judge,
        "false alarms": mark + _percent(outcome.false_alarm),
        "flagged within the step": mark + _percent(outcome.detected),
        "mean time to flag": mean,
        "90% flagged by": NOT_WITHIN
        if outcome.p90_s is None
        else mark + duration_text(outcome.p90_s),
    }


def step_table(plan: CanaryPlan, step: CanaryStep) -> list[dict[str, str]]:
    """A step's table: every judge on every regression (the AppTest compares it with the model)."""
    return [
        outcome_row(plan, verdicts.streams.metric, outcome)
        for verdicts in step.verdicts
        for outcome in verdicts.outcomes
    ]


def rollout_table(rollout: CanaryRollout) -> list[dict[str, str]]:
    """One row per step: who serves what, the p99s and what the rollout adds."""
    rows = []
    for step in rollout.steps:
        baseline = step.baseline_latency
        rows.append(
            {
                "step": f"{step.share * 100:g}%",
                "starts": duration_text(step.start_s) if step.start_s else "0",
                "new version req/s (live + shadow)": (
                    f"{rate_number(step.canary_live_rps)} + {rate_number(step.shadow_rps)}"
                ),
                "baseline req/s": rate_number(step.baseline_rps) if baseline else "none",
                "replicas (new / old)": f"{step.canary_replicas} / {step.baseline_replicas}",
                "p99 new": ms_text(step.canary_latency.p99_ms),
                "p99 baseline": "none" if baseline is None else ms_text(baseline.p99_ms),
                "extra replicas": str(step.extra_replicas),
                "extra $/h": money(step.extra_usd_per_hour),
            }
        )
    return rows


SHARE_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100)
"""Log-axis ticks of the share chart, each labelled with its own value and a % sign."""


def rollout_chart(rollout: CanaryRollout) -> go.Figure:
    """Share of live traffic over time, with the sequential judge's mean time to flag each
    regression marked in the steps where it flags most regressed canaries."""
    times_min, shares = [], []
    for step in rollout.steps:
        times_min += [step.start_s / 60, step.end_s / 60]
        shares += [step.share * 100, step.share * 100]
    figure = go.Figure(
        go.Scatter(x=times_min, y=shares, mode="lines", name="new version's share", line_shape="hv")
    )
    for index, symbol in enumerate(("x", "diamond", "circle-open")):
        xs, ys, texts = [], [], []
        for step in rollout.steps:
            if index >= len(step.verdicts) or step.verdicts[index].sequential is None:
                continue
            verdicts = step.verdicts[index]
            outcome = verdicts.sequential
            if outcome.detected >= 0.5:
                xs.append((step.start_s + outcome.mean_s) / 60)
                ys.append(step.share * 100)
                texts.append(f"{duration_text(outcome.mean_s)} into the step")
            label = regression_text(rollout.plan, verdicts.streams.metric)
        if xs:
            figure.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="markers",
                    name=f"{SEQUENTIAL} flags {label} (mean)",
                    marker={"symbol": symbol, "size": 11},
                    hovertext=texts,
                    hoverinfo="text+name",
                )
            )
    shown = [t for t in SHARE_TICKS if min(shares) / 2 <= t <= 100]
    figure.update_layout(
        xaxis_title="time since the rollout began (min)",
        yaxis_title="new version's share of live traffic",
        yaxis={"type": "log", "tickvals": shown, "ticktext": [f"{t:g}%" for t in shown]},
        height=340,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 86, "r": 24, "t": 54, "b": 68},
        legend={"orientation": "h", "y": 1.18},
    )
    return figure


_PERCENT_INPUTS = (
    "shadow_pct",
    "baseline_error_pct",
    "regressed_error_pct",
    "p99_regression_pct",
    "tail_share_pct",
    "false_alarm_pct",
)
"""The percent inputs, middle column then right, each set as a share of its ``source``."""


def _inputs() -> CanaryPlan | None:
    """The plan from the widgets; None after showing why it is not valid."""
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
    baseline = middle.radio(
        "It is compared with",
        ("live", "same-size"),
        format_func={
            "live": "the rest of live traffic",
            "same-size": "a baseline of its size (Spinnaker's advice)",
        }.get,
        key=KEY_PREFIX + "baseline",
    )
    with middle:
        shares = {name: _number(name) / 100.0 for name in _PERCENT_INPUTS[:3]}
    with right:
        shares |= {name: _number(name) / 100.0 for name in _PERCENT_INPUTS[3:]}
    try:
        return CanaryPlan(
            step_shares=parse_steps(steps_text),
            window_s=window_min * 60.0,
            interval_s=interval_s,
            placement=placement,
            baseline=baseline,
            **{CANARY_BY_NAME[name].source: share for name, share in shares.items()},
        )
    except ValueError as error:
        # Escaped: the message can quote the Steps text, and st.error renders Markdown.
        message = state.plain_text(str(error))
        st.error(f"The rollout cannot be planned: {message}", icon=":material/error:")
        return None


def _number(name: str) -> float:
    """One declared canary input's value, its widget keeping its own state from the default."""
    return float(numeric_widget(CANARY_BY_NAME[name], KEY_PREFIX + name))


def first_step_metric(rollout: CanaryRollout) -> tuple[str, str]:
    """The headline: when the sequential judge flags the error rise at the first step."""
    first = rollout.steps[0]
    outcome = first.verdicts[0].sequential
    label = f"Sequential judge, {regression_text(rollout.plan, ERROR_RATE)} at {first.share:.0%}"
    if outcome is None:
        return label, "no baseline"
    if outcome.p90_s is None:
        return label, NOT_WITHIN
    return label, f"90% by {duration_text(outcome.p90_s)}"


def _step_tables(rollout: CanaryRollout) -> None:
    """One tab per step, each with its table of judges."""
    steps = rollout.steps
    tabs = st.tabs([f"Step {i + 1}: {step.share * 100:g}%" for i, step in enumerate(steps)])
    for index, (tab, step) in enumerate(zip(tabs, steps, strict=True)):
        with tab:
            st.dataframe(
                step_table(rollout.plan, step),
                hide_index=True,
                height="content",
                key=f"{KEY_PREFIX}judges.{index}",
            )
            if any(o.rough for v in step.verdicts for o in v.outcomes):
                st.caption(
                    f"At {step.share * 100:g}%: {ROUGH_MARK.strip()} marks figures that rest on "
                    "an approximation few bad requests loosen: within a point or two, not one "
                    "(docs/canary.md)."
                )
            for note in step.notes:
                st.caption(f"At {step.share * 100:g}%: {note}")
            if step.verdicts[0].sequential is None:
                st.caption(
                    f"At {step.share * 100:g}%: no baseline to compare with, so only the "
                    "threshold judges, which look at the new version alone, judge this step."
                )


@runs.fragment
def render(workload: Workload) -> None:
    """The canary section: inputs, the share over time, the rollout, and one table per step."""
    st.subheader("Canary rollout: who serves what, and how soon each judge flags a regression")
    plan = _inputs()
    if plan is None:
        return
    rollout = cached_rollout(workload, plan)
    columns = st.columns(3)
    columns[0].metric("Rollout length", duration_text(rollout.duration_s))
    columns[1].metric("Extra cost over the rollout", money(rollout.extra_usd))
    columns[2].metric(*first_step_metric(rollout))
    st.plotly_chart(rollout_chart(rollout), key=KEY_PREFIX + "chart")
    st.dataframe(
        rollout_table(rollout), hide_index=True, height="content", key=KEY_PREFIX + "table"
    )
    st.markdown(
        f"**What each judge does in each step** ({duration_text(plan.window_s)} a step, a look "
        f"every {duration_text(plan.interval_s)}). *False alarms*: the chance a new version with "
        "no regression is flagged during the step. *Flagged*: the chance a regressed one is "
        "flagged within the step; the mean time is over those flagged. Times are from the start "
        "of the step."
    )
    _step_tables(rollout)
    with st.expander("How each judge works, and what the figures rest on"):
        descriptions = judge_descriptions(plan.false_alarm)
        st.markdown("\n".join(f"- **{name}**: {text}." for name, text in descriptions.items()))
        st.caption(
            f"The threshold judges' p99 limit is {ms_text(rollout.p99_limit_ms)}, the fleet's p99 "
            "before the rollout +10%. Per-version p99 from the queueing model at the load each "
            "version carries; own replicas are sized to the new version's share (Argo Rollouts' "
            "default). docs/canary.md has the sources and the Monte Carlo check."
        )
