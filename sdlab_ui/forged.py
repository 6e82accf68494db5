"""Widget values of the wrong type, as only a forged websocket message sends them.

A browser sends each widget's value in that widget's own form (a slider's numbers, an uploader's
file list). A message written by hand can send another (a text for a slider), and Streamlit's
widget code then raises as it reads it, either in the run (when the widget is drawn) or before
it (in a widget's ``on_change`` callback), and logs a traceback each time. They get the same
treatment as a bad URL value:

- in the run, the app catches the error (``recover``): the session's state is cleared (its
  inputs come back from the link, the safe state), the page says why, and the run starts again;
- either way, the log gets one line instead of the traceback (``OneLineForgedValues``, on
  Streamlit's logger for uncaught app errors).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.logger import get_logger

FORGED_ERRORS = (TypeError, AttributeError, ValueError, IndexError, KeyError)
"""What Streamlit's widget code raises on a value of another type than the widget's."""
_WIDGET_CODE = ("streamlit/elements/widgets/", "streamlit/runtime/state/")
_NOTICE_KEY = "sdlab.forged_notice"
_AFTER_RESET_KEY = "sdlab.forged_after_reset"
NOTICE = (
    "A control's value arrived in a form this app cannot read, so the page was reset to the "
    "link's settings."
)
logger = get_logger(__name__)  # Streamlit's format, beside its own lines


def is_forged_widget_value(error: BaseException) -> bool:
    """Whether ``error`` was raised reading a widget's value inside Streamlit's widget code."""
    if not isinstance(error, FORGED_ERRORS):
        return False
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and any(part in frames[-1].filename.replace("\\", "/")
                                for part in _WIDGET_CODE)  # fmt: skip


def one_line(error: BaseException) -> str:
    """The log line for a refused value: the error's type and a short message, no traceback."""
    message = " ".join(str(error).split())[:120]
    return f"Refused a widget value of the wrong type ({type(error).__name__}: {message})"


def recover(error: BaseException) -> None:
    """Log one line, clear the session's state, leave the notice for the next run, and rerun.

    Raises ``error`` again if this run follows such a reset: a state cleared a moment ago holds
    no forged value, so the error is the app's own and must not loop."""
    if st.session_state.get(_AFTER_RESET_KEY):
        raise error
    logger.warning(one_line(error))
    st.session_state.clear()
    st.session_state[_NOTICE_KEY] = True
    st.rerun()


@contextmanager
def recovering() -> Iterator[None]:
    """Run the block; a forged widget value raised in it is ``recover``ed from, anything else
    raised again."""
    try:
        yield
    except FORGED_ERRORS as error:
        if not is_forged_widget_value(error):
            raise
        recover(error)


def show_notice() -> None:
    """The notice, once, on the run after ``recover``."""
    after_reset = st.session_state[_AFTER_RESET_KEY] = st.session_state.pop(_NOTICE_KEY, False)
    if after_reset:
        st.warning(NOTICE, icon=":material/warning:")


class OneLineForgedValues(logging.Filter):
    """Turns the traceback Streamlit logs for a forged widget value into one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and is_forged_widget_value(error):
            record.msg, record.args = one_line(error), ()
            record.exc_info, record.exc_text = None, None
        return True


def install_log_filter() -> None:
    """Add the filter to Streamlit's logger of uncaught app errors (once per process)."""
    streamlit_logger = logging.getLogger("streamlit.error_util")
    if not any(isinstance(f, OneLineForgedValues) for f in streamlit_logger.filters):
        streamlit_logger.addFilter(OneLineForgedValues())
