"""The Overload page's headline, chart and table: ``overload`` at the design's rate and
``goodput_curve`` over 0.25x to 3x capacity, drawn. Every number is a field of their results.

Both are cached on the design's and the policy's values (a curve is ~70 fixed points, a
fraction of a second), so a rerun that changes nothing computes nothing.
"""

from __future__ import annotations

import math
from dataclasses import astuple

import pandas as pd
import streamlit as st

from sdlab_model.overload import (
    GoodputCurve,
    OverloadPolicy,
    OverloadResult,
    Station,
    goodput_curve,
)
from sdlab_model.overload import overload as overload_at
from sdlab_model.overload.goodput import VARIANTS
from sdlab_model.workload import Workload
from sdlab_ui.overload.figures import CURRENT, goodput_figure
from sdlab_ui.server import budget
from sdlab_ui.text import ms_text, rate_text

HEADLINE_KEY = "overload-headline"
CHART_KEY = "overload.chart"
_KEY = {Workload: astuple, OverloadPolicy: astuple}


@st.cache_data(max_entries=64, hash_funcs=_KEY, show_spinner=False)
def cached_result(workload: Workload, policy: OverloadPolicy) -> OverloadResult:
    """``overload`` at the design's own rate."""
    return overload_at(workload, policy)


@st.cache_data(max_entries=32, hash_funcs=_KEY, show_spinner="Computing the goodput curve…")
def cached_curve(workload: Workload, policy: OverloadPolicy) -> GoodputCurve:
    """``goodput_curve``: every variant at 0.25x to 3x capacity."""
    with budget.slot(budget.WORK):
        return goodput_curve(workload, policy)


def share_text(share: float) -> str:
    """A share as shown: '0.12%', '33.3%'."""
    return f"{share:.2%}" if share < 0.01 else f"{share:.1%}"


def headline(result: OverloadResult) -> None:
    """What the design does at its own rate under the chosen policy."""
    with st.container(key=HEADLINE_KEY):  # two rows of three: each value fits its column
        load, p99, good = st.columns(3)
        load.metric(
            "Offered load (× capacity)",
            f"{result.offered_multiple:.2f}×",
            help=f"{rate_text(result.fresh_rps)} fresh against {rate_text(result.capacity_rps)}"
            f"; {result.amplification:.2f} attempts per request with retries.",
        )
        p99.metric("Served p99", ms_text(result.served_p99_ms))
        good.metric("Goodput", rate_text(result.goodput_rps), help="Served within the target.")
        rejected, timed_out, late = st.columns(3)
        rejected.metric("Rejected", share_text(result.rejected_share), help="Of attempts.")
        timed_out.metric(
            "Timed out",
            share_text(result.timed_out_share),
            help="Of attempts: dropped from the queue at the deadline.",
        )
        late.metric(
            "Late",
            share_text(result.late_share),
            help="Of attempts: served after the client had gone (past the deadline).",
        )
    if not result.is_stable:
        st.error(
            "Unstable (∞): with neither a queue limit nor a deadline, at or past capacity the "
            "queue grows without bound and nothing is served within the target.",
            icon=":material/error:",
        )
    if result.storm_attempt_rps is not None:
        st.warning(
            f"Retry storm: the attempts can also settle at {rate_text(result.storm_attempt_rps)} "
            f"({result.storm_attempt_rps / result.capacity_rps:.2f}× capacity) once a burst has "
            "pushed them there, and stay there after it. A retry budget prevents it.",
            icon=":material/warning:",
        )
    notes = [n for n in (result.approximate_because, result.flagged_because) if n]
    if notes:
        st.caption("Approximate: " + "; ".join(notes) + ".")


def lab_p99_note(result: OverloadResult, judged_p99_ms: float) -> None:
    """Where this page's queue model and the Lab's judgement of the design part by more than 5%,
    say so: the Lab, Advice and Models and memory show the judgement."""
    served = result.served_p99_ms
    if math.isfinite(served) and math.isfinite(judged_p99_ms):
        apart = abs(served / judged_p99_ms - 1.0) > 0.05
    else:
        apart = math.isfinite(served) != math.isfinite(judged_p99_ms)
    if apart:
        st.caption(
            f"Without shedding or retries the Lab judges this design's p99 at "
            f"{ms_text(judged_p99_ms)} (as the Lab, Advice and Models and memory show). This "
            f"page's per-replica queue (Poisson arrivals at each replica, a batch slot seen as "
            f"servers) gives {ms_text(served)} for what is served under these settings."
        )


def deadline_check(workload: Workload, policy: OverloadPolicy) -> None:
    """Say so where the deadline leaves no time to serve: every answer would be late."""
    service_ms = Station.of(workload).service_ms
    if policy.deadline_ms is not None and policy.deadline_ms < service_ms:
        st.warning(
            f"The deadline ({ms_text(policy.deadline_ms)}) is shorter than one request's "
            f"service ({ms_text(service_ms)}): every answer ends after it, so nothing counts "
            "as goodput. Set it above the service time, or to 0 for none.",
            icon=":material/warning:",
        )


def chart(curve: GoodputCurve, current_rps: float) -> None:
    """The goodput chart, and why it is flat at zero past capacity where it is."""
    st.plotly_chart(goodput_figure(curve, current_rps), key=CHART_KEY)
    if curve.target_unreachable_past_capacity:
        st.caption(
            f"Past capacity every slot runs full batches, and a full batch takes "
            f"{ms_text(curve.full_batch_ms)}, over the p99 target of {ms_text(curve.target_ms)}: "
            "nothing is on time there, whatever is shed. A smaller maximum batch size (sidebar) "
            "trades capacity for a batch that fits the target."
        )


def table(curve: GoodputCurve) -> None:
    """Goodput per variant at each offered load, with the attempts per request for retries."""
    rows = {}
    for name in (*VARIANTS, CURRENT):
        column = []
        for result in curve.results[name]:
            cell = rate_text(result.goodput_rps)
            if name.startswith("retries") or (name == CURRENT and result.amplification > 1.0):
                cell += f" (×{result.amplification:.2f})"
            column.append(cell)
        rows["your settings" if name == CURRENT else name] = column
    index = [f"{m:g}×" for m in curve.multiples]
    with st.expander("Goodput at each offered load (attempts per request for retries)"):
        st.table(pd.DataFrame(rows, index=index))
        st.caption(
            "Variants: "
            + "; ".join(f"{name}: {_policy_text(curve.policies[name])}" for name in VARIANTS)
            + "."
        )


def _policy_text(policy: OverloadPolicy) -> str:
    parts = []
    if policy.queue_limit is not None:
        parts.append(f"limit {policy.queue_limit}")
    if policy.deadline_ms is not None:
        parts.append(f"deadline {ms_text(policy.deadline_ms)}")
    if policy.max_retries:
        parts.append(f"{policy.max_retries} retries")
    if policy.retry_budget is not None and policy.max_retries:
        parts.append(f"{policy.retry_budget:.0%} budget")
    return ", ".join(parts) or "unbounded queue"
