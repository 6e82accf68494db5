#!/usr/bin/env python3
"""What one page element costs a served Streamlit app per rerun, whatever the element says.

    python3 scripts/bench_messages.py [--elements 5 50 100 200] [--clients 5] [--reruns 40]

Serves a page of one slider and N short Markdown lines (``streamlit run``, the same options as
``scripts/load_test.py``), has ``--clients`` protocol clients ask for ``--reruns`` reruns each
(the ``rerun_script`` message a browser sends), and prints the server's CPU per rerun against N.
The slope is the cost of an element on the server: the script thread builds and hands each one to
the event loop, which wakes up and sends it as its own websocket frame. A Lab rerun sends about
80 elements, so this is why trimming elements, not only computations, lowers the load test's
server CPU per interaction (issue 13).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import psutil
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_test import free_port, start_server, stop_server, wait_for_health

_PAGE = """
import streamlit as st

st.slider("x", 0, 100, key="x")
for line in range({elements}):
    st.markdown(f"line {{line}} **bold** {{st.session_state.x}}")
"""


async def _client(port: int, reruns: int) -> None:
    async with connect(
        f"ws://127.0.0.1:{port}/_stcore/stream",
        subprotocols=["streamlit"],
        origin=f"http://127.0.0.1:{port}",
        max_size=None,
    ) as socket:
        for _ in range(reruns):
            message = BackMsg()
            message.rerun_script.query_string = ""
            await socket.send(message.SerializeToString())
            while True:
                reply = ForwardMsg()
                reply.ParseFromString(await asyncio.wait_for(socket.recv(), 60))
                if reply.WhichOneof("type") == "script_finished":
                    break


async def _clients(port: int, clients: int, reruns: int) -> None:
    await asyncio.gather(*(_client(port, reruns) for _ in range(clients)))


def server_cpu_ms_per_rerun(elements: int, clients: int, reruns: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "elements.py"
        page.write_text(_PAGE.format(elements=elements), encoding="utf-8")
        port = free_port()
        server = start_server(port, Path(folder) / "server.log", page)
        try:
            wait_for_health(port, server, timeout_s=120)
            asyncio.run(_clients(port, 1, 3))  # imports and first runs, not timed
            process = psutil.Process(server.pid)
            before = sum(process.cpu_times()[:2])
            asyncio.run(_clients(port, clients, reruns))
            used_s = sum(process.cpu_times()[:2]) - before
        finally:
            stop_server(server)
    return 1000 * used_s / (clients * reruns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, nargs="+", default=[5, 50, 100, 200])
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--reruns", type=int, default=40, help="reruns per client")
    args = parser.parse_args()
    started = time.perf_counter()
    costs = []
    for elements in args.elements:
        cost = server_cpu_ms_per_rerun(elements, args.clients, args.reruns)
        costs.append((elements, cost))
        print(f"{elements:5d} Markdown elements: server CPU {cost:6.2f} ms per rerun")
    (low, low_ms), (high, high_ms) = costs[0], costs[-1]
    if high > low:
        print(
            f"slope: {(high_ms - low_ms) / (high - low):.3f} ms of server CPU per element "
            f"({args.clients} clients x {args.reruns} reruns each; "
            f"{time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
