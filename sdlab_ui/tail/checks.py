"""The Tail at scale page's check on request: ``check_tail``'s Monte Carlo of the fanned-out
request, unhedged and hedged, beside the analytic quantiles, with its 95% intervals.

About a second or two, so it waits for a button, runs in the heavy lane, is cached, and reruns
as a fragment of its own. A result stays on the page while the inputs it answered stay.
"""

from __future__ import annotations

from dataclasses import astuple

import pandas as pd
import streamlit as st

from sdlab_model.tail import TailCheck, TailInputs, check_tail
from sdlab_ui.server import budget, runs
from sdlab_ui.text import ms_text

SIMULATE_KEY = "tail.simulate"
SIMULATION_SEED = 0
_KEY = {TailInputs: astuple}
_NAMES = {0.99: "p99", 0.999: "p99.9"}


@st.cache_data(max_entries=16, hash_funcs=_KEY, show_spinner="Simulating every leaf…")
def cached_check(inputs: TailInputs) -> TailCheck:
    """``check_tail``: two runs of at most ``SIM_LEAVES`` leaf draws each (a second or two)."""
    with budget.slot(budget.HEAVY):
        return check_tail(inputs, seed=SIMULATION_SEED)


def _asked(inputs: TailInputs) -> bool:
    """Whether the visitor has asked for the check for these inputs (the button now, or before
    without a change since)."""
    if st.button("Check with simulation", key=SIMULATE_KEY):
        st.session_state[SIMULATE_KEY + ".for"] = inputs
    return st.session_state.get(SIMULATE_KEY + ".for") == inputs


def comparison_table(check: TailCheck) -> pd.DataFrame:
    """One row per quantile: analytic, simulated, the interval and whether they agree."""
    return pd.DataFrame(
        {
            "Request latency": [f"{_NAMES[r.quantile]}, {r.label}" for r in check.rows],
            "Analytic": [ms_text(r.analytic_ms) for r in check.rows],
            "Simulated": [ms_text(r.simulated.estimate) for r in check.rows],
            "Simulation's 95% interval": [
                f"{ms_text(r.simulated.low)} to {ms_text(r.simulated.high)}" for r in check.rows
            ],
            "Agree": ["yes" if r.agrees else "no" for r in check.rows],
        }
    ).set_index("Request latency")


def verdict_text(check: TailCheck) -> str:
    """Whether the analytic quantiles lie inside the simulation's intervals, in words."""
    if check.agrees:
        return "**They agree**: every analytic quantile is inside the simulation's 95% interval."
    off = ", ".join(f"{_NAMES[r.quantile]} {r.label}" for r in check.rows if not r.agrees)
    return f"**They disagree** at {off}: the analytic value is outside the 95% interval."


@runs.fragment
def simulator(inputs: TailInputs) -> None:
    """The Monte Carlo's quantiles beside the analytic ones, on request."""
    st.subheader("Check with simulation")
    if not _asked(inputs):
        st.caption(
            "Draws every leaf of every request (the same draws every time), hedges the ones "
            "still out at the delay, and compares the request's p99 and p99.9 with the "
            "analytic ones. Leaves in the simulation are idle: it checks the fan-out and "
            "hedging arithmetic, not the load fed back."
        )
        return
    check = cached_check(inputs)
    st.table(comparison_table(check))
    st.markdown(verdict_text(check))
    st.caption(
        f"{check.requests:,} requests of {inputs.fanout:,} leaves each, unhedged and hedged "
        f"(the same draws every time). Leaf requests hedged: {check.hedged_share:.2%} analytic, "
        f"{check.simulated_hedged_share:.2%} simulated, on idle leaves."
    )
