"""The load test's protocol visitor asks the server for a rerun as a browser does.

A browser lists the hashes of the large messages it keeps with every rerun request, and the
server sends a reference in place of any of them it would send again. A protocol visitor that
kept nothing would be sent every chart and diagram in full, and so would load the server more
than the browsers it stands for.

A browser also keeps the value each widget shows and sends all of them with every rerun; the
server sends a widget's value only when the run sets it. A visitor that read a slider's value
from the last message would move it from its default again and again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.util
import sys
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "load_test.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("load_test_for_client", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


load_test = _load_script()


def _element(text: str, *, cacheable: bool, fragment: str = "") -> tuple[ForwardMsg, bytes]:
    message = ForwardMsg()
    message.hash = f"hash-of-{text}"
    message.metadata.cacheable = cacheable
    message.delta.new_element.markdown.body = text
    message.delta.fragment_id = fragment
    return message, message.SerializeToString()


def _reference_to(message: ForwardMsg) -> tuple[ForwardMsg, bytes]:
    reference = ForwardMsg()
    reference.ref_hash = message.hash
    return reference, reference.SerializeToString()


def test_a_kept_message_is_listed_and_a_reference_to_it_reads_as_the_message():
    cache = load_test.MessageCache()
    diagram, raw = _element("the diagram", cacheable=True)
    small, small_raw = _element("a caption", cacheable=False)

    assert cache.resolve(diagram, raw) is diagram
    assert cache.resolve(small, small_raw) is small
    assert cache.hashes() == [diagram.hash]

    resolved = cache.resolve(*_reference_to(diagram))
    assert resolved.delta.new_element.markdown.body == "the diagram"


def test_a_message_not_seen_for_more_than_max_age_runs_is_dropped_and_a_reference_renews_it():
    cache = load_test.MessageCache()
    cache.max_age = 2
    diagram, raw = _element("the diagram", cacheable=True)
    cache.resolve(diagram, raw)
    cache.run_finished("")
    cache.run_finished("")
    assert cache.hashes() == [diagram.hash]
    cache.resolve(*_reference_to(diagram))  # sent again (as a reference) in the third run
    cache.run_finished("")
    cache.run_finished("")
    assert cache.hashes() == [diagram.hash]
    cache.run_finished("")
    assert cache.hashes() == []
    with pytest.raises(KeyError):
        cache.resolve(*_reference_to(diagram))


def test_a_fragment_run_ages_only_that_fragments_messages():
    cache = load_test.MessageCache()
    cache.max_age = 0
    page_chart, page_raw = _element("the page's chart", cacheable=True)
    fragment_chart, fragment_raw = _element("the fragment's chart", cacheable=True, fragment="f1")
    cache.resolve(page_chart, page_raw)
    cache.resolve(fragment_chart, fragment_raw)

    cache.run_finished("f1")
    assert cache.hashes() == [page_chart.hash]
    cache.run_finished("")
    assert cache.hashes() == []


class _Socket:
    """The server's side of a visitor's websocket: each rerun request gets the next run."""

    def __init__(self, runs: list[list[ForwardMsg]]) -> None:
        self.runs, self.sent, self.replies = runs, [], []

    async def send(self, raw: bytes) -> None:
        self.sent.append(BackMsg.FromString(raw))
        finished = ForwardMsg()
        finished.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
        self.replies = [m.SerializeToString() for m in [*self.runs.pop(0), finished]]

    async def recv(self) -> bytes:
        return self.replies.pop(0)


_RATE_ID = "$$ID-1-sdlab.widget.rate_rps"
_TOGGLE_ID = "$$ID-2-sdlab.widget.gpu"


def _run_drawing(rate_set_to: str | None = None) -> list[ForwardMsg]:
    """A Lab run: the rate's select slider (its value set only if ``rate_set_to``), a toggle, and
    the headline p99."""
    slider, toggle, headline = ForwardMsg(), ForwardMsg(), ForwardMsg()
    rate = slider.delta.new_element.slider
    rate.id, rate.label = _RATE_ID, "Request rate (req/s)"
    rate.options.extend(["100", "200", "300", "400"])
    rate.default.append(1)
    if rate_set_to is not None:
        rate.raw_value.append(rate_set_to)
        rate.set_value = True
    gpu = toggle.delta.new_element.checkbox
    gpu.id, gpu.label = _TOGGLE_ID, "GPU acceleration"
    headline.delta.new_element.markdown.body = '<div data-label="p99">40 ms</div>'
    return [slider, toggle, headline]


def _in_own_loop(coroutine):
    """Run ``coroutine`` to its end on an event loop of its own thread: a browser test in the
    same worker may have left this thread's loop running."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _sent_values(message: BackMsg) -> dict[str, object]:
    return {
        state.id: getattr(state, state.WhichOneof("value"))
        for state in message.rerun_script.widget_states.widgets
    }


def test_each_rerun_sends_every_widget_with_the_value_it_shows_as_a_browser_does():
    runs = [_run_drawing(), _run_drawing(), _run_drawing(), _run_drawing("100"), _run_drawing()]
    visitor = load_test.ProtocolVisitor(0, 0, load_test.Tally(), 5.0)
    visitor.socket = _Socket(runs)
    right = load_test.Interaction("slider", "Request rate", "ArrowRight")
    _in_own_loop(visitor._run(None, "", load_test._is_headline_p99))
    for _ in range(4):
        _in_own_loop(visitor.interact(right))
    sent = [_sent_values(message) for message in visitor.socket.sent]
    assert sent[0] == {}, "the first request sent widget states before any widget was drawn"
    rates = [values[_RATE_ID].data[:] for values in sent[1:]]
    # 200 by default; moved by the visitor to 300, then 400 (its own value: the server sent
    # none), then clamped at 400; then the server set 100, and the next move starts there.
    assert rates == [["300"], ["400"], ["400"], ["200"]], f"the rate moved as {rates}"
    assert all(values[_TOGGLE_ID] is False for values in sent[1:]), (
        "the unchanged toggle was not sent with its value on every rerun"
    )


def test_a_new_session_starts_holding_no_widget_and_no_kept_message_as_a_reload_does(
    monkeypatch,
):
    visitor = load_test.ProtocolVisitor(0, 0, load_test.Tally(), 5.0)
    visitor.socket = _Socket([_run_drawing()])
    _in_own_loop(visitor._run(None, "", load_test._is_headline_p99))
    diagram, raw = _element("the diagram", cacheable=True)
    visitor.cache.resolve(diagram, raw)
    assert visitor.widgets and visitor.shown and visitor.cache.hashes()

    async def connect(*args, **kwargs):
        return _Socket([_run_drawing()])

    monkeypatch.setattr(load_test, "connect", connect)
    _in_own_loop(visitor._connect())
    assert not visitor.widgets and not visitor.shown and not visitor.drawn
    assert visitor.cache.hashes() == [], "the new session lists messages the old one was sent"
    _in_own_loop(visitor._run(None, "", load_test._is_headline_p99))
    first = visitor.socket.sent[0].rerun_script
    assert list(first.widget_states.widgets) == [] and list(first.cached_message_hashes) == []


def test_the_memory_sampler_names_each_process_of_the_server_at_its_peak():
    """The peak's split says which process to look at: the server itself, a Python child by its
    ``-m`` module (the simulation worker), any other child by its program."""
    import os
    import subprocess

    children = [
        subprocess.Popen(
            [sys.executable, "-m", "timeit", "-n1", "-r1", "__import__('time').sleep(5)"]
        ),
        subprocess.Popen(["sleep", "5"]),
    ]
    sampler = load_test.RssSampler(os.getpid(), interval_s=0.01)
    try:
        parts = sampler.parts_mb()
        sampler.start()
        while not sampler.peak_parts_mb and sampler.is_alive():  # its first sample
            sampler._stop_event.wait(0.01)
    finally:
        sampler.stop()
        for child in children:
            child.kill()
            child.wait()
    assert {"server", "timeit", "sleep"} <= set(parts), parts
    assert set(sampler.peak_parts_mb) >= {"server", "timeit", "sleep"}, sampler.peak_parts_mb
    # Only these three: the test process may have other children (a browser's, one exiting).
    assert all(parts[name] > 0 for name in ("server", "timeit", "sleep")), parts
    assert max(sampler.samples_mb) == pytest.approx(sum(sampler.peak_parts_mb.values()))
