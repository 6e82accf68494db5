"""The Lab's scenario files: restore a lab from one (a bad file changes nothing and says why)."""

from __future__ import annotations

import streamlit as st

from sdlab_model import scenario_file
from sdlab_ui import state

_UPLOAD_KEY = "lab.scenario_upload"
_UPLOAD_MESSAGE_KEY = "sdlab.upload_message"


def restore_from_file(lab: state.LabState) -> None:
    """Restore a lab from its scenario file (a bad file changes nothing and says why); the
    download of one sits with the other downloads (``sections.report_downloads``)."""
    st.file_uploader(
        "Restore a lab from its scenario file (JSON)",
        type=["json"],
        key=_UPLOAD_KEY,
        on_change=_on_upload,
    )
    kind, message = st.session_state.get(_UPLOAD_MESSAGE_KEY, (None, ""))
    if kind == "error":
        # The message quotes file content only as inert code spans (scenario_file's contract).
        st.error(f"Not loaded, the lab is unchanged: {message}")
    elif kind == "success":
        st.success(message)


def _on_upload() -> None:
    uploaded = st.session_state.get(_UPLOAD_KEY)
    if uploaded is None:
        st.session_state.pop(_UPLOAD_MESSAGE_KEY, None)
        return
    if not hasattr(uploaded, "getvalue"):  # a file id the server never received (forged)
        st.session_state[_UPLOAD_MESSAGE_KEY] = ("error", "the file did not arrive.")
        return
    try:
        loaded = scenario_file.loads(uploaded.getvalue())
    except scenario_file.ScenarioFileError as error:
        st.session_state[_UPLOAD_MESSAGE_KEY] = ("error", str(error))
        return
    state.load(loaded.workload, loaded.model)
    state.load_residency(loaded.residency)
    st.session_state[_UPLOAD_MESSAGE_KEY] = ("success", "Scenario file loaded.")
