#!/usr/bin/env python3
"""Load test: many visitors at once against a served sdlab, in one real Chromium.

    python3 scripts/load_test.py                    # 20 sessions x 20 interactions
    python3 scripts/load_test.py --sessions 5 --interactions 10

Starts ``streamlit run app.py`` on a free localhost port, opens one Chromium (the system's, at
/usr/bin/chromium; never ``playwright install``) with one browser context per visitor, and has
every visitor do the same mix of interactions at once: slider moves by keyboard, scenario-card
clicks, page switches. It reports:

- the time from each interaction to its updated value being shown, p50/p95/max (target p95 <=
  500 ms). A slider move or card click counts as shown when the URL carries the new state (the
  app writes it on every run, so the run for this interaction has started) and the headline p99
  has been redrawn by that run (its element is no longer marked stale); a page switch when the
  new page's title is drawn by the new run. Beside it, "settled": the whole script run has
  finished and no element anywhere is still stale (every chart and the diagram redrawn), which is
  more than a visitor waits for before seeing the answer;
- where the CPU went: CPU seconds used by the server and by Chromium (all its processes) during
  the run, per interaction; 20 renderers share the machine's cores with the server;
- errors seen in pages: exception elements, console errors and uncaught page errors (target 0);
- requests from the pages to anything other than the local server (target 0: the app makes no
  outbound connection);
- the server's resident memory (RSS, its child processes included), sampled four times a second:
  at start, peak and end (target peak <= 300 MB).

Bounded: every wait has a timeout, the whole run has a deadline (--deadline-s), and the server
and browser are stopped however the run ends. Not part of the test suite: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import psutil
from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeout

ROOT = Path(__file__).resolve().parents[1]
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
TARGET_P95_MS = 500.0
TARGET_RSS_MB = 300.0

# Resolves once the interaction's updated value is on screen: the headline p99 (Lab) or the new
# page's title, redrawn by the run the interaction started (see the module docstring).
_SHOWN_JS = """([before, title]) => {
    const fresh = (element) => element !== null
        && element.closest('[data-stale="true"]') === null;
    if (title !== null) {
        const heading = document.querySelector('h1');
        return heading !== null && heading.textContent.includes(title) && fresh(heading);
    }
    if (location.href === before) return false;
    const p99 = [...document.querySelectorAll('[data-testid="stMetric"]')].find(
        (metric) => metric.textContent.startsWith('p99'));
    return p99 !== undefined && fresh(p99);
}"""

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

    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    settled_ms: list[float] = field(default_factory=list)
    first_load_ms: list[float] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)
    exception_elements: int = 0
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    outbound: set[str] = field(default_factory=set)
    sessions_finished: int = 0
    server_cpu_s: float = 0.0
    browser_cpu_s: float = 0.0


class RssSampler(threading.Thread):
    """Samples the server's RSS (its children included) until stopped."""

    def __init__(self, pid: int, interval_s: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.interval_s = interval_s
        self.samples_mb: list[float] = []
        self._stop_event = threading.Event()

    def rss_mb(self) -> float:
        total = 0
        for process in [self.process, *self.process.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):  # a child that just exited
                total += process.memory_info().rss
        return total / MB

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                self.samples_mb.append(self.rss_mb())
            except psutil.NoSuchProcess:
                return
            self._stop_event.wait(self.interval_s)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


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


def start_server(port: int, log_path: Path) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        # Others commit to this checkout while the test runs; a watcher would reload the model
        # mid-run (sessions then hold objects of the old classes). A deployed app has no edits.
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with log_path.open("w") as log:
        # Its own session, so stopping it stops the processes it started and nothing else.
        return subprocess.Popen(
            command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
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


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)


def watch_page(page: Page, tally: Tally, session: int) -> None:
    def on_console(message) -> None:
        if message.type == "error":
            tally.console_errors.append(f"session {session}: {message.text[:200]}")

    def on_request(request) -> None:
        url = urlparse(request.url)
        if url.scheme in {"http", "https", "ws", "wss"} and url.hostname not in LOCAL_HOSTS:
            tally.outbound.add(request.url[:120])

    page.on("console", on_console)
    page.on("pageerror", lambda error: tally.page_errors.append(f"session {session}: {error}"))
    page.on("request", on_request)


async def perform(page: Page, step: Interaction) -> None:
    if step.kind == "slider":
        slider = page.get_by_role("slider", name=re.compile("^" + re.escape(step.target)))
        await slider.focus()
        await slider.press(step.detail)
    elif step.kind == "card":
        await page.locator(f".st-key-lab-card-{step.target} button").click()
    else:
        nav = page.locator('[data-testid="stSidebarNav"] a', has_text=step.target)
        await nav.click()


async def session_run(
    browser: Browser, base_url: str, session: int, interactions: int, wait_s: float, tally: Tally
) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = await context.new_page()
        watch_page(page, tally, session)
        started = time.perf_counter()
        await page.goto(base_url, timeout=wait_s * 1000)
        await page.wait_for_function(
            _SETTLED_JS, arg=["", "System Design Lab"], timeout=wait_s * 1000, polling=50
        )
        await page.locator('[data-testid="stMetricValue"]').first.wait_for(timeout=wait_s * 1000)
        tally.first_load_ms.append((time.perf_counter() - started) * 1000)
        for index in range(interactions):
            step = ROUND[index % len(ROUND)]
            before = page.url
            title = step.detail if step.kind == "page" else None
            started = time.perf_counter()
            try:
                await perform(page, step)
                await page.wait_for_function(
                    _SHOWN_JS, arg=[before, title], timeout=wait_s * 1000, polling=20
                )
                tally.latencies_ms[step.kind].append((time.perf_counter() - started) * 1000)
                # The next interaction starts from a finished page, as a visitor's would.
                await page.wait_for_function(
                    _SETTLED_JS, arg=[before, title], timeout=wait_s * 1000, polling=50
                )
                tally.settled_ms.append((time.perf_counter() - started) * 1000)
            except PlaywrightTimeout:
                tally.timeouts.append(f"session {session} step {index}: {step}")
                continue
            tally.exception_elements += await page.locator('[data-testid="stException"]').count()
        tally.sessions_finished += 1
    except PlaywrightTimeout as error:
        tally.timeouts.append(f"session {session} never loaded: {str(error)[:100]}")
    finally:
        await context.close()


async def drive(
    base_url: str, sessions: int, interactions: int, wait_s: float, server_pid: int
) -> Tally:
    tally = Tally()
    server, me = psutil.Process(server_pid), psutil.Process()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        samplers = (CpuSampler(server), CpuSampler(me, "chrom"))
        for sampler in samplers:
            sampler.start()
        try:
            await asyncio.gather(
                *(
                    session_run(browser, base_url, n, interactions, wait_s, tally)
                    for n in range(sessions)
                )
            )
        finally:
            tally.server_cpu_s, tally.browser_cpu_s = (sampler.stop() for sampler in samplers)
            await browser.close()
    return tally


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(tally: Tally, rss: RssSampler, rss_start_mb: float, args, wall_s: float) -> bool:
    every = [v for values in tally.latencies_ms.values() for v in values]
    p95 = percentile(every, 0.95)
    peak = max(rss.samples_mb, default=float("nan"))
    errors = tally.exception_elements + len(tally.console_errors) + len(tally.page_errors)
    print(f"\nsdlab load test: {args.sessions} sessions x {args.interactions} interactions, "
          f"one Chromium, {psutil.cpu_count()} CPUs, {wall_s:.0f} s wall")  # fmt: skip
    print(f"  sessions finished          {tally.sessions_finished}/{args.sessions}")
    print(f"  interactions measured      {len(every)} (timeouts: {len(tally.timeouts)})")
    if tally.first_load_ms:
        print(f"  first page load            p50 {statistics.median(tally.first_load_ms):,.0f} ms"
              f", max {max(tally.first_load_ms):,.0f} ms")  # fmt: skip
    print(f"  interaction -> shown       p50 {percentile(every, 0.5):,.0f} ms, "
          f"p95 {p95:,.0f} ms, max {max(every, default=float('nan')):,.0f} ms "
          f"(target p95 <= {TARGET_P95_MS:.0f} ms)")  # fmt: skip
    for kind, values in sorted(tally.latencies_ms.items()):
        print(f"    {kind:<8} n={len(values):<4} p50 {percentile(values, 0.5):,.0f} ms, "
              f"p95 {percentile(values, 0.95):,.0f} ms")  # fmt: skip
    print(
        f"  interaction -> settled     p50 {percentile(tally.settled_ms, 0.5):,.0f} ms, "
        f"p95 {percentile(tally.settled_ms, 0.95):,.0f} ms (whole run over, nothing stale)"
    )
    done = max(len(every) + tally.sessions_finished, 1)  # interactions plus first loads
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
          f"(target peak <= {TARGET_RSS_MB:.0f} MB)")  # fmt: skip
    for line in tally.timeouts[:5]:
        print(f"    timeout: {line}")
    passed = (
        errors == 0
        and not tally.outbound
        and not tally.timeouts
        and p95 <= TARGET_P95_MS
        and peak <= TARGET_RSS_MB
    )
    print("  verdict                    " + ("all targets met" if passed else "TARGETS MISSED"))
    return passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--interactions", type=int, default=20)
    parser.add_argument("--wait-s", type=float, default=60.0, help="timeout of one wait")
    parser.add_argument("--deadline-s", type=float, default=900.0, help="the whole run's limit")
    args = parser.parse_args()

    port = free_port()
    log_path = Path(tempfile.gettempdir()) / f"sdlab-load-test-{port}.log"
    server = start_server(port, log_path)
    rss = None
    try:
        wait_for_health(port, server, timeout_s=120)
        rss = RssSampler(server.pid)
        rss_start_mb = rss.rss_mb()
        rss.start()
        started = time.perf_counter()
        try:
            tally = asyncio.run(
                asyncio.wait_for(
                    drive(f"http://127.0.0.1:{port}/", args.sessions, args.interactions,
                          args.wait_s, server.pid),
                    timeout=args.deadline_s,
                )
            )  # fmt: skip
        except TimeoutError:
            print(f"the run passed its {args.deadline_s:.0f} s deadline and was stopped")
            return 2
        wall_s = time.perf_counter() - started
        rss.stop()
        return 0 if report(tally, rss, rss_start_mb, args, wall_s) else 1
    finally:
        if rss is not None:
            rss.stop()
        stop_server(server)
        print(f"  server log                 {log_path}")


if __name__ == "__main__":
    sys.exit(main())
