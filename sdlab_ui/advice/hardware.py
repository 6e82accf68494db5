"""The Advice page's hardware sections: price a replica from the sourced catalog, or set the
model's speed from a measured profile."""

from __future__ import annotations

import streamlit as st

from sdlab_model.advice.hardware import CATALOG, hardware_by_id, parse_profile_csv
from sdlab_model.advice.search import priced_as, replica_of
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.workload import Workload
from sdlab_ui import state
from sdlab_ui.text import money

_CATALOG_KEY = "advice.catalog_choice"
_PROFILE_KEY = "advice.profile_upload"
_PROFILE_MESSAGE_KEY = "sdlab.profile_message"


def catalog_pricing(workload: Workload) -> None:
    """Price the CPU or GPU replica from the hardware catalog (every price sourced and dated)."""
    st.subheader("Price a replica from the catalog")
    st.caption(
        "On-demand list prices, each with its source and the date it was read "
        "(docs/hardware_catalog.md). A replica is as many instances as give it the slots it has "
        "now; choosing one sets that replica's price and slots. The model's speed stays yours "
        "(upload a measured profile below to set it)."
    )
    rows = [
        {
            "instance": h.name,
            "kind": h.kind.upper(),
            "accelerator": h.accelerator or "—",
            "memory (GB)": f"{h.accelerator_memory_gb:g}" if h.accelerator_memory_gb else "—",
            "slots": h.slots,
            "$/h": h.usd_per_hour,
            "a replica here": _replica_text(workload, h.id),
            "price read": h.price_date,
            "estimate": "yes" if h.is_estimate else "no",
        }
        for h in CATALOG
    ]
    st.dataframe(rows, hide_index=True, width="stretch", height="content")
    choice = st.selectbox(
        "Instance type",
        [h.id for h in CATALOG],
        key=_CATALOG_KEY,
        format_func=lambda id_: (
            f"{hardware_by_id(id_).name} · a replica {_replica_text(workload, id_)}"
        ),
    )
    st.button("Use this replica", key="advice.use_catalog", on_click=_use_catalog, args=(choice,))


def _replica_text(workload: Workload, hardware_id: str) -> str:
    count, usd_per_hour = replica_of(workload, hardware_by_id(hardware_id))
    return f"{count} × ${usd_per_hour / count:g} = {money(usd_per_hour)}/h"


def _use_catalog(hardware_id: str) -> None:
    workload = state.current().workload
    state.load(priced_as(workload, hardware_by_id(hardware_id)))


def changes_for_profile(workload: Workload, text: str) -> tuple[dict, str]:
    """Workload changes that make the current replica kind follow a measured batch profile.

    The profile (batch size -> latency of *your* model on that hardware) is fitted with the
    lab's batch cost ``s1 (f + (1 - f) b)``; on GPU ``s1`` sets the speed-up over the CPU
    latency, on CPU it is the model latency. Raises ValueError with a message for a bad file or
    a fit outside the inputs' ranges.
    """
    profile = parse_profile_csv(text)
    fit = profile.affine_fit()
    s1, share, error = fit.single_request_ms, fit.overhead_share, fit.max_relative_error
    note = (
        f"Fitted s1 = {s1:.3g} ms, fixed share f = {share:.3f} over {len(profile.batch_sizes)} "
        f"batch sizes (worst point {error:.1%} off the fit)."
    )
    if workload.gpu:
        speedup = workload.model_latency_ms / s1
        spec = NUMERIC_BY_NAME["gpu_speedup"]
        if not spec.minimum <= speedup <= spec.maximum:
            raise ValueError(
                f"the profile's single request takes {s1:.3g} ms, a GPU speed-up of "
                f"{speedup:.3g}x over the {workload.model_latency_ms:g} ms model latency, outside "
                f"{spec.minimum:g}-{spec.maximum:g}x; set the model latency first."
            )
        limit = NUMERIC_BY_NAME["gpu_batch_overhead_share"].maximum
        return {"gpu_speedup": speedup, "gpu_batch_overhead_share": min(share, limit)}, note
    spec = NUMERIC_BY_NAME["model_latency_ms"]
    if not spec.minimum <= s1 <= spec.maximum:
        raise ValueError(
            f"the profile's single request takes {s1:.3g} ms, outside the model latency range "
            f"{spec.minimum:g}-{spec.maximum:g} ms."
        )
    limit = NUMERIC_BY_NAME["cpu_batch_overhead_share"].maximum
    return {"model_latency_ms": s1, "cpu_batch_overhead_share": min(share, limit)}, note


def profile_upload(workload: Workload) -> None:
    st.subheader("Measured batch profile")
    kind = "GPU" if workload.gpu else "CPU"
    st.caption(
        f"Upload your model's measured latency by batch size on the {kind} replica: a CSV with "
        "`batch_size,latency_ms`, or perf_analyzer's `-f` CSV with a `Batch Size` column added. "
        "It is fitted with the lab's batch cost and sets that replica's speed and fixed share."
    )
    st.file_uploader(
        "Profile CSV", type=["csv", "txt"], key=_PROFILE_KEY, on_change=_on_profile_upload
    )
    message = st.session_state.get(_PROFILE_MESSAGE_KEY)
    if message:
        kind_of_message, text = message
        (st.error if kind_of_message == "error" else st.success)(state.plain_text(text))


def _on_profile_upload() -> None:
    uploaded = st.session_state.get(_PROFILE_KEY)
    if uploaded is None or not hasattr(uploaded, "getvalue"):
        st.session_state.pop(_PROFILE_MESSAGE_KEY, None)
        return
    workload = state.current().workload
    try:
        raw = uploaded.getvalue()
        text = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
        changes, note = changes_for_profile(workload, text)
    except (ValueError, UnicodeDecodeError) as error:
        st.session_state[_PROFILE_MESSAGE_KEY] = ("error", f"Profile not used: {error}")
        return
    state.load(workload.with_changes(**changes))
    st.session_state[_PROFILE_MESSAGE_KEY] = ("success", f"Profile loaded. {note}")
