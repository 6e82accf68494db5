#!/usr/bin/env python3
"""Uploads nobody uses: a reproduction for Streamlit, and what sdlab's own sweep takes back.

    python3 scripts/upload_flood.py                 # a bare Streamlit app with one file_uploader
    python3 scripts/upload_flood.py --app sdlab     # sdlab (its Timeline page's trace uploader)

Serves the app on a free localhost port and opens one session as a browser does (the websocket,
then ``/_stcore/health`` for the XSRF cookie). Then it sends ``--files`` uploads of ``--mb`` MB
each to Streamlit's upload endpoint, ``PUT /_stcore/upload_file/<session>/<file id>`` with the
session's XSRF token, under file ids the server handed out (``file_urls_request``) but that no
widget ever names, and prints the server's RSS: before, after the flood, after two reruns of
the session ``--rerun-gap-s`` apart (sdlab lets a session's unheld uploads go at the end of its
runs: ``sdlab_ui/uploads.py``), and after the session is closed.

On the bare app the uploads stay until the session ends: Streamlit 1.67 keeps every file a
session uploads (``MemoryUploadedFileManager``) whether or not a widget holds it, and
``server.maxUploadSize`` bounds one request, not their number. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import requests
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dev import SERVER_ENVIRONMENT  # noqa: E402
from scripts.load_test import free_port, stop_server, wait_for_health  # noqa: E402

_BARE_APP = """import streamlit as st
st.file_uploader("A file", key="file")
"""


def _rss_mb(pid: int) -> float:
    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20


async def _rerun(socket, query: str = "", page: str = "") -> None:
    message = BackMsg()
    message.rerun_script.query_string = query
    message.rerun_script.page_script_hash = page
    await socket.send(message.SerializeToString())
    while True:
        reply = ForwardMsg()
        reply.ParseFromString(await asyncio.wait_for(socket.recv(), 120))
        if reply.WhichOneof("type") == "script_finished":
            return


async def _flood(port: int, pid: int, args) -> None:
    origin = f"http://127.0.0.1:{port}"
    http = requests.Session()
    http.get(origin + "/_stcore/health", timeout=30).raise_for_status()  # sets the XSRF cookie
    token = http.cookies.get("_streamlit_xsrf", "")
    async with connect(
        f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"], origin=origin,
        max_size=None,
    ) as socket:  # fmt: skip
        message = BackMsg()
        message.rerun_script.query_string = "tl.traffic=uploaded" if args.app == "sdlab" else ""
        await socket.send(message.SerializeToString())
        session_id, page = "", ""
        while True:
            reply = ForwardMsg()
            reply.ParseFromString(await asyncio.wait_for(socket.recv(), 120))
            kind = reply.WhichOneof("type")
            if kind == "new_session":
                session_id = reply.new_session.initialize.session_id
                pages = {p.page_name: p.page_script_hash for p in reply.new_session.app_pages}
                page = pages.get("Timeline", "")
            if kind == "script_finished":
                break
        if args.app == "sdlab":
            await _rerun(socket, "tl.traffic=uploaded", page)
        before = _rss_mb(pid)
        body = b"x" * int(args.mb * 1_000_000)
        started = time.perf_counter()
        for batch in range(0, args.files, 50):
            request = BackMsg()
            request.file_urls_request.request_id = f"flood-{batch}"
            request.file_urls_request.session_id = session_id
            request.file_urls_request.file_names.extend(
                f"f{n}.csv" for n in range(batch, min(args.files, batch + 50))
            )
            await socket.send(request.SerializeToString())
            while True:
                reply = ForwardMsg()
                reply.ParseFromString(await asyncio.wait_for(socket.recv(), 120))
                if reply.WhichOneof("type") == "file_urls_response":
                    break
            for urls in reply.file_urls_response.file_urls:
                url = urls.upload_url
                response = http.put(
                    origin + url if url.startswith("/") else url,
                    files={"file": ("f.csv", body, "text/csv")},
                    headers={"X-Xsrftoken": token}, timeout=60,
                )  # fmt: skip
                response.raise_for_status()
        flood_s = time.perf_counter() - started
        flooded = _rss_mb(pid)
        query = "tl.traffic=uploaded" if args.app == "sdlab" else ""
        await _rerun(socket, query, page)
        await asyncio.sleep(args.rerun_gap_s)
        await _rerun(socket, query, page)
        after_reruns = _rss_mb(pid)
    time.sleep(args.closed_wait_s)
    closed = _rss_mb(pid)
    print(
        f"{args.app}: {args.files} uploads of {args.mb:g} MB under unused file ids in "
        f"{flood_s:.1f} s. Server RSS: {before:,.0f} MB before, {flooded:,.0f} MB after the "
        f"flood, {after_reruns:,.0f} MB after two reruns {args.rerun_gap_s:g} s apart, "
        f"{closed:,.0f} MB {args.closed_wait_s:g} s after the session closed"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", choices=("bare", "sdlab"), default="bare")
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--rerun-gap-s", type=float, default=3.0)
    parser.add_argument("--closed-wait-s", type=float, default=5.0)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="sdlab-upload-flood-"))
    script = ROOT / "app.py"
    if args.app == "bare":
        script = workdir / "bare_upload_app.py"
        script.write_text(_BARE_APP, encoding="utf-8")
    port = free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
        "--server.address", "127.0.0.1", "--server.headless", "true",
        "--server.maxUploadSize", "2", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    log = (workdir / "server.log").open("w")
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**SERVER_ENVIRONMENT, **os.environ},
    )  # fmt: skip
    try:
        wait_for_health(port, server, timeout_s=120)
        asyncio.run(_flood(port, server.pid, args))
    finally:
        stop_server(server)
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
