"""The kernels compile in the background: a page drawn meanwhile has its numbers and says why
the model is slower, and the line is gone once they are compiled."""

from __future__ import annotations

import gc
import threading

import pytest
from apptest_helpers import assert_no_exception, headline_p99, open_app

from sdlab_model.queues import kernels
from sdlab_ui.server import warmup


@pytest.fixture
def compiling(monkeypatch):
    """A background compile that lasts until the test sets the event it yields."""
    monkeypatch.setattr(kernels, "_compiler", None)
    monkeypatch.setattr(kernels, "_compiled", threading.Event())
    release = threading.Event()
    kernels.compile_in_background(lambda: release.wait(120))
    yield release
    release.set()
    kernels.wait_until_compiled(120)


def _says_compiling(app) -> bool:
    return any(info.value == warmup.NOTICE for info in app.info)


def test_a_page_drawn_while_compiling_has_its_numbers_and_says_so(compiling):
    app = open_app()
    assert_no_exception(app)
    assert headline_p99(app), "the Lab has no p99 while the kernels compile"
    assert _says_compiling(app), "the page does not say the model is being compiled"
    compiling.set()
    assert kernels.wait_until_compiled(120), "the stand-in compile did not finish"
    app.run()
    assert_no_exception(app)
    assert not _says_compiling(app), "the page still says the model is being compiled"


def test_the_app_starts_the_compile_in_a_subprocess_and_does_not_wait(monkeypatch):
    started = []
    monkeypatch.setattr(kernels, "compile_in_background", started.append)
    app = open_app()
    assert_no_exception(app)
    assert started == [warmup.compile_kernels], f"the app started {started}"


def test_the_background_compile_prepares_the_queueing_simulator_then_llm_kernels(monkeypatch):
    calls = []
    monkeypatch.setattr(warmup.subprocess, "run", lambda args, **_: calls.append(args[-1]))
    for module in warmup.WARM_UPS:
        here = f"{module.__name__} here"
        monkeypatch.setattr(module, "warm_up", lambda here=here: calls.append(here))
    monkeypatch.setattr(warmup, "freeze_startup_objects", lambda: calls.append("freeze"))
    warmup.compile_kernels()
    expected = [
        step
        for name in ("queues", "simulation", "llm")
        for step in (f"sdlab_model.{name}.warmup", f"sdlab_model.{name}.warmup here")
    ] + ["freeze"]
    assert calls == expected, f"compiled {calls}"


def test_a_warm_server_exempts_what_it_holds_from_full_collections():
    gc.unfreeze()  # what an app run's background compile may have frozen in this process
    assert gc.get_freeze_count() == 0
    try:
        warmup.freeze_startup_objects()
        assert gc.get_freeze_count() > 10_000, "the start-up objects were not frozen"
    finally:
        gc.unfreeze()
