"""A widget value of the wrong type (only a forged message sends one): a notice, the link's
settings back, and one log line, never a traceback."""

from __future__ import annotations

import logging

from apptest_helpers import assert_no_exception, open_app, sidebar_value
from streamlit.proto.WidgetStates_pb2 import WidgetState

from sdlab_ui import forged

RATE_KEY = "sdlab.widget.rate_rps"


def _forge_next_value(app, monkeypatch, key: str) -> None:
    """Make the next run send ``key``'s value as a text, whatever kind of widget it is."""
    widget = next(w for w in app.select_slider if w.key == key)
    monkeypatch.setattr(
        type(widget),
        "_widget_state",
        property(lambda self: WidgetState(id=self.id, string_value="forged")),
    )
    widget.set_value(widget.value)


def test_a_forged_slider_value_resets_the_page_with_a_notice_and_one_log_line(monkeypatch, caplog):
    app = open_app({"rate_rps": "750"})
    assert_no_exception(app)
    assert sidebar_value(app, "rate_rps") == 750, "the link's rate"
    _forge_next_value(app, monkeypatch, RATE_KEY)
    with caplog.at_level(logging.WARNING):
        app.run()
    monkeypatch.undo()
    assert_no_exception(app)
    warnings = " ".join(w.value for w in app.warning)
    assert forged.NOTICE in warnings, f"the visitor is told: {warnings}"
    assert sidebar_value(app, "rate_rps") == 750, "the link's settings, the safe state, are back"
    lines = [r for r in caplog.records if "wrong type" in r.getMessage()]
    assert len(lines) == 1 and not lines[0].exc_info, (
        f"one log line, no traceback: {[r.getMessage() for r in caplog.records]}"
    )
    app.run()
    assert not any(forged.NOTICE in w.value for w in app.warning), "the notice is shown once"


def test_streamlits_traceback_for_a_forged_value_is_logged_as_one_line(monkeypatch):
    from types import SimpleNamespace

    from streamlit.elements.widgets import file_uploader

    # What an uploader's on_change callback meets before the run (not the app's to catch).
    monkeypatch.setattr(file_uploader, "get_script_run_ctx", lambda: SimpleNamespace())
    try:
        file_uploader._get_upload_files("forged")
    except AttributeError as error:
        caught = error
    else:
        raise AssertionError("Streamlit read a text as an uploader's value")
    record = logging.LogRecord(
        "streamlit.error_util", logging.ERROR, __file__, 1, "Uncaught app execution", (),
        (type(caught), caught, caught.__traceback__),
    )  # fmt: skip
    assert forged.OneLineForgedValues().filter(record), "the line is kept"
    assert record.exc_info is None and "wrong type" in record.getMessage(), record.getMessage()


def test_the_apps_own_errors_are_not_taken_for_forged_values():
    try:
        int("not a number")  # raised in the app's code, not Streamlit's widget code
    except ValueError as error:
        assert not forged.is_forged_widget_value(error), "an app bug must not be hidden"
