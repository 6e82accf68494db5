"""The Overload page's brief overload: a burst of fresh load simulated through one replica for
"retries, no budget", "retries, budget" and the page's own settings; attempts and goodput per
second over time with the burst marked, and which came back after it and when.

The runs are ``simulate_burst``'s, on request, in the simulation worker under the heavy lane, a
variant at a time with turns between; each fills at most ``MAX_BURST_ATTEMPTS`` attempt slots
(a run that would take more is shortened in proportion, and says so), and they are cached on
the design, the policy and the burst. The section's inputs are ``BURST_INPUTS``, in the URL as
``burst.*``. Every number shown is a field of the runs' ``BurstRun.recovery``.
"""

from __future__ import annotations

from dataclasses import astuple

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from sdlab_model.overload import BurstRun, OverloadPolicy, Station, simulate_burst
from sdlab_model.overload.goodput import variants
from sdlab_model.overload.storm import (
    MAX_BURST_ATTEMPTS,
    RECOVERY_TOLERANCE,
    Burst,
    Recovery,
    fit_burst,
)
from sdlab_model.page_params import BURST_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui.figures import FONT, TEMPLATE
from sdlab_ui.overload.figures import COLOURS
from sdlab_ui.page_inputs import PageInputs, parse_numbers
from sdlab_ui.server import budget, runs, worker
from sdlab_ui.text import rate_text

KEY = "overload.burst"
SIMULATE_KEY = KEY + ".simulate"
CHART_KEY = KEY + ".chart"
SEED = 0
RETRY_VARIANTS = ("retries, no budget", "retries, budget")
OWN = "your settings"
_COLOURS = {**COLOURS, OWN: "black"}
_PAGE = "Overload"
_KEY = {Workload: astuple, OverloadPolicy: astuple, Burst: astuple}


def _parse(given: dict[str, str]) -> tuple[dict, list[str]]:
    """Section values from URL text (missing: defaults); unreadable or out of range: defaults,
    with a notice. Never raises."""
    return parse_numbers(given, BURST_BY_NAME, _PAGE, "burst.")


INPUTS = PageInputs("burst", _parse)


def burst_inputs() -> Burst:
    """The burst's inputs in one row; the ``Burst`` they make (each input is a field)."""
    INPUTS.show_notices()
    values = INPUTS.number_row(BURST_BY_NAME)
    return Burst(**{name: float(value) for name, value in values.items()})


def burst_policies(workload: Workload, policy: OverloadPolicy) -> dict[str, OverloadPolicy]:
    """The goodput chart's two retry variants (``goodput.variants``) and the page's settings."""
    chosen = variants(workload, policy)
    return {**{name: chosen[name] for name in RETRY_VARIANTS}, OWN: policy}


@st.cache_data(max_entries=8, hash_funcs=_KEY, show_spinner="Simulating the burst…")
def cached_runs(
    workload: Workload, policy: OverloadPolicy, burst: Burst
) -> tuple[float, dict[str, BurstRun]]:
    """The shortening factor and each variant's run, in the simulation worker (heavy lane)."""
    policies = burst_policies(workload, policy)
    factor = fit_burst(workload, tuple(policies.values()), burst)
    results = {}
    with budget.slot(budget.HEAVY):
        for done, (name, each) in enumerate(policies.items()):
            budget.take_turns(done / len(policies))
            results[name] = worker.call(
                simulate_burst, workload, each, seed=SEED, **burst.run_arguments(factor)
            )
    return factor, results


def burst_figure(results: dict[str, BurstRun], capacity_rps: float) -> go.Figure:
    """Attempts per second (top) and goodput per second (bottom) over time, per variant; the
    burst shaded, capacity a grey line."""
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=("Attempts per second", "Goodput (served within the target) per second"),
    )
    for name, run in results.items():
        window = run.window_start_s[1] - run.window_start_s[0]
        x = [start + window / 2 for start in run.window_start_s]
        style = {"color": _COLOURS[name], "width": 2}
        if name == OWN:
            style["dash"] = "dot"
        for row, series in ((1, run.attempts), (2, run.goodput)):
            figure.add_trace(
                go.Scatter(
                    x=x,
                    y=[value * capacity_rps for value in series],
                    mode="lines",
                    name=name,
                    legendgroup=name,
                    showlegend=row == 1,
                    line=style,
                    hovertemplate="%{x:.1f} s: %{y:,.0f} req/s<extra>" + name + "</extra>",
                ),
                row=row,
                col=1,
            )
    first = next(iter(results.values()))
    for row in (1, 2):
        figure.add_vrect(
            x0=first.burst_from_s,
            x1=first.burst_to_s,
            fillcolor="orange",
            opacity=0.2,
            line_width=0,
            row=row,
            col=1,
        )
        figure.add_hline(y=capacity_rps, line={"color": "grey", "width": 1}, row=row, col=1)
    figure.update_xaxes(title_text="time (s); the burst shaded", row=2, col=1)
    figure.update_yaxes(title_text="req/s")
    figure.update_layout(
        template=TEMPLATE,
        font=FONT,
        height=520,
        legend={"orientation": "h", "y": -0.15},
        margin={"t": 40},
    )
    return figure


def recovery_sentence(name: str, recovery: Recovery, capacity_rps: float) -> str:
    """Whether ``name`` came back after the burst, and when, in the run's own numbers."""
    before = (
        f"{rate_text(recovery.before_attempts * capacity_rps)} attempts and "
        f"{rate_text(recovery.before_goodput * capacity_rps)} goodput before the burst"
    )
    end = (
        f"{rate_text(recovery.end_attempts * capacity_rps)} attempts and "
        f"{rate_text(recovery.end_goodput * capacity_rps)} goodput"
    )
    retrying = recovery.attempts_per_request_before > 1.0 + RECOVERY_TOLERANCE
    if retrying:
        opening = (
            f"**{name}** was retrying before the burst already "
            f"({recovery.attempts_per_request_before:.2f} attempts per request: {before})"
        )
        if recovery.recovered_after_s is None:
            return f"{opening}, and did not return to that: it ended at {end}."
        return (
            f"{opening}, and was back to that within {recovery.recovered_after_s:.3g} s of "
            f"the burst's end ({end} at the end)."
        )
    if recovery.recovered_after_s is None:
        return f"**{name}** did not come back: it ended at {end}, against {before}."
    return (
        f"**{name}** came back within {recovery.recovered_after_s:.3g} s of the burst's end "
        f"({end} at the end; {before})."
    )


def _asked(key: tuple) -> bool:
    if st.button("Simulate the burst", key=SIMULATE_KEY):
        st.session_state[SIMULATE_KEY + ".for"] = key
    return st.session_state.get(SIMULATE_KEY + ".for") == key


@runs.fragment
def simulation(workload: Workload, policy: OverloadPolicy, burst: Burst) -> None:
    """On request: the runs' chart and what each did after the burst."""
    if not _asked((astuple(workload), astuple(policy), astuple(burst))):
        st.caption(
            "Simulates one replica event by event (the same arrivals for every variant) "
            f"through the burst, at most {MAX_BURST_ATTEMPTS:,} attempt slots a run, and "
            "draws attempts and goodput per second for the retry variants of the chart "
            "above and your settings."
        )
        return
    try:
        factor, results = cached_runs(workload, policy, burst)
    except worker.WorkerStopped:
        st.warning(worker.STOPPED_TEXT)
        return
    capacity = Station.of(workload).capacity_rps
    st.plotly_chart(burst_figure(results, capacity), key=CHART_KEY)
    for name, run in results.items():
        st.markdown(recovery_sentence(name, run.recovery(), capacity))
    if factor < 1.0:
        st.caption(
            f"A run at this design's rate would fill more than {MAX_BURST_ATTEMPTS:,} attempt "
            f"slots: every span is shortened to {factor:.2g} of its length (the burst lasts "
            f"{burst.burst_s * factor:.3g} s)."
        )
    st.caption(
        f"Back: attempts within {RECOVERY_TOLERANCE:.0%} above and goodput within "
        f"{RECOVERY_TOLERANCE:.0%} below their level before the burst, by the end of the run "
        "and from the window named. One replica simulated; "
        "rates are the whole design's (every replica alike)."
    )


def render_burst(workload: Workload, policy: OverloadPolicy) -> None:
    """The section: the burst's inputs, then its simulation on request."""
    st.markdown("#### A brief overload: the retry storm")
    st.caption(
        "Fresh load at the base, then a burst, then the base again: a retry storm keeps the "
        "attempts high after the burst is gone; a retry budget caps them."
    )
    simulation(workload, policy, burst_inputs())
