"""Uploads a session no longer uses, let go at the end of its runs.

Streamlit keeps every file uploaded to a session, in the server's memory, until the session
ends: a widget that moves on to a new file, or a file sent to the upload endpoint under a file
id no widget ever names, stays. ``server.maxUploadSize`` (1 MB) bounds one request, not their
number (figures: docs/performance.md). What the app itself
can do without changing Streamlit: at the end of each of a session's runs, drop that session's
stored files that none of its uploaders holds now and that were already unheld at its previous
run (and at least ``UNUSED_GRACE_S`` earlier), so a file a browser has just uploaded, whose run
has not started, is kept. A flood of uploads sent without runs in between is not reached: the
README's hosting section gives the proxy limits that close it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, MutableMapping

import streamlit as st
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile

UNUSED_GRACE_S = 2.0
"""A file unheld at two runs this far apart is let go (a browser's run follows its upload at
once)."""
_SEEN_KEY = "sdlab.unused_uploads"


def release_unused(
    manager,
    session_id: str,
    held: Iterable[str],
    unheld_since: MutableMapping[str, float],
    now_s: float,
) -> int:
    """Remove ``session_id``'s stored files not in ``held`` that were already unheld at an
    earlier call (``unheld_since``: file id to when first seen unheld, updated here) at least
    ``UNUSED_GRACE_S`` ago; returns how many were removed. ``manager``: Streamlit's in-memory
    uploaded-file manager (others keep no per-session listing: nothing is removed)."""
    storage = getattr(manager, "file_storage", None)
    if storage is None:
        return 0
    try:
        stored = list(storage.get(session_id) or ())
    except RuntimeError:  # an upload changed the listing meanwhile: next run
        return 0
    held = set(held)
    removed = 0
    for file_id in stored:
        if file_id in held:
            unheld_since.pop(file_id, None)
            continue
        since = unheld_since.setdefault(file_id, now_s)
        if now_s - since >= UNUSED_GRACE_S:
            manager.remove_file(session_id, file_id)
            del unheld_since[file_id]
            removed += 1
    for file_id in set(unheld_since) - set(stored):
        del unheld_since[file_id]
    return removed


def release_this_sessions_unused() -> int:
    """``release_unused`` for the session whose run this is, holding what its uploaders hold."""
    context = get_script_run_ctx()
    if context is None:
        return 0
    manager = context.uploaded_file_mgr  # the server's own, which its uploaders store into
    # Only Streamlit's in-memory manager lists a session's files; most runs have none stored,
    # and reading every session value to find the held ones costs milliseconds.
    if not isinstance(manager, MemoryUploadedFileManager) or not manager.file_storage.get(
        context.session_id
    ):
        if _SEEN_KEY in st.session_state:
            del st.session_state[_SEEN_KEY]
        return 0
    held = [file.file_id for file in _held_files(st.session_state.values())]
    unheld_since = st.session_state.setdefault(_SEEN_KEY, {})
    return release_unused(manager, context.session_id, held, unheld_since, time.monotonic())


def _held_files(values: Iterable[object]) -> Iterable[UploadedFile]:
    for value in values:
        if isinstance(value, UploadedFile):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, UploadedFile))
