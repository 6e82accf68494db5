"""The Timeline page's sections: the charts over time, the totals, the autoscaled fleet against a
fixed one sized for the peak, and the simulator check (the inputs are ``controls.py``'s).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from sdlab_model.timeline import (
    TimelineInputs,
    TimelineResult,
    run_fixed_for_peak,
    run_timeline,
)
from sdlab_model.timeline.autoscalers import (
    AUTOSCALER_LABELS,
    HPA_CPU_INITIALIZATION_PERIOD_S,
    MAX_REPLICAS,
)
from sdlab_model.timeline.hpa_phases import HpaBand, hpa_band
from sdlab_model.timeline.model import (
    hpa_metric_delay_s,
    hpa_scale_up_gaps_s,
    replicas_at_target,
)
from sdlab_ui.cache import shared_cache
from sdlab_ui.figures import TARGET_COLOUR, log_axis_ticks
from sdlab_ui.server import budget, runs, worker
from sdlab_ui.text import money, ms_text, replicas_text

MAX_CHART_POINTS = 1_500
"""Points per line: a day at 1 s is 86,400 steps, drawn as at most this many buckets."""
CHECK_KEY = "timeline.check"


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
    figure.update_yaxes(type="log", **log_axis_ticks([*p99, target]), row=3, col=1)
    figure.update_xaxes(title_text="time (min)", row=4, col=1)
    figure.update_layout(
        height=820,
        # Room for what is drawn around the plot: where plotly must widen a margin, it draws twice.
        margin={"l": 45, "r": 10, "t": 40, "b": 94},
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
            f"The fleet stayed at {replicas_text(int(result.ready_replicas[0]))} "
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
    window = scaler.hpa_metric_window_s
    delay = hpa_metric_delay_s(inputs.cold_start, window)
    peak = inputs.traffic.peak_rate_rps(inputs.duration_s)
    settled = replicas_at_target(inputs, peak)
    low, high = hpa_scale_up_gaps_s(inputs)
    apart = f"{low:.0f} s" if low == high else f"{low:.0f}–{high:.0f} s"
    if delay > 0:
        metric = (
            f"The HPA uses a new pod's CPU only {delay:.0f} s after it turns ready (in its "
            f"first {HPA_CPU_INITIALIZATION_PERIOD_S / 60:.0f} minutes a pod's metric counts "
            f"once a whole {window:g} s metric window follows its readiness; "
            "until then it counts as 0% on a scale-up)"
        )
    else:
        metric = (
            "The HPA uses a new pod's CPU as soon as it is ready (its model load outlasts the "
            f"{HPA_CPU_INITIALIZATION_PERIOD_S / 60:.0f}-minute CPU initialization period)"
        )
    metric += (
        f", and then at the first sync after metrics-server's next scrape (every {window:g} s): "
        f"it sees the pods it adds {apart} after deciding them, not {cold:.0f} s, and the steps "
        "of its ramp come that far apart."
    )
    return (
        f"{story} {metric} While a backlog is left every replica reports 100% busy, so each "
        f"sync asks ceil(n ÷ {scaler.hpa_target_utilization:.0%}); at the peak's {peak:,.0f} "
        f"req/s without a backlog the fleet would settle at {replicas_text(settled)}."
    )


@st.cache_data(max_entries=16, show_spinner=False, hash_funcs={TimelineInputs: repr})
def _cached_band(inputs: TimelineInputs) -> HpaBand:
    with budget.slot(budget.WORK):
        return hpa_band(inputs)


def hpa_band_caption(inputs: TimelineInputs) -> str | None:
    """The HPA's scale-ups over a grid of sync and metrics-scrape phases (the model's
    ``hpa_band``), against the aligned run the chart shows; None for other autoscalers or
    when some pairing never scales up."""
    if inputs.autoscaler.kind != "hpa":
        return None
    band = _cached_band(inputs)
    if not band.times_s:
        return None
    first, size = band.times_s[0], band.totals[0]
    period, window = inputs.autoscaler.hpa_sync_period_s, inputs.autoscaler.hpa_metric_window_s
    text = (
        f"Over {len(band.runs)} pairings of the HPA's {period:g} s sync with metrics-server's "
        f"scrapes every {window:g} s (its metric window), the first scale-up "
        f"comes at {first.low:.0f}–{first.high:.0f} s (most often {first.common:.0f} s), to "
        f"{size.low:.0f}{f'–{size.high:.0f}' if size.high > size.low else ''} replicas"
    )
    if len(band.times_s) > 1:
        gaps = band.gaps_s
        text += (
            f"; scale-ups come {gaps.low:.0f}–{gaps.high:.0f} s apart, most often "
            f"{gaps.common:.0f} s"
        )
    best = band.best
    shown = (
        f"the pairing with both at phase 0 (syncs at {period:g} s, {2 * period:g} s, … and "
        f"scrapes at {window:g} s, {2 * window:g} s, …)"
    )
    if best.sync_phase_s == 0 and best.scrape_phase_s == 0:
        verdict = "the best case of them (it asks for the most replica-seconds)"
    else:
        ladder = ", ".join(f"{n} at {t:.0f} s" for t, n in best.scale_ups(len(band.times_s)))
        verdict = (
            f"the best case is sync phase {best.sync_phase_s:g} s, scrape phase "
            f"{best.scrape_phase_s:g} s (the most replica-seconds asked for): {ladder}"
        )
    return f"{text}. The decisions above are {shown}; {verdict}."


@shared_cache(maxsize=8)
def _cached_check(inputs: TimelineInputs, seed: int):
    """The simulator check of ``inputs``' autoscaled timeline, kept outside Streamlit's caches:
    any visitor's ``clear_cache`` message empties those, and this is the page's costliest result.

    In the simulation worker (``server/worker.py``), a chunk at a time, the heavy lane's turns
    taken between chunks: its memory (a chunk's arrays and 8 bytes a simulated request, ~70 MB
    at most) is the worker's, given back when the worker exits, and its compiled loops run at
    the worker's lower priority."""
    from sdlab_model.timeline import check

    result = _cached_run(inputs, False)
    with budget.slot(budget.HEAVY):
        return worker.run_steps(
            check.timeline_check_steps,
            result,
            seed,
            max_requests=check.MAX_SIMULATED_REQUESTS,  # the page's span, read here
            between=lambda progress: budget.take_turns(progress[0] / progress[1]),
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


@runs.fragment
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
    try:
        check = _cached_check(inputs, 0)
    except worker.WorkerStopped:
        bar.empty()
        st.warning(worker.STOPPED_TEXT)
        return
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
    figure.update_yaxes(
        type="log",
        **log_axis_ticks([*check.model_p99_ms, *check.simulated_p99_ms]),
        title_text="p99 per minute (ms)",
    )
    figure.update_xaxes(title_text="time (min)")
    figure.update_layout(height=320, margin={"l": 10, "r": 10, "t": 10, "b": 10}, template="none")
    st.plotly_chart(figure, key="timeline.check_chart")
