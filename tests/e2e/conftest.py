"""A served app and a system Chromium for the browser tests.

The server is ``python -m streamlit run app.py`` on a free localhost port, polled on
``/_stcore/health``. Chromium is the system one (/usr/bin/chromium or ``chromium`` on PATH);
Playwright's own browser download is never used. Where no Chromium exists the tests skip with
the reason, unless SDLAB_REQUIRE_BROWSER=1 (CI), where they fail instead. Fixture names differ
from pytest-playwright's (``browser``, ``page``) so that plugin, where installed, stays out.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

from sdlab_ui.server import warmup

ROOT = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 60
COMPILE_TIMEOUT_S = 300
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium_path() -> str | None:
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def _missing(reason: str) -> None:
    if os.environ.get("SDLAB_REQUIRE_BROWSER") == "1":
        pytest.fail(f"browser tests are required (SDLAB_REQUIRE_BROWSER=1) but {reason}")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def server_url(tmp_path_factory) -> Iterator[str]:
    """The app served on localhost for the whole session (its log in pytest's temp folder)."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("e2e") / "streamlit-server.log"
    with open(log_path, "w") as log:
        yield from _serve(port, log, log_path)


@pytest.fixture
def cold_server_url(tmp_path) -> Iterator[str]:
    """The app served with numba's cache in an empty folder, as after a deploy: every kernel
    is compiled anew."""
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    log_path = tmp_path / "streamlit-server.log"
    with open(log_path, "w") as log:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        yield from _serve(_free_port(), log, log_path, env, compiled=False)


def _serve(
    port: int, log, log_path: Path, env: dict[str, str] | None = None, compiled: bool = True
) -> Iterator[str]:
    """Serve the app on ``port`` until the fixture ends; with ``compiled``, only once its model's
    kernels are compiled (``_wait_for_compiled_kernels``)."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless=true",
            "--server.address=localhost",
            f"--server.port={port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://localhost:{port}"
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(
                    f"the app did not answer {url}/_stcore/health within "
                    f"{SERVER_START_TIMEOUT_S} s; server log: {log_path}"
                )
            time.sleep(0.3)
        if compiled:
            _wait_for_compiled_kernels(url)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def _wait_for_compiled_kernels(url: str) -> None:
    """Run the app over its websocket until a run no longer says its kernels are being compiled
    (a server's first runs do, for a few seconds with numba's cache warm): the tests then see a
    warm server's pages. ``test_cold_start_browser.py`` tests the cold start."""
    deadline = time.monotonic() + COMPILE_TIMEOUT_S
    request = BackMsg()
    request.rerun_script.query_string = ""
    with connect(
        f"ws://{urlparse(url).netloc}/_stcore/stream", subprotocols=["streamlit"], origin=url
    ) as socket:
        while time.monotonic() < deadline:
            socket.send(request.SerializeToString())
            says_compiling = False
            while True:
                reply = ForwardMsg()
                reply.ParseFromString(socket.recv(timeout=COMPILE_TIMEOUT_S))
                if reply.WhichOneof("type") == "script_finished":
                    break
                says_compiling |= reply.delta.new_element.alert.body == warmup.NOTICE
            if not says_compiling:
                return
            time.sleep(0.5)
    pytest.fail(f"the app at {url} still compiled its kernels after {COMPILE_TIMEOUT_S} s")


@pytest.fixture(scope="session")
def chromium_browser():
    """One headless system Chromium for the session."""
    executable = _chromium_path()
    if executable is None:
        _missing("no Chromium at /usr/bin/chromium or on PATH")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def lab_page(chromium_browser, server_url):
    """A fresh browser context and page (its own Streamlit session)."""
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 1800})
    context.set_default_timeout(60_000)
    tab = context.new_page()
    yield tab
    context.close()
