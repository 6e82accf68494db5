#!/usr/bin/env python3
"""Why Verify simulates in a worker process: its grid alone, in a thread beside busy Python
threads (as in the server, where every visitor's rerun is a thread), and in the worker beside
the same threads.

    python3 scripts/bench_worker.py [--busy 3] [--switch-ms 5]

``--busy`` threads run pure Python (a visitor's rerun holds the GIL the same way) while the
Heatmaps' Verify grid (32 x 24 cells, 20,000 requests each, the default fleet with a model
latency of its own so that nothing is cached) runs once in a thread of this process and once
through ``sdlab_ui.server.worker``. ``--switch-ms`` sets the interpreter's switch interval (5 ms
is Python's default). Prints each wall time and the ratios.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sdlab_model import grids  # noqa: E402
from sdlab_model.simulation.simulator import simulate_grid  # noqa: E402
from sdlab_model.workload import Workload  # noqa: E402
from sdlab_ui import cache  # noqa: E402
from sdlab_ui.server import worker  # noqa: E402


def verify_rows(latency_ms: float, call) -> float:
    """Seconds for Verify's grid, row by row through ``call`` (as the page runs it)."""
    workload = Workload(model_latency_ms=latency_ms)
    rates = grids.rate_axis(cache.VERIFY_RATE_CELLS)
    started = time.perf_counter()
    for count in grids.replica_axis(cache.VERIFY_REPLICA_CELLS):
        call(
            simulate_grid,
            workload,
            rates,
            [count],
            n_requests=cache.VERIFY_REQUESTS_PER_CELL,
            interval=True,
        )
    return time.perf_counter() - started


def in_thread(function, *args, **kwargs):
    return function(*args, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=3, help="busy Python threads (default 3)")
    parser.add_argument("--switch-ms", type=float, default=5.0, help="GIL switch interval")
    args = parser.parse_args()
    sys.setswitchinterval(args.switch_ms / 1000)

    verify_rows(21.0, in_thread)  # compile or load the kernels
    worker.call(divmod, 1, 1)  # start the worker: its start-up is timed apart
    alone = verify_rows(22.0, in_thread)
    stopping = threading.Event()

    def busy() -> None:
        counts: dict[int, str] = {}
        while not stopping.is_set():
            for i in range(2_000):
                counts[i % 97] = str(i)

    threads = [threading.Thread(target=busy, daemon=True) for _ in range(args.busy)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    threaded = verify_rows(23.0, in_thread)
    offloaded = verify_rows(24.0, worker.call)
    stopping.set()
    started = time.perf_counter()
    worker.WORKER.stop()
    worker.call(divmod, 1, 1)
    start_s = time.perf_counter() - started
    worker.WORKER.stop()

    print(f"Verify's grid, {args.busy} busy threads, switch interval {args.switch_ms:g} ms")
    print(f"  alone, in a thread          {alone:6.2f} s")
    print(f"  beside them, in a thread    {threaded:6.2f} s  ({threaded / alone:.1f}x alone)")
    print(f"  beside them, in the worker  {offloaded:6.2f} s  ({offloaded / alone:.1f}x alone)")
    print(f"  the worker's start (idle)   {start_s:6.2f} s")


if __name__ == "__main__":
    main()
