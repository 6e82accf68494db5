"""Uploads a session no longer holds are let go at its runs; what it holds, or has just sent, is
kept."""

from __future__ import annotations

from pathlib import Path

from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.uploaded_file_manager import UploadedFileRec

from sdlab_ui import uploads

MB = b"x" * 1_000_000


def _manager_with(session: str, count: int) -> MemoryUploadedFileManager:
    manager = MemoryUploadedFileManager("/_stcore/upload_file")
    for n in range(count):
        manager.add_file(session, UploadedFileRec(f"f{n}", f"t{n}.csv", "text/csv", MB))
    return manager


def _stored(manager, session: str) -> set[str]:
    return set(manager.file_storage.get(session) or ())


def test_files_no_uploader_holds_are_let_go_at_the_next_run_but_one():
    manager = _manager_with("s", 50)  # 50 MB under made-up ids, one held by a widget
    seen: dict[str, float] = {}
    assert uploads.release_unused(manager, "s", ["f0"], seen, now_s=0.0) == 0, (
        "a file first seen unheld may be one a browser has just sent: kept for now"
    )
    assert uploads.release_unused(manager, "s", ["f0"], seen, now_s=1.0) == 0, "within grace"
    removed = uploads.release_unused(manager, "s", ["f0"], seen, now_s=5.0)
    assert removed == 49 and _stored(manager, "s") == {"f0"}, (
        f"{removed} removed; kept {sorted(_stored(manager, 's'))[:5]}"
    )
    assert not seen, "nothing left to remember"


def test_a_file_held_again_is_kept_and_other_sessions_are_untouched():
    manager = _manager_with("s", 3)
    manager.add_file("other", UploadedFileRec("o", "o.csv", "text/csv", MB))
    seen: dict[str, float] = {}
    uploads.release_unused(manager, "s", [], seen, now_s=0.0)
    uploads.release_unused(manager, "s", ["f1"], seen, now_s=5.0)  # a widget took f1 meanwhile
    assert _stored(manager, "s") == {"f1"}, _stored(manager, "s")
    assert _stored(manager, "other") == {"o"}, "another session's file was removed"


def test_the_app_lets_a_sessions_unused_uploads_go_at_the_end_of_each_run():
    text = (Path(__file__).parents[2] / "app.py").read_text(encoding="utf-8")
    assert "uploads.release_this_sessions_unused()" in text, (
        "app.py must let unused uploads go at the end of every run"
    )
