"""The model's compiled kernels, ready before a page needs them, with a word while they compile.

Every queueing evaluation runs numba kernels (``sdlab_model.queues``'s, compiled by
``sdlab_model.queues.warmup``). numba compiles them on first use, or loads them from its disk
cache. ``python3 dev.py run`` compiles them before it serves, but Streamlit Community Cloud runs
``streamlit run app.py`` directly, so after a deploy the first page to evaluate anything would
wait for the compiler with nothing on the screen: measured on a 2-core machine at 14.6 s to the
first p99 with an empty cache (most of it compiling ``_fleet_kernel`` and ``_tail_kernel``),
1.8 s with a warm one (numba's import and the cache's load).

So the first run of the process starts one thread that compiles (or loads) them, and every run
that comes before it is done waits for it under a spinner that says why.
"""

from __future__ import annotations

import threading

import streamlit as st

_done = threading.Event()
_lock = threading.Lock()
_thread: threading.Thread | None = None
WAIT_MESSAGE = (
    "Preparing the model's compiled kernels: the first page after the server starts waits for "
    "them, about 15 seconds if they were never compiled here, once."
)


def _compile() -> None:
    try:
        # Imported here: `import sdlab_ui` must not import numba before a page needs it.
        from sdlab_model.queues.warmup import warm_up

        warm_up()
    finally:
        _done.set()  # a failure shows where the kernels are used, with its own message


def is_ready() -> bool:
    """Whether the kernels are compiled (or failed to, which the pages then report)."""
    return _done.is_set()


def ensure_ready() -> None:
    """Start compiling the kernels (once per process) and wait for them, with a spinner if the
    wait is more than a moment."""
    global _thread
    if _done.is_set():
        return
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_compile, name="sdlab-kernels", daemon=True)
            _thread.start()
    if not _done.wait(0.1):
        with st.spinner(WAIT_MESSAGE, show_time=True):
            _done.wait()
