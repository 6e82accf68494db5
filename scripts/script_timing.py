"""Server time of Streamlit script runs, for the benchmarks that drive the app through AppTest.

``time_script_runs()`` wraps ``ScriptRunner._run_script`` (what a server runs per rerun) so that
every run appends its (thread CPU, wall) seconds to ``SCRIPT_SECONDS``; a benchmark clears the
list, drives the app, and sums it.
"""

from __future__ import annotations

import time

from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

SCRIPT_SECONDS: list[tuple[float, float]] = []


def quiet_bare_mode_warnings() -> None:
    """Drop two warnings Streamlit logs for code that runs outside a server, as a benchmark's
    does between runs (setting AppTest's session state, importing cached functions): without
    this, every rerun added lines around the figures. Other warnings stay. (Filters, not
    levels: AppTest sets every Streamlit logger's level again when it loads its config.)"""
    from streamlit.runtime.caching import cache_data_api
    from streamlit.runtime.scriptrunner_utils import script_run_context

    for module, text in (
        (cache_data_api, "No runtime found"),
        (script_run_context, "missing ScriptRunContext"),
    ):
        module._LOGGER.addFilter(lambda record, text=text: text not in record.getMessage())


def time_script_runs() -> None:
    """Record (thread CPU, wall) seconds of every script run in ``SCRIPT_SECONDS`` (once)."""
    original = ScriptRunner._run_script
    if getattr(original, "_sdlab_timed", False):
        return

    def timed(self, *args, **kwargs):
        cpu_started, wall_started = time.thread_time(), time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            SCRIPT_SECONDS.append(
                (time.thread_time() - cpu_started, time.perf_counter() - wall_started)
            )

    timed._sdlab_timed = True
    ScriptRunner._run_script = timed


def share_script_cache() -> None:
    """Compile each script once, as a server does, instead of on every AppTest run.

    A server's ``Runtime`` holds one ``ScriptCache`` for all sessions, so a rerun reuses the
    script's bytecode. AppTest makes a new cache for every run and so compiles the entrypoint and
    the page again each time (a few milliseconds that no server rerun spends); a benchmark of the
    server's cost shares one cache instead.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
