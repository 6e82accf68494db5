"""A download built on click stays its session's file until that session runs again.

Streamlit's media store is driven here as the server drives it: the button registers its
callable (``add_deferred``), a click builds the file (``execute_deferred``, which returns the URL
the browser fetches next), and the end of any session's run prunes files no session refers to
(``remove_orphaned_files``; the second prune deletes).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from unittest.mock import MagicMock

import pytest
from streamlit.runtime import Runtime
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

BODY = "<html>a report</html>"  # what _page's download builds (its source is run on its own)


def _page() -> None:
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from sdlab_ui import downloads

    st.session_state["kept"] = downloads.kept_for_session(
        lambda: "<html>a report</html>", file_name="report.html", mime="text/html"
    )
    st.session_state["other"] = downloads.kept_for_session(
        lambda: "<html>another</html>", file_name="other.html", mime="text/html"
    )
    st.session_state["session_id"] = get_script_run_ctx().session_id


@pytest.fixture
def drawn(monkeypatch):
    """The page's two kept callables and its session id, and the server's media store."""
    from sdlab_ui import downloads

    monkeypatch.setattr(downloads, "_kept", type(downloads._kept)())  # none kept yet
    app = AppTest.from_function(_page, default_timeout=30).run()
    assert not app.exception, app.exception
    files = MediaFileManager(MemoryMediaFileStorage("/media"))
    saved = Runtime._instance
    Runtime._instance = MagicMock(spec=Runtime, media_file_mgr=files)
    try:
        state = app.session_state
        yield state["kept"], state["other"], state["session_id"], files
    finally:
        Runtime._instance = saved


def _click(files: MediaFileManager, build, file_name: str = "report.html") -> str:
    """Register ``build`` as a button does and click it: the id of the file the browser fetches."""
    placeholder = files.add_deferred(build, "text/html", "1.2.3", file_name=file_name)
    return PurePosixPath(files.execute_deferred(placeholder)).stem


def _other_sessions_run_twice(files: MediaFileManager) -> None:
    files.remove_orphaned_files()
    files.remove_orphaned_files()


def test_a_built_download_outlives_other_sessions_runs_until_its_session_runs_again(drawn):
    kept, _, session_id, files = drawn

    plain = _click(files, lambda: BODY)  # what st.download_button does alone
    _other_sessions_run_twice(files)
    assert files.read_file(plain) is None, "the race this guards against no longer happens"

    file_id = _click(files, kept)
    assert file_id == plain, "the kept file is not the one the browser is sent to"
    _other_sessions_run_twice(files)
    kept_file = files.read_file(file_id)
    assert kept_file is not None, "the built report was deleted before the browser fetched it"
    assert kept_file.content == BODY.encode()

    files.clear_session_refs(session_id)  # the session's next run starts
    _other_sessions_run_twice(files)
    assert files.read_file(file_id) is None, "the session's old download is kept for ever"


def test_a_download_still_builds_where_the_file_cannot_be_kept(drawn, monkeypatch, caplog):
    kept, _, _, files = drawn

    def refuse(*args, **kwargs):
        raise OSError("store full")

    monkeypatch.setattr(files, "add", refuse)
    file_id = _click(files, kept)
    assert files.read_file(file_id).content == BODY.encode(), "the click's file was not built"
    assert "could not keep a built download" in caplog.text


def test_only_the_newest_built_downloads_are_kept(drawn, monkeypatch):
    from sdlab_ui import downloads

    kept, other, _, files = drawn
    monkeypatch.setattr(downloads, "MAX_KEPT", 1)
    first = _click(files, kept)
    second = _click(files, other, "other.html")
    _other_sessions_run_twice(files)
    assert files.read_file(second) is not None, "the newest built download was not kept"
    assert files.read_file(first) is None, "more built downloads are kept than MAX_KEPT"


def test_a_closed_session_gets_no_file_when_its_download_is_let_go(drawn, monkeypatch):
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from sdlab_ui import downloads

    kept, other, _, files = drawn
    monkeypatch.setattr(downloads, "MAX_KEPT", 1)
    _click(files, kept)
    Runtime._instance.is_active_session.return_value = False  # its session closed since
    added_for = []
    add = files.add
    monkeypatch.setattr(
        files,
        "add",
        lambda data, *args: added_for.append(data) or add(data, *args),
    )
    _click(files, other, "other.html")
    assert added_for == [b"<html>another</html>"], (
        "a closed session was given a file (its references are never cleared again)"
    )
    assert get_script_run_ctx(suppress_warning=True) is None
