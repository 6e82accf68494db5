#!/usr/bin/env python3
"""How fast is sdlab's simulator? Side by side with the same batching queue written in SimPy.

    python3 scripts/bench_simulator.py            # defaults: 100k requests in SimPy
    python3 scripts/bench_simulator.py --simpy-requests 50000 --repeats 5

Both serve the same arrivals (16 CPU servers, batch window 5 ms, max batch 32, utilization 0.8)
and must agree on every latency; the script prints both request rates and their ratio, then the
time of a simulated heatmap grid (the Heatmaps page's 32 log-spaced rates x up to 24 replica
counts, 30k requests a cell). The numba
kernel is compiled (or loaded from its cache) and run once before any timing. SimPy is a dev-only
dependency.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import deque
from pathlib import Path

import numpy as np
import simpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sdlab_model import simulator
from sdlab_model.workload import Workload

KERNEL_RUNS_PER_ROUND = 5

BENCH_WORKLOAD = Workload(
    lb_policy="central_queue",  # the default policy is round robin, which needs routing draws
    replicas=1,
    cpu_workers_per_replica=16,
    gpu=False,
    dynamic_batching=True,
    batch_window_ms=5.0,
    max_batch_size=32,
)


def simpy_batching_queue(workload: Workload, arrival_ms: np.ndarray) -> np.ndarray:
    """The same queue as the kernel, as a SimPy model: completion time (ms) of every request.

    A batcher process takes a free server (a ``Resource`` slot), waits for a request, then waits
    until ``max_batch_size`` are queued or the oldest has waited the window, and hands the batch
    to a service process that holds the server for ``batch_service_ms(b)``.
    """
    batch_limit, window_ms, service_by_size_ms = simulator._queue_settings(workload)
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=workload.servers)
    queue: deque[int] = deque()
    completion_ms = np.full(arrival_ms.size, np.nan)
    wake: list[simpy.Event | None] = [None]

    def arrivals():
        for request, at_ms in enumerate(arrival_ms):
            yield env.timeout(at_ms - env.now)
            queue.append(request)
            if wake[0] is not None and not wake[0].triggered:
                wake[0].succeed()

    def serve(batch: list[int], slot):
        yield env.timeout(service_by_size_ms[len(batch)])
        for request in batch:
            completion_ms[request] = env.now
        servers.release(slot)

    def batcher():
        while True:
            slot = servers.request()
            yield slot
            while not queue:
                wake[0] = env.event()
                yield wake[0]
            deadline_ms = arrival_ms[queue[0]] + window_ms
            while len(queue) < batch_limit and env.now < deadline_ms:
                wake[0] = env.event()
                yield wake[0] | env.timeout(deadline_ms - env.now)
            batch = [queue.popleft() for _ in range(min(batch_limit, len(queue)))]
            env.process(serve(batch, slot))

    env.process(arrivals())
    env.process(batcher())
    env.run()
    return completion_ms


def _arrivals(workload: Workload, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    return np.cumsum(rng.exponential(1000.0 / workload.rate_rps, count))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simpy-requests", type=int, default=100_000)
    parser.add_argument("--kernel-requests", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--utilization", type=float, default=0.8)
    args = parser.parse_args()

    workload = BENCH_WORKLOAD.with_changes(rate_rps=args.utilization * BENCH_WORKLOAD.capacity_rps)
    print(
        f"Workload: {workload.servers} CPU servers, window {workload.batch_window_ms:g} ms, "
        f"max batch {workload.max_batch_size}, {workload.rate_rps:.1f} req/s "
        f"(utilization {args.utilization:g} of {workload.capacity_rps:.1f} req/s)"
    )

    started = time.perf_counter()
    simulator._run(workload, _arrivals(workload, 1_000, seed=0))
    print(
        f"JIT warm-up (compile or cache load, untimed below): {time.perf_counter() - started:.2f} s"
    )

    # Agreement first: both serve the same arrivals and must give the same latencies.
    check_arrivals = _arrivals(workload, args.simpy_requests, seed=1)
    kernel_trace = simulator._run(workload, check_arrivals)
    simpy_completion = simpy_batching_queue(workload, check_arrivals)
    worst_ms = float(np.max(np.abs(kernel_trace.completion_ms - simpy_completion)))
    print(
        f"Agreement on {args.simpy_requests:,} requests: max |latency difference| {worst_ms:.3g} ms"
    )

    # Interleaved rounds, so both see the same load from other work on the machine. A kernel run
    # takes tens of milliseconds, so each round times it several times and also end to end
    # (drawing the arrivals included), which is what ``simulate`` pays.
    simpy_rates, kernel_rates, end_to_end_rates = [], [], []
    kernel_arrivals = _arrivals(workload, args.kernel_requests, seed=2)
    for repeat in range(args.repeats):
        started = time.perf_counter()
        simpy_batching_queue(workload, _arrivals(workload, args.simpy_requests, seed=10 + repeat))
        simpy_rates.append(args.simpy_requests / (time.perf_counter() - started))
        for _ in range(KERNEL_RUNS_PER_ROUND):
            started = time.perf_counter()
            simulator._run(workload, kernel_arrivals)
            kernel_rates.append(args.kernel_requests / (time.perf_counter() - started))
            started = time.perf_counter()
            simulator._simulate_trace(
                workload, args.kernel_requests, np.random.SeedSequence(3 + repeat)
            )
            end_to_end_rates.append(args.kernel_requests / (time.perf_counter() - started))
    simpy_rate = statistics.median(simpy_rates)
    kernel_rate = statistics.median(kernel_rates)
    end_to_end = statistics.median(end_to_end_rates)
    print(
        f"SimPy : {simpy_rate:>14,.0f} req/s "
        f"(median of {args.repeats} runs of {args.simpy_requests:,})"
    )
    print(
        f"sdlab : {kernel_rate:>14,.0f} req/s kernel only, arrivals drawn beforehand "
        f"(median of {len(kernel_rates)} runs of {args.kernel_requests:,})"
    )
    print(
        f"sdlab : {end_to_end:>14,.0f} req/s end to end, drawing the arrivals included "
        f"(median of {len(end_to_end_rates)})"
    )
    print(
        f"Ratio : {kernel_rate / simpy_rate:,.0f}x (kernel), "
        f"{end_to_end / simpy_rate:,.0f}x (end to end)"
    )

    # The Heatmaps page's axes: log-spaced over the rate and replica sliders' full ranges.
    rates = np.geomspace(1.0, 500_000.0, 32)
    replicas = np.unique(np.round(np.geomspace(1, 500, 24)))
    # Worst case: 24 x 32 cells all stable, on the largest fleets (7,600-8,000 servers).
    largest = np.arange(477, 501)
    for label, grid_workload, grid_replicas in (
        ("default workload", Workload(), replicas),
        ("no batching", Workload(dynamic_batching=False), replicas),
        ("every cell stable, 477-500 replicas", Workload(), largest),
    ):
        timings = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            grid = simulator.simulate_grid(
                grid_workload, rates, grid_replicas, n_requests=30_000, seed=0
            )
            timings.append(time.perf_counter() - started)
        simulated = int(np.count_nonzero(np.isfinite(grid)))
        print(
            f"Grid  : {label}, {len(grid_replicas)} x {len(rates)} cells, 30,000 requests a cell, "
            f"{simulated} stable cells simulated: {statistics.median(timings):.2f} s median "
            f"({min(timings):.2f}-{max(timings):.2f} s over {args.repeats} runs)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
