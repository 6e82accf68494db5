#!/usr/bin/env python3
"""What one Chromium spends on each step of the load test's round, sdlab against the bare page.

    PYTHONPATH=. python3 scripts/bench_browser_steps.py [--rounds 8] [--app-dir DIR ...] [--bare]

The load test's Chromium goal is mostly the browser's time, not the server's. This starts the
app (each ``--app-dir``, and with ``--bare`` the load test's bare page) with a warm numba
cache, opens each app's Lab in one headless system Chromium on an otherwise idle machine, and
does a page switch to Heatmaps and back, a key on the request-rate slider and two card clicks,
round after round, the apps taking their rounds in turn. For each step it prints the median
over the rounds (the first left out) of:

- ``shown``: ms from the click or key to its result on screen, found as ``scripts/load_test.py``
  finds it;
- ``script``, ``layout``, ``style``, ``tasks``: ms of Chromium's main thread in JavaScript,
  layout, style recalculation and all its tasks from the step until its page has settled
  (CDP ``Performance.getMetrics`` before and after, a quiet second later).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_cold_start import CHROMIUM_ARGS, _free_port, _wait_for_health  # noqa: E402
from browser_selectors import COMPILING_NOTICE  # noqa: E402
from load_test import (  # noqa: E402
    _HEADLINE_VALUE,
    _SETTLED_JS,
    _SHOWN_JS,
    SERVER_ENVIRONMENT,
    bare_app,
)

STEPS = (
    ("page", "Heatmaps", "Heatmaps"),
    ("page", "Lab", "System Design Lab"),
    ("slider", "Request rate", "ArrowRight"),
    ("card", "batching", ""),
    ("card", "single-endpoint", ""),
)
METRICS = {
    "script": "ScriptDuration",
    "layout": "LayoutDuration",
    "style": "RecalcStyleDuration",
    "tasks": "TaskDuration",
}
QUIET_S = 1.0
"""Pause after a step has settled, so that work the page does after it (a chart drawn) counts."""


async def _step(page, kind: str, target: str, detail: str) -> None:
    """Do one step and wait for its result on screen (as the load test does)."""
    before = page.url
    title = detail if kind == "page" else None
    if kind == "page":
        await page.locator('[data-testid="stSidebarNav"] a', has_text=target).click()
    elif kind == "slider":
        slider = page.get_by_role("slider", name=re.compile("^" + re.escape(target)))
        await slider.focus()
        await slider.press(detail)
    else:
        await page.locator(f".st-key-lab-card-{target} button").click()
    await page.wait_for_function(_SHOWN_JS, arg=[before, title], polling=20)


class App:
    """One app's server, started from ``cwd`` (whose ``.streamlit/config.toml`` holds, as in the
    load test), and its page in a context of the shared Chromium, with CDP metrics."""

    def __init__(self, script: Path, cwd: Path) -> None:
        self.script, self.cwd = script, cwd
        self.figures: dict[str, list[dict[str, float]]] = {}
        self.server: subprocess.Popen | None = None
        self.context = None

    async def start(self, browser) -> None:
        port = _free_port()
        url = f"http://localhost:{port}"
        command = [sys.executable, "-m", "streamlit", "run", str(self.script)]
        command += ["--server.headless=true", "--server.address=localhost"]
        command += [f"--server.port={port}", "--server.fileWatcherType=none"]
        env = {**SERVER_ENVIRONMENT, **os.environ, "PYTHONPATH": str(self.cwd)}
        self.server = subprocess.Popen(
            command, cwd=self.cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.context = await browser.new_context(viewport={"width": 1440, "height": 900})
        self.context.set_default_timeout(300_000)
        _wait_for_health(url, self.server, time.monotonic())
        self.page = await self.context.new_page()
        self.cdp = await self.context.new_cdp_session(self.page)
        await self.cdp.send("Performance.enable")
        await self.page.goto(url)
        await self.page.locator(_HEADLINE_VALUE).first.wait_for()
        # The notice is drawn in the headline's run: once that is on screen, wait for it to go.
        await self.page.locator(COMPILING_NOTICE).wait_for(state="detached")

    async def metrics(self) -> dict[str, float]:
        answer = await self.cdp.send("Performance.getMetrics")
        return {m["name"]: m["value"] for m in answer["metrics"]}

    async def one_round(self) -> None:
        """The five steps once, each step's figures kept."""
        page = self.page
        for kind, target, detail in STEPS:
            before_url, start_metrics = page.url, await self.metrics()
            started = time.perf_counter()
            await _step(page, kind, target, detail)
            shown_ms = 1000 * (time.perf_counter() - started)
            title = detail if kind == "page" else None
            await page.wait_for_function(_SETTLED_JS, arg=[before_url, title], polling=50)
            await asyncio.sleep(QUIET_S)
            end_metrics = await self.metrics()
            figure = {"shown": shown_ms}
            for name, metric in METRICS.items():
                figure[name] = 1000 * (end_metrics[metric] - start_metrics[metric])
            self.figures.setdefault(f"{kind} {target}", []).append(figure)

    def medians(self) -> dict[str, dict[str, float]]:
        """Each step's median figures, its first round left out."""
        return {
            step: {name: statistics.median(f[name] for f in runs[1:]) for name in runs[0]}
            for step, runs in self.figures.items()
        }

    async def stop(self) -> None:
        if self.context is not None:
            await self.context.close()
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=10)


async def run(scripts: list[tuple[Path, Path]], rounds: int) -> None:
    """All apps up at once, their rounds taken in turn: a drift on the machine touches each."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        executable = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else "chromium"
        browser = await playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        apps = [App(script, cwd) for script, cwd in scripts]
        try:
            for app in apps:
                await app.start(browser)
            for _ in range(rounds):
                for app in apps:
                    await app.one_round()
            kept = rounds - 1
            for app in apps:
                print(f"{app.script} (ms, median of {kept} round{'s' * (kept != 1)}):")
                for step, figure in app.medians().items():
                    print(f"  {step:<22} " + "  ".join(f"{k} {v:6.1f}" for k, v in figure.items()))
        finally:
            for app in apps:
                await app.stop()
            await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="rounds of the five steps")
    parser.add_argument("--app-dir", type=Path, action="append", help="default: this checkout")
    parser.add_argument("--bare", action="store_true", help="the load test's bare page too")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (the first is left out)")
    scripts = [(path.resolve() / "app.py", path.resolve()) for path in args.app_dir or [ROOT]]
    with tempfile.TemporaryDirectory() as folder:
        if args.bare:
            scripts.append((bare_app(Path(folder)), ROOT))  # with this checkout's config
        asyncio.run(run(scripts, args.rounds))


if __name__ == "__main__":
    main()
