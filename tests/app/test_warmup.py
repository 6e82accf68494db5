"""The kernels' warm-up: one compiling thread per process however many runs wait, then none."""

from __future__ import annotations

import threading
import time

from apptest_helpers import assert_no_exception, open_app

from sdlab_ui import warmup


def test_concurrent_first_runs_start_one_compile_and_all_wait_for_it(monkeypatch):
    calls = []

    def slow_compile():
        calls.append(threading.current_thread().name)
        time.sleep(0.3)
        warmup._done.set()

    monkeypatch.setattr(warmup, "_compile", slow_compile)
    monkeypatch.setattr(warmup, "_thread", None)
    monkeypatch.setattr(warmup, "_done", threading.Event())
    finished = []
    runs = [
        threading.Thread(target=lambda: (warmup.ensure_ready(), finished.append(warmup.is_ready())))
        for _ in range(4)
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(10)
    assert calls == ["sdlab-kernels"], f"compiled {len(calls)} times: {calls}"
    assert finished == [True] * 4, f"a run went on before the kernels were ready: {finished}"
    warmup.ensure_ready()
    assert len(calls) == 1, "a later run compiled again"


def test_the_app_waits_for_the_kernels_on_every_page(monkeypatch):
    waited = []
    monkeypatch.setattr(warmup, "ensure_ready", lambda: waited.append(True))
    app = open_app()
    assert_no_exception(app)
    assert waited, "the app did not wait for the kernels before drawing the page"
