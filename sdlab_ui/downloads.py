"""Downloads built when clicked: each report built once per design, under the budget, and every
built file kept for its session until that session's next run.

A download button's callable runs when the file is asked for, in a worker thread of the server,
with no rerun: a visitor (or a script speaking the protocol) can ask again and again. An HTML
report costs a fraction of a second of CPU and ~5 MB (plotly.js inlined), so each build takes
the budget's ``PYTHON`` lane (``sdlab_ui/server/budget.py``) and the last few reports are kept, one
per design: asking again for the same design costs a lookup, and Streamlit's media store keeps one
copy of a file however often it is served (its file ids hash the content).

Streamlit 1.67 stores a built download as a file no session refers to, and the end of any
session's run prunes such files (the second end deletes it), so on a busy server the browser's
fetch could come too late: a 404 (docs/performance.md). ``button`` registers the built file
as its own session's, as a file drawn by that session's run is, so it stays until the session
runs again, or until ``MAX_KEPT`` newer ones are kept.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from types import SimpleNamespace

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from sdlab_ui.cache import shared_cache
from sdlab_ui.server import budget

_LOG = logging.getLogger(__name__)

MAX_KEPT = 8
"""Built files kept at once, server-wide (an HTML report is ~5 MB): the oldest is let go first,
long after its browser has fetched it, so idle sessions cannot pile reports up."""
_kept: OrderedDict[tuple[str, str], None] = OrderedDict()  # (session id, place), oldest first
_kept_lock = threading.Lock()


@dataclass(frozen=True)
class ReportRequest:
    """A report of one design: equal requests (same ``design``) share one build."""

    design: Hashable
    """What the report depends on, e.g. ``(workload, model, link_query)``."""
    build: Callable[[], str] = field(compare=False, repr=False)


@shared_cache(maxsize=4)  # ~5 MB a report: the designs a few visitors download at once
def built_report(request: ReportRequest) -> str:
    """``request.build()`` under the ``PYTHON`` lane, once per design while it is kept."""
    with budget.slot(budget.PYTHON):
        return request.build()


def button(
    label: str,
    build: Callable[[], str | bytes],
    *,
    file_name: str,
    mime: str,
    key: str,
    icon: str | None = None,
    where=st,
) -> None:
    """A download button (in ``where``) whose file ``build()`` makes when it is clicked, with no
    rerun; the built file stays this session's until its next run (module docstring)."""
    where.download_button(
        label,
        kept_for_session(build, file_name=file_name, mime=mime),
        file_name=file_name,
        mime=mime,
        key=key,
        on_click="ignore",
        icon=icon,
    )


def kept_for_session(
    build: Callable[[], str | bytes], *, file_name: str, mime: str
) -> Callable[[], bytes]:
    """``build``, whose result is also registered as a file of the session drawing this run."""
    # The click runs in another thread: keep whose download it is. The id, not the run's
    # context, which would keep the finished run's script runner alive (docs/performance.md).
    context = get_script_run_ctx()
    session_id = context.session_id if context is not None else None

    def built() -> bytes:
        data = build()
        data = data.encode("utf-8") if isinstance(data, str) else data
        if session_id is not None and runtime.exists():
            _register(data, session_id, file_name=file_name, mime=mime)
        return data

    return built


def _register(data: bytes, session_id: str, *, file_name: str, mime: str) -> None:
    """Add ``data`` to the media store as the session's file, as its own run's elements are.

    Same bytes, type and name as Streamlit's deferred download stores, so the same file id: the
    file the browser fetches. One place per file name, so a session holds its latest only.
    """
    place = f"sdlab-download:{file_name}"
    _add_as(session_id, data, mime, place, file_name)
    with _kept_lock:
        _kept[(session_id, place)] = None
        _kept.move_to_end((session_id, place))
        oldest = [_kept.popitem(last=False)[0] for _ in range(len(_kept) - MAX_KEPT)]
    for old_session, old_place in oldest:
        if runtime.get_instance().is_active_session(old_session):  # a closed one holds none
            _add_as(old_session, b"", mime, old_place, None)  # an empty file takes its place


def _add_as(session_id: str, data: bytes, mime: str, place: str, file_name: str | None) -> None:
    """``media_file_mgr.add`` as session ``session_id``: the store reads the session's id from
    the thread's script-run context, so a short thread carries one that holds only the id, and
    the server's pooled thread running this click is left as it was."""
    files = runtime.get_instance().media_file_mgr
    failed: list[Exception] = []

    def add() -> None:
        try:
            files.add(data, mime, place, file_name, True)
        except Exception as error:  # the download still works, as before: its file is not kept
            failed.append(error)

    carrier = threading.Thread(target=add, name="sdlab-download-keeper")
    add_script_run_ctx(carrier, SimpleNamespace(session_id=session_id))
    carrier.start()
    carrier.join()
    if failed:
        _LOG.warning("could not keep a built download for its session: %r", failed[0])
