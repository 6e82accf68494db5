#!/usr/bin/env python3
"""Load test: many visitors at once against a served sdlab.

    python3 scripts/load_test.py                  # 20 Chromium sessions x 20 interactions
    python3 scripts/load_test.py --think-s 5      # visitors pause to read between interactions
    python3 scripts/load_test.py --browsers 2     # 2 Chromium sessions + 18 protocol visitors
    python3 scripts/load_test.py --app bare       # the same load on a bare page (the floor)
    python3 scripts/load_test.py --browsers 0 --sessions 15 --hostile 5   # the hostile mix

Starts ``streamlit run`` on a free localhost port, waits until it has compiled its model (a warm
server, as ``python3 dev.py run`` serves; the cold start is ``scripts/bench_cold_start.py``'s), and
sends it ``--sessions`` visitors at once,
each doing ``--interactions`` steps from the same mix: slider moves by keyboard, scenario-card
clicks, page switches. Every visitor first loads the app; once all have loaded (or failed to),
they all start interacting together. Between steps a visitor waits until its page has settled
and then, with ``--think-s``, pauses to read: an exponential pause with that mean, truncated at
ten times the mean, as load generators usually model think time.

Two kinds of visitor:

- a browser session: one context of one real Chromium (the system's, /usr/bin/chromium; never
  ``playwright install``), driving the page as a person would. A slider move or card click
  counts as shown when the URL carries the new state and the headline p99 has been redrawn by
  that run (its element is no longer marked stale); a page switch when the new page's title is
  drawn by the new run. "Settled": the run is over and nothing on the page is stale. Both are
  timed in the page, from the input event's own timestamp (finding the element to press, which
  Playwright does through the accessibility tree, is not the visitor's wait);
- a protocol visitor: Streamlit's own websocket protocol spoken from Python (the BackMsg a
  browser sends for the same widget change, with every widget's value and the hashes of the
  large messages it keeps; ForwardMsgs read back), no rendering. Shown: the
  delta carrying the new headline p99 (or the page title) has arrived; settled: the run's
  ``script_finished``. It puts the same load on the server as a browser whose renderer runs
  somewhere else, which is how a hosted app meets its visitors.

The first ``--browsers`` sessions (default: all) are browsers, the rest protocol visitors. All
browsers share this machine's cores with the server, so with many of them the figures measure
Chromium as much as sdlab; ``--app bare`` serves a page with the same sidebar, card buttons and
a p99 metric, on sockets set as sdlab sets them (TCP_NODELAY), and nothing else, to show how
much of a figure is the platform's floor.

``--hostile N`` adds N hostile visitors (protocol) to the ``--sessions`` normal ones. They pause
never and loop, until every normal visitor is done, each input new so that it misses every
cache, as a URL can ask. ``--hostile-mix pages`` (the default, issue 26): hostile visitor n
attacks ``PAGE_ATTACKS[n % 6]`` (``PageAttacker``): the Timeline check at its largest size, the
canary Steps text at the field's limit and at the websocket's, the HTML report in a loop, Verify
on the heaviest grid, a flood of 1 MB uploads through the trace uploader, and the Overload page's
two simulations at its costliest inputs (so ``--hostile 6`` has each attack once).
``--hostile-mix classic`` (issue 13): every hostile visitor loops on the Lab opened from a fresh
URL of an unbatched fleet at utilization 0.99–0.9935 (an exact M/D/c solve of seconds, plus a
simulation near saturation), the Heatmaps page opened from a fresh URL (five grids and their
figures) and its "Verify with simulation" button (768 simulated cells). Each URL is a new
session, as a reload is. With hostile visitors, ``--pressers`` (default 2) more visitors press
"Simulate this timeline" or "Verify with simulation" now and then with inputs of their own
(``LegitPresser``; target p95 <= 15 s from press to result), and the server's RSS is read again
``--after-s`` (default 60 s) after everyone has left (target <= 450 MB in the pages mix).

Reported: time from interaction to updated value shown, p50/p95/max per kind of visitor (targets
(issue 13): p95 <= 300 ms for browsers, <= 500 ms for protocol visitors, and <= 1 s for every
normal visitor in the hostile mix); CPU seconds used by the server and by Chromium; errors seen in
pages (exception elements, console errors, uncaught page errors; target 0); requests from pages
to anything other than the local server (target 0); the server's RSS, children included, sampled
four times a second (target peak <= 300 MB; <= 600 MB in the classic hostile mix, <= 800 MB in
the pages mix). Hostile visitors' times are reported, without a target.

Bounded: every wait has a timeout, the whole run has a deadline (--deadline-s), and the server
and browser are stopped however the run ends. Not part of the test suite: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import urllib.error
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

import psutil
from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dev import SERVER_ENVIRONMENT  # noqa: E402
from sdlab_model.params import NUMERIC_BY_NAME  # noqa: E402
from sdlab_model.workload import Workload  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
MB = 1024 * 1024
TARGET_P95_MS = {"browser": 300.0, "protocol": 500.0}
TARGET_RSS_MB = 300.0
HOSTILE_TARGET_P95_MS = 1000.0  # every normal visitor's, with hostile visitors on the server
HOSTILE_TARGET_RSS_MB = {"classic": 600.0, "pages": 800.0}
HOSTILE_TARGET_AFTER_MB = 450.0  # the server's RSS --after-s after the run (the pages mix)
HOSTILE_STEPS = ("lab", "heatmaps", "verify")
PAGE_ATTACKS = ("timeline", "canary", "report", "verify-heaviest", "upload", "overload")
"""The pages mix: hostile visitor n loops on ``PAGE_ATTACKS[n % 6]`` (see the module docstring)."""
PRESS_TARGET_P95_MS = 15_000.0  # a legitimate Verify or simulate press, in the pages mix
UPLOAD_BYTES = 1_000_000  # under server.maxUploadSize (1 MB = 1,048,576 bytes)
_FRAME_LIMIT_MB = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"][
    "maxMessageSize"
]
# The largest forged canary text the websocket still takes: 0.1 MB under server.maxMessageSize,
# far past the field's limit.
CANARY_FLOOD = "1," * int((_FRAME_LIMIT_MB - 0.1) * 1e6 / 2)

# Resolves once the interaction's updated value is on screen: the headline p99 (Lab) or the new
# page's title, redrawn by the run the interaction started (see the module docstring).
_SHOWN_JS = """([before, title]) => {
    const shown = () => { window.__sdlabShownAt ??= performance.now(); return true; };
    const fresh = (element) => element !== null
        && element.closest('[data-stale="true"]') === null;
    if (title !== null) {
        const heading = document.querySelector('h1');
        return heading !== null && heading.textContent.includes(title) && fresh(heading) && shown();
    }
    if (location.href === before) return false;
    // The Lab draws its headline as one Markdown element; the bare page uses st.metric.
    const p99 = document.querySelector('.sdlab-headline .sdlab-metric[data-label^="p99"]')
        ?? [...document.querySelectorAll('[data-testid="stMetric"]')].find(
            (metric) => metric.textContent.startsWith('p99'));
    return p99 !== undefined && p99 !== null && fresh(p99) && shown();
}"""

# Installed in every page: the time of the visitor's last key press or pointer press, from the
# event's own timestamp (when the browser took the input, not when a busy page got to it).
_INPUT_CLOCK_JS = """
for (const type of ['keydown', 'pointerdown']) {
    addEventListener(type, (event) => { window.__sdlabInputAt = event.timeStamp; }, true);
}
"""
_HEADLINE_VALUE = '.sdlab-metric-value, [data-testid="stMetricValue"]'
"""A headline number: the Lab's (one Markdown element) or the bare page's st.metric."""
_RESET_CLOCK_JS = "() => { window.__sdlabInputAt = undefined; window.__sdlabShownAt = undefined; }"
_CLOCK_JS = "() => [window.__sdlabInputAt, window.__sdlabShownAt, performance.now()]"

# Resolves once the whole run is over and nothing on the page is stale.
_SETTLED_JS = """([before, title]) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    if (title !== null) {
        const heading = document.querySelector('h1');
        return heading !== null && heading.textContent.includes(title);
    }
    return location.href !== before;
}"""


@dataclass(frozen=True)
class Interaction:
    """One thing a visitor does: move a slider by a key, click a card, or open a page."""

    kind: str  # "slider", "card" or "page"
    target: str  # slider label, card id or page link text
    detail: str = ""  # the key to press, or the page title to wait for


# Ten steps that each change the state, so each one has a result to wait for; done twice.
ROUND: tuple[Interaction, ...] = (
    Interaction("slider", "Request rate", "ArrowRight"),
    Interaction("card", "batching"),
    Interaction("slider", "Model latency", "ArrowRight"),
    Interaction("page", "Heatmaps", "Heatmaps"),
    Interaction("page", "Lab", "System Design Lab"),
    Interaction("card", "gpu-autoscale"),
    Interaction("slider", "Replicas", "ArrowRight"),
    Interaction("card", "single-endpoint"),
    Interaction("slider", "Request rate", "ArrowLeft"),
    Interaction("slider", "Batch window", "ArrowRight"),
)


@dataclass
class Tally:
    """What all sessions saw, appended to from one event loop (no locking needed)."""

    # (visitor kind, interaction kind) -> milliseconds; visitor kind -> milliseconds.
    latencies_ms: dict[tuple[str, str], list[float]] = field(
        default_factory=lambda: defaultdict(list)
    )
    settled_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    first_load_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    timeouts: list[str] = field(default_factory=list)
    hostile_failures: list[str] = field(default_factory=list)
    exception_elements: int = 0
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    outbound: set[str] = field(default_factory=set)
    sessions_finished: int = 0
    stopping: bool = False
    """Set when the normal visitors are done: looping visitors stop (a cancellation can be
    lost inside ``asyncio.wait_for`` when its reply arrives at the same moment)."""
    server_cpu_s: float = 0.0
    browser_cpu_s: float = 0.0
    browser_steps: list[tuple[float, int, str]] = field(default_factory=list)
    """(milliseconds, step number, step) of every browser visitor's step: which ones are slow."""


class RssSampler(threading.Thread):
    """Samples the server's RSS (its children included) until stopped, and what each process
    held at the peak (the server, its simulation worker, ``dot``: which one to look at)."""

    def __init__(self, pid: int, interval_s: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.interval_s = interval_s
        self.samples_mb: list[float] = []
        self.peak_parts_mb: dict[str, float] = {}
        self._stop_event = threading.Event()

    def parts_mb(self) -> dict[str, float]:
        """RSS (MB) by process: "server", a Python child by its ``-m`` module, else its program."""
        parts: dict[str, float] = {}
        for process in [self.process, *self.process.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):  # a child that just exited
                rss = process.memory_info().rss / MB
                name = "server" if process.pid == self.process.pid else _process_name(process)
                parts[name] = parts.get(name, 0.0) + rss
        return parts

    def rss_mb(self) -> float:
        return sum(self.parts_mb().values())

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                parts = self.parts_mb()
            except psutil.NoSuchProcess:
                return
            total = sum(parts.values())
            if total > max(self.samples_mb, default=0.0):
                self.peak_parts_mb = parts
            self.samples_mb.append(total)
            self._stop_event.wait(self.interval_s)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


def _process_name(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        command = process.cmdline()
        if "-m" in command[:-1]:
            return command[command.index("-m") + 1]
        if command:
            return Path(command[0]).name
    return "?"


class CpuSampler(threading.Thread):
    """CPU seconds (user + system) used by a process tree while it runs, processes that exit
    included up to their last sample: a renderer's CPU is gone from ``/proc`` once its browser
    context closes, so its last reading is kept."""

    def __init__(self, root: psutil.Process, name_part: str = "", interval_s: float = 0.25):
        super().__init__(daemon=True)
        self.root, self.name_part, self.interval_s = root, name_part, interval_s
        self._baseline = self._readings()  # CPU spent before the run does not count
        self._last: dict[int, float] = dict(self._baseline)
        self._stop_event = threading.Event()

    def _readings(self) -> dict[int, float]:
        readings = {}
        with contextlib.suppress(psutil.NoSuchProcess):
            for process in [self.root, *self.root.children(recursive=True)]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    if self.name_part in process.name():
                        times = process.cpu_times()
                        readings[process.pid] = times.user + times.system
        return readings

    def run(self) -> None:
        while not self._stop_event.is_set():
            self._last.update(self._readings())
            self._stop_event.wait(self.interval_s)

    def stop(self) -> float:
        """Stop sampling; the CPU seconds used since the sampler was made."""
        self._stop_event.set()
        self.join(timeout=5)
        self._last.update(self._readings())
        return sum(self._last.values()) - sum(self._baseline.values())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, log_path: Path, script: Path) -> subprocess.Popen:
    """``streamlit run script`` from the repository root (so its .streamlit/config.toml holds)."""
    command = [
        sys.executable, "-m", "streamlit", "run", str(script),
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        # Others commit to this checkout while the test runs; a watcher would reload the model
        # mid-run (sessions then hold objects of the old classes). A deployed app has no edits.
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with log_path.open("w") as log:
        # Its own session, so stopping it stops the processes it started and nothing else.
        # The environment `python3 dev.py run` gives the server (MALLOC_ARENA_MAX=2).
        return subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**SERVER_ENVIRONMENT, **os.environ},
        )


def wait_for_health(port: int, server: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"the server did not answer its health check within {timeout_s:.0f} s")


def wait_until_warm(port: int, timeout_s: float) -> None:
    """Ask for the first page until it no longer says the server is compiling its model: the
    visitors then meet a warm server, as ``python3 dev.py run`` serves once its kernels are
    compiled (the cold start is measured apart, by ``scripts/bench_cold_start.py``)."""
    from websockets.sync.client import connect as connect_sync

    from sdlab_ui.server.warmup import NOTICE

    deadline = time.monotonic() + timeout_s
    request = BackMsg()
    request.rerun_script.query_string = ""
    url = f"ws://127.0.0.1:{port}/_stcore/stream"
    with connect_sync(url, subprotocols=["streamlit"], origin=f"http://127.0.0.1:{port}") as ws:
        while time.monotonic() < deadline:
            ws.send(request.SerializeToString())
            compiling = False
            while True:
                reply = ForwardMsg()
                reply.ParseFromString(ws.recv(timeout=timeout_s))
                if reply.WhichOneof("type") == "script_finished":
                    break
                compiling |= reply.delta.new_element.alert.body == NOTICE
            if not compiling:
                return
            time.sleep(0.5)
    raise RuntimeError(f"the server still compiled its model after {timeout_s:.0f} s")


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)


def think_time_s(rng: random.Random, mean_s: float) -> float:
    """A visitor's pause to read: exponential with ``mean_s``, truncated at ten times the mean."""
    return min(rng.expovariate(1 / mean_s), 10 * mean_s) if mean_s > 0 else 0.0


class BrowserVisitor:
    """One visitor in its own context of the shared Chromium."""

    kind = "browser"

    def __init__(self, browser: Browser, base_url: str, session: int, tally: Tally, wait_s: float):
        self.browser, self.base_url, self.session = browser, base_url, session
        self.tally, self.wait_ms = tally, wait_s * 1000
        self.context = None
        self.page: Page | None = None

    async def load(self) -> None:
        self.context = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        await self.context.add_init_script(_INPUT_CLOCK_JS)
        self.page = await self.context.new_page()
        self._watch(self.page)
        await self.page.goto(self.base_url, timeout=self.wait_ms)
        await self.page.wait_for_function(
            _SETTLED_JS, arg=["", "System Design Lab"], timeout=self.wait_ms, polling=50
        )
        await self.page.locator(_HEADLINE_VALUE).first.wait_for(timeout=self.wait_ms)

    async def interact(self, step: Interaction) -> tuple[float, float]:
        """Do ``step``; (ms until its result is shown, ms until the page has settled).

        Timed in the page, from the input event's timestamp to the first check that saw the
        result (checks run every 20 ms): what the visitor waits for. Finding the element first,
        which Playwright does by the accessibility tree and a person does by eye, is not timed.
        """
        page = self.page
        before = page.url
        title = step.detail if step.kind == "page" else None
        if step.kind == "slider":
            target = page.get_by_role("slider", name=re.compile("^" + re.escape(step.target)))
            await target.focus(timeout=self.wait_ms)
        elif step.kind == "card":
            target = page.locator(f".st-key-lab-card-{step.target} button")
        else:
            target = page.locator('[data-testid="stSidebarNav"] a', has_text=step.target)
        await target.scroll_into_view_if_needed(timeout=self.wait_ms)
        await page.evaluate(_RESET_CLOCK_JS)
        if step.kind == "slider":
            await target.press(step.detail, timeout=self.wait_ms)
        else:
            await target.click(timeout=self.wait_ms)
        await page.wait_for_function(
            _SHOWN_JS, arg=[before, title], timeout=self.wait_ms, polling=20
        )
        await page.wait_for_function(
            _SETTLED_JS, arg=[before, title], timeout=self.wait_ms, polling=20
        )
        input_at, shown_at, settled_at = await page.evaluate(_CLOCK_JS)
        if input_at is None or shown_at is None:
            raise VisitError(f"browser {self.session}: {step} left no input or result time")
        self.tally.exception_elements += await page.locator('[data-testid="stException"]').count()
        return shown_at - input_at, settled_at - input_at

    async def close(self) -> None:
        if self.context is not None:
            await self.context.close()

    def _watch(self, page: Page) -> None:
        tally, session = self.tally, self.session

        def on_console(message) -> None:
            if message.type == "error":
                tally.console_errors.append(f"browser {session}: {message.text[:200]}")

        def on_request(request) -> None:
            url = urlparse(request.url)
            if url.scheme in {"http", "https", "ws", "wss"} and url.hostname not in LOCAL_HOSTS:
                tally.outbound.add(request.url[:120])

        page.on("console", on_console)
        page.on("pageerror", lambda error: tally.page_errors.append(f"browser {session}: {error}"))
        page.on("request", on_request)


class VisitError(Exception):
    """A visit did not show an interaction's result (page or server messages)."""


class MessageCache:
    """The browser's cache of large ForwardMsgs, as Streamlit's frontend keeps it.

    A message the server marks ``cacheable`` (a new element of at least
    ``global.minCachedMessageSize``, 10 KB: the diagram, a chart) is kept by its hash. Each rerun
    request lists the kept hashes, and the server sends a reference instead of a kept message it
    would send again. After each run a message not sent (or referred to) in the last
    ``max_age`` runs is dropped; a fragment's run ages only that fragment's messages.
    """

    def __init__(self) -> None:
        self.max_age = 2  # the server's new_session says its own
        self.runs = 0
        self.kept: dict[str, tuple[int, bytes, str]] = {}  # hash -> (run, message, fragment)

    def hashes(self) -> list[str]:
        return list(self.kept)

    def resolve(self, reply: ForwardMsg, raw: bytes) -> ForwardMsg:
        """``reply``, or the kept message a reference stands for."""
        if reply.WhichOneof("type") == "ref_hash":
            _, kept_raw, fragment = self.kept[reply.ref_hash]
            self.kept[reply.ref_hash] = (self.runs, kept_raw, fragment)
            return ForwardMsg.FromString(kept_raw)
        if reply.metadata.cacheable and reply.hash:
            self.kept[reply.hash] = (self.runs, raw, reply.delta.fragment_id)
        return reply

    def run_finished(self, fragment_id: str) -> None:
        self.runs += 1
        for key, (run, _, fragment) in list(self.kept.items()):
            if fragment_id and fragment != fragment_id:
                continue
            if self.runs - run > self.max_age:
                del self.kept[key]


class ProtocolVisitor:
    """One visitor speaking Streamlit's websocket protocol: the server's work, no rendering.

    It sends what the browser sends for the same interaction (a ``rerun_script`` BackMsg with the
    changed widget's new value, or another page's script hash, and the hashes of the large
    messages it keeps, as a browser does) and reads the run's ForwardMsgs, keeping the latest
    proto of every widget so the next step can move it from where it is.
    """

    kind = "protocol"

    def __init__(self, port: int, session: int, tally: Tally, wait_s: float):
        self.url = f"ws://127.0.0.1:{port}/_stcore/stream"
        self.origin = f"http://127.0.0.1:{port}"
        self.session, self.tally, self.wait_s = session, tally, wait_s
        self.socket: ClientConnection | None = None
        self.widgets: dict[str, Any] = {}  # label and widget key -> latest widget proto
        # What the browser keeps and sends with every rerun: each drawn widget's value.
        self.shown: dict[str, WidgetState] = {}  # widget id -> the value it shows
        self.drawn: list[str] = []  # widget ids the page holds, from the runs so far
        self._drawing: list[str] = []
        self.fragments: dict[str, str] = {}  # widget id -> the fragment drawing it, if any
        self.pages: dict[str, str] = {}  # page title -> page script hash
        self.page_hash = ""
        self.query_string = ""
        self.session_id = ""
        self.cache = MessageCache()

    async def load(self) -> None:
        await self._connect()
        await self._run(None, "", _title_is("System Design Lab"))

    async def _connect(self) -> None:
        # A new session, as a reload is: the browser then holds no widget and sends no value,
        # and keeps no message (the server sends each large one in full again).
        for held in (self.widgets, self.fragments, self.shown):
            held.clear()
        self.drawn = []
        self.cache = MessageCache()
        self.socket = await connect(
            self.url, subprotocols=["streamlit"], origin=self.origin, max_size=None,
            open_timeout=self.wait_s,
        )  # fmt: skip

    async def interact(self, step: Interaction) -> tuple[float, float]:
        try:
            if step.kind == "page":
                return await self._run(None, self.pages[step.target], _title_is(step.detail))
            if step.kind == "card":
                card = self.widgets[f"lab.card.{step.target}"]
                state = WidgetState(id=card.id, trigger_value=True)
            else:
                state = self._moved_slider(step.target, +1 if step.detail == "ArrowRight" else -1)
        except (KeyError, StopIteration, ValueError) as error:
            raise VisitError(f"{step} is not on the page: {error!r}") from error
        return await self._run(state, self.page_hash, _is_headline_p99)

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()

    def _moved_slider(self, label: str, direction: int) -> WidgetState:
        proto = next(p for name, p in self.widgets.items() if name.startswith(label))
        state = WidgetState(id=proto.id)
        shown = self.shown[proto.id]
        if proto.options:  # a select slider: its value is the chosen option's label
            options = list(proto.options)
            index = options.index(shown.string_array_value.data[0]) + direction
            state.string_array_value.data.append(options[min(max(index, 0), len(options) - 1)])
        else:
            value = shown.double_array_value.data[0] + direction * proto.step
            state.double_array_value.data.append(min(max(value, proto.min), proto.max))
        return state

    async def _run(
        self, state: WidgetState | None, page_hash: str, is_result
    ) -> tuple[float, float]:
        """Ask for a rerun; (ms until the result's delta arrived, ms until the run finished).

        A widget inside a fragment reruns that fragment alone, as the browser asks."""
        message = BackMsg()
        message.rerun_script.query_string = self.query_string
        message.rerun_script.page_script_hash = page_hash
        # As the browser: every widget on the page with the value it shows, the changed one new.
        states = {i: self.shown[i] for i in self.drawn if i in self.shown}
        if state is not None:
            if state.WhichOneof("value") != "trigger_value":  # a click lasts one run
                self.shown[state.id] = state
            states[state.id] = state
            message.rerun_script.fragment_id = self.fragments.get(state.id, "")
        message.rerun_script.widget_states.widgets.extend(states.values())
        self._drawing = []
        message.rerun_script.cached_message_hashes.extend(self.cache.hashes())
        started = time.perf_counter()
        await self.socket.send(message.SerializeToString())
        shown_ms = None
        while True:
            raw = await asyncio.wait_for(self.socket.recv(), self.wait_s)
            reply = self.cache.resolve(ForwardMsg.FromString(raw), raw)
            kind = reply.WhichOneof("type")
            if kind == "new_session":
                self.cache.max_age = reply.new_session.config.max_cached_message_age
                self.pages = {p.page_name: p.page_script_hash for p in reply.new_session.app_pages}
                self.page_hash = reply.new_session.page_script_hash
                self.session_id = reply.new_session.initialize.session_id
            elif kind == "navigation":
                self.pages = {p.page_name: p.page_script_hash for p in reply.navigation.app_pages}
                self.page_hash = reply.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = reply.page_info_changed.query_string
            elif kind == "delta" and reply.delta.WhichOneof("type") == "new_element":
                element = reply.delta.new_element
                self._remember(element, reply.delta.fragment_id)
                if shown_ms is None and is_result(element):
                    shown_ms = (time.perf_counter() - started) * 1000
            elif kind == "script_finished":
                self.cache.run_finished(message.rerun_script.fragment_id)
                # A fragment's run redraws its own widgets; the rest of the page stays.
                kept = self.drawn if message.rerun_script.fragment_id else []
                self.drawn = list(dict.fromkeys([*kept, *self._drawing]))
                if shown_ms is None:
                    raise VisitError(f"protocol {self.session}: the run drew no result")
                return shown_ms, (time.perf_counter() - started) * 1000

    def _remember(self, element, fragment_id: str = "") -> None:
        kind = element.WhichOneof("type")
        if kind == "exception":
            self.tally.exception_elements += 1
            self.tally.page_errors.append(f"protocol {self.session}: {element.exception.message}")
            return
        proto = getattr(element, kind)
        widget_id = getattr(proto, "id", "")
        if widget_id:
            self._drawing.append(widget_id)
            shown = shown_state(kind, proto)
            if shown is not None and (
                getattr(proto, "set_value", False) or widget_id not in self.shown
            ):
                self.shown[widget_id] = shown
            self.fragments[widget_id] = fragment_id
            # "$$ID-<hash>-<key>": remembered by its key too, e.g. lab.card.gpu-autoscale.
            self.widgets[widget_id.split("-", 2)[-1]] = proto
            if getattr(proto, "label", ""):
                self.widgets[proto.label] = proto


def shown_state(kind: str, proto) -> WidgetState | None:
    """The value a browser keeps for a widget the server has just drawn: the one the run set, if
    it set one, else the widget's default; None for a widget without a lasting value (a button)
    or one the load test does not move."""
    state = WidgetState(id=proto.id)
    if kind == "slider" and proto.options:  # a select slider: the chosen options' labels
        chosen = [proto.options[int(index)] for index in proto.default]
        labels = proto.raw_value if proto.set_value else chosen
        state.string_array_value.data.extend(labels)
    elif kind == "slider":
        state.double_array_value.data.extend(proto.value if proto.set_value else proto.default)
    elif kind == "checkbox":
        state.bool_value = proto.value if proto.set_value else proto.default
    elif kind in ("selectbox", "radio") and (proto.set_value or proto.HasField("default")):
        state.string_value = proto.raw_value if proto.set_value else proto.options[proto.default]
    elif kind == "file_uploader":  # nothing uploaded
        state.file_uploader_state_value.SetInParent()
    else:
        return None
    return state


def expensive_workload(rng: random.Random, page: str) -> Workload:
    """A workload no visitor has asked for, among the most expensive of ``page``.

    Lab: an unbatched fleet at utilization 0.99–0.9935, where the queueing model solves a large
    M/D/c chain exactly (the state space and the dense solve grow as utilization nears 1) and
    the simulation runs near saturation. Heatmaps: an unbatched fleet with a model latency of
    its own (every grid, and the grid simulation, is new).
    """
    rate = NUMERIC_BY_NAME["rate_rps"]
    latency_ms = round(rng.uniform(8.0, 60.0), 4)
    base = Workload(dynamic_batching=False, model_latency_ms=latency_ms)
    if page == "heatmaps":
        return base
    base = base.with_changes(replicas=rng.randint(1, 8))
    wanted = round(base.capacity_rps * rng.uniform(0.99, 0.9935), 4)
    return base.with_changes(rate_rps=min(max(wanted, rate.minimum), rate.maximum))


class HostileVisitor(ProtocolVisitor):
    """A protocol visitor that loops on the most expensive inputs of every page, never pausing.

    Each Lab or Heatmaps step is a new session opened from a fresh URL (as a reload with an
    edited link is); "verify" presses that Heatmaps session's "Verify with simulation" button.
    Timed until the run has finished (the whole computation).
    """

    kind = "hostile"

    async def attack(self, step: str, rng: random.Random) -> float:
        if step == "verify":
            button = self.widgets.get("heatmap.verify")
            if button is None:
                raise VisitError(f"hostile {self.session}: no Verify button on the page")
            state = WidgetState(id=button.id, trigger_value=True)
            return (await self._run(state, self.page_hash, lambda element: True))[1]
        await self.close()
        await self._connect()
        self.query_string = urlencode(expensive_workload(rng, step).to_strings())
        page_hash = "" if step == "lab" else self.pages["Heatmaps"]
        title = "System Design Lab" if step == "lab" else "Heatmaps"
        return (await self._run(None, page_hash, _title_is(title)))[1]


async def attack(visitor: HostileVisitor, loaded_all: asyncio.Barrier, args, tally) -> None:
    """Load, wait for every visitor to have loaded, then loop on expensive steps until stopped."""
    rng = random.Random(f"{args.seed}-hostile-{visitor.session}")
    failures = (TimeoutError, VisitError, WebSocketException, OSError, KeyError)
    try:
        try:
            await visitor.load()
            loaded = True
        except failures as error:
            tally.hostile_failures.append(f"hostile {visitor.session} never loaded: {error!s:.100}")
            loaded = False
        await loaded_all.wait()
        while loaded and not tally.stopping:
            for step in HOSTILE_STEPS:
                try:
                    settled_ms = await visitor.attack(step, rng)
                except failures as error:
                    tally.hostile_failures.append(
                        f"hostile {visitor.session} {step}: {error!s:.100}"
                    )
                    continue
                tally.latencies_ms[("hostile", step)].append(settled_ms)
    finally:
        await visitor.close()


def _fresh(rng: random.Random, low: float, high: float) -> str:
    """A value no visitor has asked for (a cache miss), as URL text."""
    return f"{rng.uniform(low, high):.4f}"


class PageVisitor(ProtocolVisitor):
    """A protocol visitor that opens pages from URLs and presses their buttons, timing each
    press until its run has finished (the whole computation)."""

    async def open(self, query: dict[str, str], title: str) -> float:
        """A new session on page ``title`` from a URL with ``query``, as a reload is."""
        await self.close()
        await self._connect()
        self.query_string = urlencode(query)
        page_hash = self.pages[title] if title != "System Design Lab" else ""
        return (await self._run(None, page_hash, _title_is(title)))[1]

    async def press(self, key: str) -> float:
        button = self.widgets.get(key)
        if button is None:
            raise VisitError(f"{self.kind} {self.session}: no {key} on the page")
        state = WidgetState(id=button.id, trigger_value=True)
        return (await self._run(state, self.page_hash, lambda element: True))[1]

    async def set_text(self, key: str, text: str) -> float:
        state = WidgetState(id=self.widgets[key].id, string_value=text)
        return (await self._run(state, self.page_hash, lambda element: True))[1]

    async def reply_of(self, message: BackMsg, kind: str):
        """Send ``message`` and read until a ForwardMsg of ``kind`` arrives; its payload."""
        await self.socket.send(message.SerializeToString())
        while True:
            reply = ForwardMsg()
            reply.ParseFromString(await asyncio.wait_for(self.socket.recv(), self.wait_s))
            if reply.WhichOneof("type") == kind:
                return getattr(reply, kind)


def heaviest_verify_workload(rng: random.Random) -> Workload:
    """The Heatmaps' Verify at its most expensive: the most hosted models (500, each replica's
    cache of models simulated) on the default batched round-robin fleet, with a model latency
    of its own so that the grid misses every cache (the slowest of the fleets compared in
    docs/performance.md)."""
    return Workload(models_hosted=500, model_latency_ms=round(rng.uniform(8.0, 60.0), 4))


OVERLOAD_PRESSES = (
    ("overload-check", "overload.simulate"),
    ("overload-burst", "overload.burst.simulate"),
)
"""The Overload page's two buttons that simulate, as (what is timed, widget key)."""


def hostile_overload_query(rng: random.Random) -> dict[str, str]:
    """The Overload page at its costliest: the Lab's rate 12-60x the default fleet's capacity
    (new each time, so every section misses its cache), retries at their most and unbudgeted,
    the longest queues and no deadline, and the longest, largest burst."""
    return {"rate_rps": _fresh(rng, 100_000, 500_000), "overload.queue_limit": "100000",
            "overload.deadline_ms": "0", "overload.max_retries": "10",
            "overload.retry_budget_percent": "0", "burst.base_multiple": "0.95",
            "burst.burst_multiple": "5", "burst.burst_s": "30", "burst.after_s": "120"}  # fmt: skip


class PageAttacker(PageVisitor):
    """A hostile visitor of the pages mix: loops, never pausing, on one of ``PAGE_ATTACKS``.

    - timeline: the Timeline page from a fresh URL at the check's largest size (50,000 req/s
      for 600 s through a random balancer: the issue's URL, rate varied) and its "Simulate this
      timeline";
    - canary: the Timeline page's canary Steps text, alternately a fresh 120-character list (the
      field's limit) and a forged one 0.1 MB under the websocket's limit;
    - report: the Lab from a fresh URL, then its HTML report three times, as the download
      button asks for it (Streamlit's deferred-file request, then the file itself);
    - verify-heaviest: the Heatmaps page from a fresh URL of ``heaviest_verify_workload`` and
      its "Verify with simulation";
    - upload: the Timeline's trace uploader, 1 MB at a time through Streamlit's upload endpoint
      (with the session's XSRF cookie, as the browser sends it), each followed by a run that
      holds the new file; two more 1 MB files under ids no widget names ride along each time;
    - overload: the Overload page from a fresh URL of ``hostile_overload_query``, then its "Check
      with simulation" and "Simulate the burst".
    """

    kind = "hostile"

    def __init__(self, port: int, session: int, tally: Tally, wait_s: float, role: str):
        super().__init__(port, session, tally, wait_s)
        self.role = role
        self.http = None

    async def attack_once(self, rng: random.Random) -> list[tuple[str, float]]:
        """One round of this visitor's attack: (what, ms) for each timed press."""
        if self.role == "timeline":
            query = {"rate_rps": _fresh(rng, 49_900, 50_000), "lb_policy": "random",
                     "tl.traffic": "constant", "tl.duration_s": "600"}  # fmt: skip
            await self.open(query, "Timeline")
            return [("timeline", await self.press("timeline.check"))]
        if self.role == "canary":
            if "canary.steps" not in self.widgets:
                await self.open({}, "Timeline")
            shares = sorted(rng.uniform(0.1, 99.0) for _ in range(9))
            text = (", ".join(f"{share:.9f}" for share in shares) + ", 100")[:120]
            valid = await self.set_text("canary.steps", text)
            flood = await self.set_text("canary.steps", CANARY_FLOOD)
            return [("canary", valid), ("canary-flood", flood)]
        if self.role == "report":
            await self.open({"rate_rps": _fresh(rng, 100, 900)}, "System Design Lab")
            return [("report", await self.fetch_report()) for _ in range(3)]
        if self.role == "verify-heaviest":
            query = heaviest_verify_workload(rng).to_strings()
            await self.open(query, "Heatmaps")
            return [("verify-heaviest", await self.press("heatmap.verify"))]
        if self.role == "overload":
            opened = await self.open(hostile_overload_query(rng), "Overload")
            return [("overload-open", opened)] + [
                (what, await self.press(key)) for what, key in OVERLOAD_PRESSES
            ]
        return [("upload", await self.upload_once(rng))]

    async def fetch_report(self) -> float:
        button = self.widgets.get("lab.report_html")
        if button is None or not button.deferred_file_id:
            raise VisitError(f"hostile {self.session}: no deferred HTML report on the Lab")
        started = time.perf_counter()
        message = BackMsg()
        message.backend_operation_request.request_id = f"r{random.random()}"
        message.backend_operation_request.session_id = self.session_id
        message.backend_operation_request.deferred_file.file_id = button.deferred_file_id
        reply = await self.reply_of(message, "backend_operation_response")
        if reply.error_msg:
            raise VisitError(f"hostile {self.session}: report refused: {reply.error_msg}")
        built_ms = (time.perf_counter() - started) * 1000
        # A 404 here is a built file dropped before its fetch: sdlab_ui.downloads keeps it for
        # its session, where Streamlit alone drops it at the second end of anyone's run.
        size = await asyncio.to_thread(self._get_bytes, reply.deferred_file.url)
        if size is None:
            self.tally.hostile_failures.append(f"hostile {self.session} report: 404 on fetch")
        elif size < 1_000_000:
            raise VisitError(f"hostile {self.session}: a report of {size} bytes")
        return built_ms

    def _get_bytes(self, url: str) -> int | None:
        if url.startswith("/"):
            url = self.origin + url
        try:
            with urllib.request.urlopen(url, timeout=self.wait_s) as response:
                return len(response.read())
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    async def upload_once(self, rng: random.Random) -> float:
        if "timeline.upload" not in self.widgets:
            await self.open({"tl.traffic": "uploaded"}, "Timeline")
            self.http = await asyncio.to_thread(self._xsrf_session)
        started = time.perf_counter()
        message = BackMsg()
        request = message.file_urls_request
        request.request_id = f"u{rng.random()}"
        request.session_id = self.session_id
        request.file_names.extend(["trace.csv", "a.csv", "b.csv"])
        reply = await self.reply_of(message, "file_urls_response")
        if reply.error_msg:
            raise VisitError(f"hostile {self.session}: upload URLs refused: {reply.error_msg}")
        body = b"time_s,rate_rps\n0,100\n1,oops\n" + b"#" * (UPLOAD_BYTES - 30)
        for urls in reply.file_urls:
            await asyncio.to_thread(self._put, urls.upload_url, body)
        held = reply.file_urls[0]
        state = WidgetState(id=self.widgets["timeline.upload"].id)
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.file_id, info.name, info.size = held.file_id, "trace.csv", len(body)
        info.file_urls.CopyFrom(held)
        await self._run(state, self.page_hash, lambda element: True)
        return (time.perf_counter() - started) * 1000

    def _xsrf_session(self):
        import requests

        http = requests.Session()
        # The health check sets the XSRF cookie, as the browser's first request does.
        http.get(self.origin + "/_stcore/health", timeout=self.wait_s).raise_for_status()
        return http

    def _put(self, url: str, body: bytes) -> None:
        if url.startswith("/"):
            url = self.origin + url
        token = self.http.cookies.get("_streamlit_xsrf", "")
        response = self.http.put(
            url, files={"file": ("trace.csv", body, "text/csv")},
            headers={"X-Xsrftoken": token}, timeout=self.wait_s,
        )  # fmt: skip
        if response.status_code >= 400:
            raise VisitError(f"upload refused: {response.status_code} {response.text[:80]}")


class LegitPresser(PageVisitor):
    """A visitor who now and then presses an expensive button with inputs of their own:
    "Simulate this timeline" at 2,000–2,100 req/s for 5 minutes (~600,000 requests), then the
    Heatmaps' "Verify with simulation" of the default fleet with a model latency of their own,
    pausing ``--think-s`` (at least 2 s) between presses. Timed from the press to the end of
    its run: the wait for a turn in the budget's heavy lane and the computation."""

    kind = "presser"

    async def press_once(self, rng: random.Random, turn: int) -> tuple[str, float]:
        if turn % 2 == 0:
            query = {"rate_rps": _fresh(rng, 2000, 2100), "lb_policy": "random",
                     "tl.traffic": "constant", "tl.duration_s": "300"}  # fmt: skip
            await self.open(query, "Timeline")
            return "simulate", await self.press("timeline.check")
        query = Workload(model_latency_ms=round(rng.uniform(15.0, 30.0), 4)).to_strings()
        await self.open(query, "Heatmaps")
        return "verify", await self.press("heatmap.verify")


async def press(visitor: LegitPresser, loaded_all: asyncio.Barrier, args, tally) -> None:
    """Load, wait for every visitor, then press expensive buttons now and then until stopped."""
    rng = random.Random(f"{args.seed}-presser-{visitor.session}")
    failures = (TimeoutError, VisitError, WebSocketException, OSError, KeyError)
    try:
        try:
            await visitor.load()
            loaded = True
        except failures as error:
            tally.timeouts.append(f"presser {visitor.session} never loaded: {error!s:.100}")
            loaded = False
        await loaded_all.wait()
        turn = visitor.session  # pressers start on different buttons: both kinds get timed
        while loaded and not tally.stopping:
            await asyncio.sleep(max(2.0, think_time_s(rng, max(args.think_s, 2.0))))
            if tally.stopping:
                break
            try:
                what, ms = await visitor.press_once(rng, turn)
            except failures as error:
                tally.timeouts.append(f"presser {visitor.session} turn {turn}: {error!s:.100}")
            else:
                tally.latencies_ms[("presser", what)].append(ms)
            turn += 1
    finally:
        await visitor.close()


async def attack_pages(visitor: PageAttacker, loaded_all: asyncio.Barrier, args, tally) -> None:
    """As ``attack``, on the pages mix: loop on this visitor's role until stopped."""
    rng = random.Random(f"{args.seed}-hostile-{visitor.session}")
    failures = (TimeoutError, VisitError, WebSocketException, OSError, KeyError)
    try:
        try:
            await visitor.load()
            loaded = True
        except failures as error:
            tally.hostile_failures.append(f"hostile {visitor.session} never loaded: {error!s:.100}")
            loaded = False
        await loaded_all.wait()
        while loaded and not tally.stopping:
            try:
                timed = await visitor.attack_once(rng)
            except failures as error:
                tally.hostile_failures.append(
                    f"hostile {visitor.session} {visitor.role}: {error!s:.100}"
                )
                visitor.widgets.clear()  # start the role again from a fresh session
                await asyncio.sleep(0.5)
                continue
            for what, ms in timed:
                tally.latencies_ms[("hostile", what)].append(ms)
    finally:
        await visitor.close()


def _title_is(title: str):
    """A page's title: st.title's heading, or a Markdown element holding it as a heading (the
    Lab's, after its stylesheet)."""

    def is_title(element) -> bool:
        kind = element.WhichOneof("type")
        if kind == "markdown":
            return any(
                line.startswith("# ") and title in line
                for line in element.markdown.body.splitlines()
            )
        return kind == "heading" and title in element.heading.body

    return is_title


def _is_headline_p99(element) -> bool:
    kind = element.WhichOneof("type")
    if kind == "markdown":  # the Lab's headline element
        return 'data-label="p99' in element.markdown.body
    return kind == "metric" and element.metric.label.startswith("p99")  # the bare page's


async def visit(visitor, loaded_all: asyncio.Barrier, args, tally: Tally) -> None:
    """Load, wait for every visitor to have loaded, then interact (pausing to read if asked)."""
    rng = random.Random(f"{args.seed}-{visitor.kind}-{visitor.session}")
    failures = (PlaywrightTimeout, TimeoutError, VisitError, WebSocketException, OSError)
    try:
        try:
            started = time.perf_counter()
            await visitor.load()
            tally.first_load_ms[visitor.kind].append((time.perf_counter() - started) * 1000)
            loaded = True
        except failures as error:
            tally.timeouts.append(f"{visitor.kind} {visitor.session} never loaded: {error!s:.100}")
            loaded = False
        await loaded_all.wait()
        if not loaded:
            return
        for index in range(args.interactions):
            await asyncio.sleep(think_time_s(rng, args.think_s))
            step = ROUND[index % len(ROUND)]
            try:
                shown_ms, settled_ms = await visitor.interact(step)
            except failures as error:
                tally.timeouts.append(
                    f"{visitor.kind} {visitor.session} step {index}: {error!s:.100}"
                )
                continue
            tally.latencies_ms[(visitor.kind, step.kind)].append(shown_ms)
            tally.settled_ms[visitor.kind].append(settled_ms)
            if visitor.kind == "browser":
                tally.browser_steps.append((shown_ms, index, f"{step.kind} {step.target}"))
        tally.sessions_finished += 1
    finally:
        await visitor.close()


async def drive(base_url: str, port: int, args, server_pid: int, tally: Tally) -> Tally:
    server, me = psutil.Process(server_pid), psutil.Process()
    browsers = min(args.browsers, args.sessions)
    async with async_playwright() as playwright:
        browser = None
        if browsers:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        visitors = [
            BrowserVisitor(browser, base_url, n, tally, args.wait_s)
            if n < browsers
            else ProtocolVisitor(port, n, tally, args.wait_s)
            for n in range(args.sessions)
        ]
        first = args.sessions
        if args.hostile_mix == "classic":
            hostiles = [HostileVisitor(port, first + n, tally, args.wait_s)
                        for n in range(args.hostile)]  # fmt: skip
        else:
            hostiles = [
                PageAttacker(
                    port, first + n, tally, args.wait_s, PAGE_ATTACKS[n % len(PAGE_ATTACKS)]
                )
                for n in range(args.hostile)
            ]
        first += args.hostile
        pressers = [LegitPresser(port, first + n, tally, args.wait_s) for n in range(args.pressers)]
        loaded_all = asyncio.Barrier(len(visitors) + len(hostiles) + len(pressers))
        samplers = (CpuSampler(server), CpuSampler(me, "chrom"))
        for sampler in samplers:
            sampler.start()
        loop = attack if args.hostile_mix == "classic" else attack_pages
        attacks = [asyncio.create_task(loop(h, loaded_all, args, tally)) for h in hostiles]
        presses = [asyncio.create_task(press(v, loaded_all, args, tally)) for v in pressers]
        try:
            await asyncio.gather(*(visit(v, loaded_all, args, tally) for v in visitors))
        finally:
            tally.stopping = True  # the hostile visitors stop when the normal ones are done
            for task in attacks:
                task.cancel()
            # A press under way is timed to its end (a starved one must not go unseen); none new.
            if presses:
                _, unfinished = await asyncio.wait(presses, timeout=args.wait_s)
                for task in unfinished:
                    tally.timeouts.append(f"a legitimate press unfinished {args.wait_s:.0f} s "
                                          "after the normal visitors were done")  # fmt: skip
                    task.cancel()
            if attacks or presses:
                await asyncio.wait([*attacks, *presses], timeout=args.wait_s)
            tally.server_cpu_s, tally.browser_cpu_s = (sampler.stop() for sampler in samplers)
            if browser is not None:
                await browser.close()
    return tally


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(
    tally: Tally, rss: RssSampler, rss_start_mb: float, args, wall_s: float, after_mb=None
) -> bool:
    peak = max(rss.samples_mb, default=float("nan"))
    errors = tally.exception_elements + len(tally.console_errors) + len(tally.page_errors)
    browsers = min(args.browsers, args.sessions)
    hostile = f" + {args.hostile} hostile" if args.hostile else ""
    print(f"\nsdlab load test ({args.app} app): {args.sessions} sessions ({browsers} browser, "
          f"{args.sessions - browsers} protocol){hostile} x {args.interactions} interactions, "
          f"think time {args.think_s:g} s mean, {psutil.cpu_count()} CPUs, "
          f"{wall_s:.0f} s wall")  # fmt: skip
    print(f"  sessions finished          {tally.sessions_finished}/{args.sessions}")
    p95_met = True
    target_rss_mb = HOSTILE_TARGET_RSS_MB[args.hostile_mix] if args.hostile else TARGET_RSS_MB
    for kind in ("browser", "protocol"):
        every = [v for (k, _), values in tally.latencies_ms.items() if k == kind for v in values]
        if not every:
            continue
        p95 = percentile(every, 0.95)
        target_p95_ms = HOSTILE_TARGET_P95_MS if args.hostile else TARGET_P95_MS[kind]
        p95_met = p95_met and p95 <= target_p95_ms
        loads = tally.first_load_ms[kind]
        print(f"  {kind} sessions: {len(every)} interactions measured")
        print(f"    first load               p50 {percentile(loads, 0.5):,.0f} ms, "
              f"max {max(loads):,.0f} ms (all at once, before the interactions)")  # fmt: skip
        print(f"    interaction -> shown     p50 {percentile(every, 0.5):,.0f} ms, "
              f"p95 {p95:,.0f} ms, max {max(every):,.0f} ms "
              f"(target p95 <= {target_p95_ms:.0f} ms)")  # fmt: skip
        for (k, step), values in sorted(tally.latencies_ms.items()):
            if k == kind:
                print(f"      {step:<8} n={len(values):<4} p50 {percentile(values, 0.5):,.0f} ms, "
                      f"p95 {percentile(values, 0.95):,.0f} ms")  # fmt: skip
        if kind == "browser" and tally.browser_steps:  # a p95 of 40 steps is its 3rd slowest
            slowest = sorted(tally.browser_steps, reverse=True)[:5]
            print("      slowest  " + ", ".join(f"{ms:,.0f} ms (step {index + 1}, {what})"
                                             for ms, index, what in slowest))  # fmt: skip
        settled = tally.settled_ms[kind]
        print(f"    interaction -> settled   p50 {percentile(settled, 0.5):,.0f} ms, "
              f"p95 {percentile(settled, 0.95):,.0f} ms (the run over, nothing stale)")  # fmt: skip
    if args.hostile:
        print(f"  hostile sessions: {args.hostile}, looping until the others were done "
              "(time until the run finished; no target)")  # fmt: skip
        steps = sorted({step for (k, step) in tally.latencies_ms if k == "hostile"})
        for step in steps:
            values = tally.latencies_ms.get(("hostile", step), [])
            if values:
                p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
                print(f"      {step:<8} n={len(values):<4} p50 {p50:,.0f} ms, "
                      f"p95 {p95:,.0f} ms, max {max(values):,.0f} ms")  # fmt: skip
        print(f"    failed hostile steps     {len(tally.hostile_failures)}")
        kinds: dict[str, list[str]] = defaultdict(list)
        for line in tally.hostile_failures:
            kinds[line.split(":")[0]].append(line)
        for _, lines in sorted(kinds.items()):
            print(f"      {len(lines)} x {lines[0][:140]}")
    presses = [v for (k, _), values in tally.latencies_ms.items() if k == "presser" for v in values]
    presses_met = True
    if args.pressers:
        p95 = percentile(presses, 0.95)
        presses_met = bool(presses) and p95 <= PRESS_TARGET_P95_MS
        print(f"  legitimate presses: {args.pressers} visitors, {len(presses)} presses, p95 "
              f"{p95:,.0f} ms, max {max(presses, default=float('nan')):,.0f} ms "
              f"(target p95 <= {PRESS_TARGET_P95_MS:,.0f} ms)")  # fmt: skip
        for (k, step), values in sorted(tally.latencies_ms.items()):
            if k == "presser":
                print(f"      {step:<8} n={len(values):<4} p50 {percentile(values, 0.5):,.0f} ms, "
                      f"p95 {percentile(values, 0.95):,.0f} ms")  # fmt: skip
    measured = sum(len(v) for (k, _), v in tally.latencies_ms.items()
                   if k not in ("hostile", "presser"))  # fmt: skip
    done = max(measured + tally.sessions_finished, 1)  # interactions plus first loads
    print(f"  timeouts                   {len(tally.timeouts)}")
    print(f"  CPU used during the run    server {tally.server_cpu_s:,.1f} s, Chromium "
          f"{tally.browser_cpu_s:,.1f} s (per interaction or first load: server "
          f"{1000 * tally.server_cpu_s / done:,.0f} ms, Chromium "
          f"{1000 * tally.browser_cpu_s / done:,.0f} ms; {wall_s * psutil.cpu_count():,.0f} "
          "core-seconds available)")  # fmt: skip
    print(f"  errors in pages            {errors} (exception elements "
          f"{tally.exception_elements}, console errors {len(tally.console_errors)}, "
          f"page errors {len(tally.page_errors)}; target 0)")  # fmt: skip
    for line in (tally.console_errors + tally.page_errors)[:5]:
        print(f"    {line}")
    print(f"  outbound requests          {len(tally.outbound)} (target 0)")
    for url in sorted(tally.outbound)[:5]:
        print(f"    {url}")
    print(f"  server RSS (with children) start {rss_start_mb:,.0f} MB, peak {peak:,.0f} MB, "
          f"end {rss.samples_mb[-1] if rss.samples_mb else float('nan'):,.0f} MB "
          f"(target peak <= {target_rss_mb:.0f} MB)")  # fmt: skip
    if len(rss.peak_parts_mb) > 1:
        parts = sorted(rss.peak_parts_mb.items(), key=lambda part: -part[1])
        print("    at the peak: " + ", ".join(f"{name} {mb:,.0f} MB" for name, mb in parts))
    after_met = True
    if after_mb is not None:
        after_met = after_mb <= HOSTILE_TARGET_AFTER_MB or args.hostile_mix == "classic"
        print(f"  server RSS {args.after_s:.0f} s after     {after_mb:,.0f} MB (target <= "
              f"{HOSTILE_TARGET_AFTER_MB:.0f} MB in the pages mix)")  # fmt: skip
    for line in tally.timeouts[:5]:
        print(f"    timeout: {line}")
    passed = (
        presses_met
        and after_met
        and errors == 0
        and not tally.outbound
        and not tally.timeouts
        and measured > 0
        and p95_met
        and peak <= target_rss_mb
    )
    print("  verdict                    " + ("all targets met" if passed else "TARGETS MISSED"))
    return passed


# The floor: what the same load costs on a page with the same sidebar, card buttons and a p99
# metric (from the same model call), sent as sdlab sends it (TCP_NODELAY), and nothing else: no
# diagram, chart, tables or simulation.
_BARE_APP = """
import sys
sys.path.insert(0, {root!r})
import streamlit as st
from sdlab_ui import sidebar, state
from sdlab_ui.server import sockets

st.set_page_config(page_title="sdlab bare baseline", layout="wide")
if "sdlab.nodelay" not in st.session_state:
    st.session_state["sdlab.nodelay"] = sockets.ensure_nodelay()
page = st.navigation([
    st.Page({lab!r}, title="Lab", default=True),
    st.Page({heatmaps!r}, title="Heatmaps", url_path="heatmaps"),
])
state.show_notices()
try:
    page.run()
finally:
    sidebar.render()
"""
_BARE_LAB = """
import streamlit as st
from sdlab_model.assessment import evaluate
from sdlab_ui import state
from sdlab_ui.lab import cards
from sdlab_ui.text import ms_text

lab = state.current()
st.title("System Design Lab (bare baseline)")
cards.scenario_cards()
st.metric("p99", ms_text(evaluate(lab.workload, lab.model).p99_ms))
"""
_BARE_HEATMAPS = """
import streamlit as st
from sdlab_ui import state

state.current()
st.title("Heatmaps (bare baseline)")
"""


def bare_app(folder: Path) -> Path:
    """Write the bare baseline app into ``folder``; its entry script."""
    lab, heatmaps = folder / "bare_lab.py", folder / "bare_heatmaps.py"
    lab.write_text(_BARE_LAB, encoding="utf-8")
    heatmaps.write_text(_BARE_HEATMAPS, encoding="utf-8")
    app = folder / "bare_app.py"
    app.write_text(
        _BARE_APP.format(root=str(ROOT), lab=str(lab), heatmaps=str(heatmaps)), encoding="utf-8"
    )
    return app


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--interactions", type=int, default=20)
    parser.add_argument("--browsers", type=int, default=None,
                        help="how many sessions are Chromium contexts (default: all)")  # fmt: skip
    parser.add_argument("--think-s", type=float, default=0.0,
                        help="mean pause between a visitor's interactions (default 0)")  # fmt: skip
    parser.add_argument("--hostile", type=int, default=0,
                        help="hostile visitors added to --sessions (default 0)")  # fmt: skip
    parser.add_argument("--hostile-mix", choices=("pages", "classic"), default="pages",
                        help="pages: the Timeline, canary, report, Verify and upload attacks "
                        "(issue 26); classic: the Lab and Heatmaps loop (issue 13)")  # fmt: skip
    parser.add_argument("--pressers", type=int, default=None,
                        help="visitors pressing Simulate or Verify now and then (default: 2 "
                        "with --hostile, else 0)")  # fmt: skip
    parser.add_argument("--after-s", type=float, default=None,
                        help="keep the server up this long after the run and report its RSS "
                        "(default: 60 with --hostile, else 0)")  # fmt: skip
    parser.add_argument("--app", choices=("sdlab", "bare"), default="sdlab")
    parser.add_argument("--seed", type=int, default=0, help="seeds the think times")
    parser.add_argument("--wait-s", type=float, default=60.0, help="timeout of one wait")
    parser.add_argument("--deadline-s", type=float, default=1200.0, help="the whole run's limit")
    args = parser.parse_args()
    if args.sessions < 1 or args.interactions < 0 or args.think_s < 0 or args.hostile < 0:
        parser.error(
            "--sessions must be at least 1; --interactions, --think-s, --hostile not negative"
        )
    if args.hostile and args.app != "sdlab":
        parser.error("--hostile needs the sdlab app (the bare page has no expensive input)")
    args.browsers = args.sessions if args.browsers is None else max(args.browsers, 0)
    args.pressers = (2 if args.hostile else 0) if args.pressers is None else max(args.pressers, 0)
    args.after_s = (60.0 if args.hostile else 0.0) if args.after_s is None else args.after_s

    port = free_port()
    workdir = Path(tempfile.mkdtemp(prefix="sdlab-load-test-"))
    script = bare_app(workdir) if args.app == "bare" else ROOT / "app.py"
    log_path = workdir / "server.log"
    server = start_server(port, log_path, script)
    rss = None
    try:
        wait_for_health(port, server, timeout_s=120)
        wait_until_warm(port, timeout_s=300)
        rss = RssSampler(server.pid)
        rss_start_mb = rss.rss_mb()
        rss.start()
        started = time.perf_counter()
        tally = Tally()
        try:
            asyncio.run(
                asyncio.wait_for(
                    drive(f"http://127.0.0.1:{port}/", port, args, server.pid, tally),
                    timeout=args.deadline_s,
                )
            )
        except TimeoutError:
            print(f"the run passed its {args.deadline_s:.0f} s deadline and was stopped; so far:")
            report(tally, rss, rss_start_mb, args, time.perf_counter() - started)
            return 2
        wall_s = time.perf_counter() - started
        after_mb = None
        if args.after_s > 0:
            time.sleep(args.after_s)  # every visitor gone: what the server keeps
            after_mb = rss.rss_mb()
        rss.stop()
        return 0 if report(tally, rss, rss_start_mb, args, wall_s, after_mb) else 1
    finally:
        if rss is not None:
            rss.stop()
        stop_server(server)
        print(f"  server log                 {log_path}")


if __name__ == "__main__":
    sys.exit(main())
