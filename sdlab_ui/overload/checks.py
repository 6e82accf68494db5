"""The Overload page's check on request: ``check_design``'s simulation of one replica at the
design's rate under the chosen policy, beside the analytic shares, p99 and goodput.

A fraction of a second (the first run in a server process also compiles the kernel), so it waits
for a button, runs in the heavy lane, is cached, and reruns as a fragment of its own.
"""

from __future__ import annotations

from dataclasses import astuple

import pandas as pd
import streamlit as st

from sdlab_model.overload import CheckRow, OverloadPolicy, check_design
from sdlab_model.workload import Workload
from sdlab_ui.overload.sections import share_text
from sdlab_ui.server import budget, runs
from sdlab_ui.text import ms_text, rate_text

SIMULATE_KEY = "overload.simulate"
SIMULATION_SEED = 0
_KEY = {Workload: astuple, OverloadPolicy: astuple}
_ROWS = (
    ("Turned away (rejected + timed out)", "shed_share", share_text),
    ("Served p99", "served_p99_ms", ms_text),
    ("Goodput", "goodput_rps", rate_text),
)


@st.cache_data(max_entries=16, hash_funcs=_KEY, show_spinner="Simulating the replica…")
def cached_check(workload: Workload, policy: OverloadPolicy) -> CheckRow:
    """``check_design`` at the design's rate (a fraction of a second)."""
    with budget.slot(budget.HEAVY):
        return check_design(workload, policy, seed=SIMULATION_SEED)


def _asked(key: tuple) -> bool:
    """Whether the visitor asked for the check for these inputs (now, or before unchanged)."""
    if st.button("Check with simulation", key=SIMULATE_KEY):
        st.session_state[SIMULATE_KEY + ".for"] = key
    return st.session_state.get(SIMULATE_KEY + ".for") == key


def _values(row: CheckRow) -> dict[str, tuple[float, float, float, float]]:
    """Analytic, simulated and the simulation's interval for each compared measure."""
    a, s = row.analytic, row.simulated
    shed = s["rejected_share"], s["timed_out_share"]
    return {
        "shed_share": (
            a.rejected_share + a.timed_out_share,
            shed[0].estimate + shed[1].estimate,
            shed[0].low + shed[1].low,
            shed[0].high + shed[1].high,
        ),
        "served_p99_ms": (a.served_p99_ms, *_triple(s["served_p99_ms"])),
        "goodput_rps": (a.goodput_rps, *_triple(s["goodput_rps"])),
    }


def _triple(measured) -> tuple[float, float, float]:
    return measured.estimate, measured.low, measured.high


def comparison_table(row: CheckRow) -> pd.DataFrame:
    """One row per measure: analytic, simulated, the interval and the error."""
    values = _values(row)
    return pd.DataFrame(
        {
            "Measure": [label for label, _, _ in _ROWS],
            "Analytic": [text(values[name][0]) for _, name, text in _ROWS],
            "Simulated": [text(values[name][1]) for _, name, text in _ROWS],
            "Simulation's 95% interval": [
                f"{text(max(values[name][2], 0.0))} to {text(values[name][3])}"
                for _, name, text in _ROWS
            ],
            "Error": [f"{row.errors[name]:.1%}" for _, name, _ in _ROWS],
        }
    ).set_index("Measure")


def verdict_text(row: CheckRow) -> str:
    """Within the tolerance, flagged, or a miss, in words."""
    tolerance = f"{row.tolerance:.0%}"
    if row.within:
        return f"**Within {tolerance}**: the analytic numbers hold for this design."
    if row.flagged:
        return (
            f"**Beyond {tolerance}, as flagged**: {row.analytic.flagged_because}. The simulation "
            "is the better guide here."
        )
    return f"**Beyond {tolerance}, unflagged**: a miss of the analytic model; trust the simulation."


@runs.fragment
def simulator(workload: Workload, policy: OverloadPolicy) -> None:
    """The simulation's shares, p99 and goodput beside the analytic ones, on request."""
    st.subheader("Check with simulation")
    if not _asked((astuple(workload), astuple(policy))):
        st.caption(
            "Simulates one replica at the design's rate event by event (queue limit, deadline, "
            "retries after exponential backoffs, the budget's token bucket; the same draws "
            "every time) and compares it with the analytic numbers above."
        )
        return
    row = cached_check(workload, policy)
    st.table(comparison_table(row))
    st.markdown(verdict_text(row))
    st.caption(row.simulated.note)
