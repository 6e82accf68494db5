"""The Heatmaps page's simulation check: on request, the grid simulated and each cell's model
error mapped."""

from __future__ import annotations

import streamlit as st

from sdlab_ui import cache, state
from sdlab_ui.figures import ERROR_FLAG_PCT
from sdlab_ui.server import runs, worker

_VERIFIED_KEY = "sdlab.verified_grid"


@runs.fragment
def simulation_check(lab: state.LabState) -> None:
    """Heatmaps: on request, simulate the grid and map each cell's model error."""
    st.subheader("Verify with simulation")
    key = cache.grid_key(lab.workload)
    cells = cache.VERIFY_RATE_CELLS * cache.VERIFY_REPLICA_CELLS
    st.caption(
        f"Simulates {cells} cells ({cache.VERIFY_RATE_CELLS} rates x "
        f"{cache.VERIFY_REPLICA_CELLS} replica counts), "
        f"{cache.VERIFY_REQUESTS_PER_CELL:,} requests each, and maps the {lab.model} model's "
        "p99 error against it: red where the model is pessimistic, blue where it is optimistic, "
        f"a cross beyond {ERROR_FLAG_PCT:.0f}% (the queueing model's accuracy target); grey "
        "where both say unstable, black where only one does. Hovering a cell gives the "
        "simulated p99's 95% interval, from five consecutive batches of its run (batch means; "
        "on the narrow side near capacity, where batches are correlated)."
    )
    figures = None
    if st.session_state.get(_VERIFIED_KEY) == key:
        try:
            figures = cache.verification_figures(lab.workload, lab.model)
        except worker.WorkerStopped:
            st.session_state.pop(_VERIFIED_KEY, None)
            st.warning(worker.STOPPED_TEXT)
    if figures is None:
        st.button(
            "Verify with simulation",
            key="heatmap.verify",
            on_click=_remember_verified,
            args=(key,),
            type="primary",
        )
        return
    analytic, errors = figures
    left, right = st.columns(2)
    with left:
        st.markdown("**Model p99 on the simulated cells**")
        st.plotly_chart(analytic, key="heatmap.verify.analytic")
    with right:
        st.markdown("**Model vs simulation, % error**")
        st.plotly_chart(errors, key="heatmap.verify.error")


def _remember_verified(key) -> None:
    st.session_state[_VERIFIED_KEY] = key
