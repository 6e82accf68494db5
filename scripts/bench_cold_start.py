#!/usr/bin/env python3
"""A cold server in Chromium: how long until the Lab page is drawn, and until its first p99.

    PYTHONPATH=. python3 scripts/bench_cold_start.py [--runs 3] [--app-dir DIR ...]

Each run starts ``streamlit run app.py`` (as Streamlit Community Cloud does after a deploy or a
wake-up) with numba's cache in a new empty folder (``NUMBA_CACHE_DIR``), so every kernel is
compiled as on a fresh deploy, and a headless system Chromium (launched once, before any
timing) opens the Lab as soon as the server answers its health check. Times are seconds from
the server's start to:

- ``health``: the server answers ``/_stcore/health``;
- ``page``: the Lab's title is on the screen;
- ``p99``: the headline p99 has a value;
- ``compiled``: the page no longer says the kernels are compiling (``-`` where it never said).

Several ``--app-dir`` (checkouts of the app, e.g. a worktree of an older commit) are measured
in turn, run after run, so that the machine's load falls on each alike. ``--numba-cache`` keeps
numba's cache in a folder of your choosing instead (a warm start, once it is filled).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))  # the selectors the browser tests use

from browser_selectors import (  # noqa: E402
    COMPILING_NOTICE,
    HEADLINE_P99,
    LAB_TITLE_JS,
)

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
TIMEOUT_S = 300.0
FIGURES = ("health", "page", "p99", "compiled")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _wait_for_health(url: str, server: subprocess.Popen, started: float) -> float:
    while time.monotonic() - started < TIMEOUT_S:
        if server.poll() is not None:
            raise SystemExit(f"the server at {url} exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return time.monotonic() - started
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"{url} did not answer its health check in {TIMEOUT_S:.0f} s")


def one_run(browser, app_dir: Path, numba_cache: Path | None) -> dict[str, float | None]:
    """One start of the app in ``app_dir`` (with numba's cache in ``numba_cache``, else an empty
    folder): seconds from the server's start to each figure."""
    port, cache_dir = _free_port(), str(numba_cache or tempfile.mkdtemp(prefix="sdlab-numba-"))
    url = f"http://localhost:{port}"
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true"]
    command += ["--server.address=localhost", f"--server.port={port}"]
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": str(app_dir)}
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(TIMEOUT_S * 1000)
    started = time.monotonic()
    server = subprocess.Popen(
        command, cwd=app_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        times: dict[str, float | None] = {"health": _wait_for_health(url, server, started)}
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(LAB_TITLE_JS, polling=50)
        times["page"] = time.monotonic() - started
        page.wait_for_selector(f"{HEADLINE_P99} .sdlab-metric-value")
        times["p99"] = time.monotonic() - started
        said_compiling = page.locator(COMPILING_NOTICE).count() > 0
        page.wait_for_selector(COMPILING_NOTICE, state="detached")
        times["compiled"] = time.monotonic() - started if said_compiling else None
        return times
    finally:
        context.close()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        if numba_cache is None:
            shutil.rmtree(cache_dir, ignore_errors=True)


def _text(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--app-dir", type=Path, action="append", help="default: this checkout")
    parser.add_argument("--numba-cache", type=Path, help="numba's cache folder, kept: a warm start")
    args = parser.parse_args()
    app_dirs = [path.resolve() for path in args.app_dir or [ROOT]]
    from playwright.sync_api import sync_playwright

    results: dict[Path, list[dict[str, float | None]]] = {path: [] for path in app_dirs}
    with sync_playwright() as playwright:
        executable = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else "chromium"
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        for run in range(1, args.runs + 1):
            for app_dir in app_dirs:
                times = one_run(browser, app_dir, args.numba_cache)
                results[app_dir].append(times)
                figures = "  ".join(f"{name} {_text(times[name])} s" for name in FIGURES)
                print(f"run {run}  {app_dir}: {figures}", flush=True)
        browser.close()
    print("\nseconds from the server's start, median [min–max] over the runs:")
    for app_dir, runs in results.items():
        parts = []
        for name in FIGURES:
            values = [times[name] for times in runs if times[name] is not None]
            if values:
                parts.append(
                    f"{name} {statistics.median(values):.1f} [{min(values):.1f}–{max(values):.1f}]"
                )
        print(f"{app_dir}: " + "  ".join(parts))


if __name__ == "__main__":
    main()
