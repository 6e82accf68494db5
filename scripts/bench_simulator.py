#!/usr/bin/env python3
"""How fast is sdlab's simulator? Side by side with the same serving system written in SimPy.

    python3 scripts/bench_simulator.py            # defaults: 100k requests in SimPy
    python3 scripts/bench_simulator.py --simpy-requests 50000 --repeats 5 --skip-grid

Two systems, each served by the numba kernel and by a SimPy model of the same semantics, on the
same arrivals, and they must agree on every latency (the script exits 1 if they do not):

- ``central queue``: one fleet-wide FCFS queue and batcher feeding 16 CPU servers (batch window
  5 ms, max batch 32, utilization 0.8);
- ``least request``: the fleet as deployed, a power-of-two-choices balancer in front of 8
  replicas of 16 CPU workers, each with one batcher per model for 4 models (Zipf shares,
  window 5 ms, max batch 32), at 0.7 of capacity.

For each it prints both request rates and their ratio, then the time of a simulated heatmap grid
(the Heatmaps page's 32 log-spaced rates x up to 24 replica counts, 30k requests a cell). The
numba kernels are compiled (or loaded from their cache) and run once before any timing. SimPy is a
dev-only dependency.
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

from sdlab_model.simulation import simulator
from sdlab_model.workload import Workload

KERNEL_RUNS_PER_ROUND = 5

# The central-queue benchmark (named before load balancers existed).
BENCH_WORKLOAD = Workload(
    lb_policy="central_queue",
    replicas=1,
    cpu_workers_per_replica=16,
    gpu=False,
    dynamic_batching=True,
    batch_window_ms=5.0,
    max_batch_size=32,
)
CENTRAL_UTILIZATION = 0.8

FLEET_WORKLOAD = Workload(
    lb_policy="least_request",
    replicas=8,
    cpu_workers_per_replica=16,
    gpu=False,
    dynamic_batching=True,
    batch_window_ms=5.0,
    max_batch_size=32,
    models_hosted=4,
)
FLEET_UTILIZATION = 0.7


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


# SimPy runs the events of one instant by priority (its own: URGENT 0, then NORMAL 1, e.g. every
# Timeout, slot grant and process resumption), then in the order they were scheduled. The fleet
# model schedules its own events at later priorities, so all that one of them sets off (a slot
# freed and granted, a batcher resuming and dispatching) plays out before the next, and an instant
# runs completions, then window expiries, then arrivals: the kernel's order.
_COMPLETION, _WINDOW_EXPIRY, _ARRIVAL = 2, 3, 4

# SimPy and the kernel must agree on every latency to this relative tolerance.
LATENCY_RTOL = 1e-12


class _After(simpy.events.Event):
    """A Timeout with a place in its instant's order: fires ``delay_ms`` from now at ``priority``.

    Built as ``simpy.Timeout`` builds itself (already succeeded, scheduled ahead).
    """

    def __init__(self, env: simpy.Environment, delay_ms: float, priority: int):
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority, delay_ms)


def simpy_fleet(
    workload: Workload,
    arrival_ms: np.ndarray,
    routing: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """The fleet as deployed, as a SimPy model: completion time (ms) of every request.

    ``routing`` is ``simulator.routing_draws(...)`` for the same requests: each one's model and
    the balancer's random replica choices. The semantics are ``sdlab_model.workload``'s:

    - a balancer process sends each arrival to a replica (round robin, random, or least request:
      of the two drawn replicas the one with fewer unfinished requests, the first on a tie) and
      appends it to that replica's queue for its model;
    - a replica's slots are a ``PriorityResource``; each (replica, model) has a batcher process.
      It waits for a first request, then until ``max_batch_size`` wait or the oldest has waited
      the window (a timeout), whichever comes first. Ready, it requests a slot with priority
      (time it became ready, oldest request), so ready batches take free slots in the order they
      became ready, the older oldest request first on a tie. Given a slot, it takes up to
      ``max_batch_size`` waiting requests and starts a service process, which holds the slot for
      ``batch_service_ms(b)`` and then releases it; the batcher goes back to waiting at once;
    - an instant runs its completions, then its window expiries, then its arrivals, each with
      the dispatches it allows before the next (``_After``).

    On exact ties of two windows in one replica (simultaneous arrivals: only bursty Gamma
    arrivals draw zero gaps) this follows the test suite's plain event loop, which the kernel
    may not; with Poisson arrivals the two agree to the bit.
    """
    if workload.is_central_queue:
        raise ValueError("simpy_fleet models the balanced fleet; see simpy_batching_queue")
    batch_limit, window_ms, service_by_size_ms = simulator._queue_settings(workload)
    service_ms = service_by_size_ms.tolist()
    arrivals = arrival_ms.tolist()
    model_of, first, second = (draws.tolist() for draws in routing)
    policy, replicas, models = workload.lb_policy, workload.replicas, workload.models_hosted
    env = simpy.Environment()
    slots = [
        simpy.PriorityResource(env, capacity=workload.slots_per_replica) for _ in range(replicas)
    ]
    queues = [[deque() for _ in range(models)] for _ in range(replicas)]
    unfinished = [0] * replicas
    # What a batcher waits for: (this many requests in its queue, the event to fire then).
    awaited: list[list[tuple[int, simpy.Event] | None]] = [[None] * models for _ in range(replicas)]
    completion_ms = np.full(len(arrivals), np.nan)

    def until_waiting(replica: int, model: int, count: int) -> simpy.Event:
        event = env.event()
        awaited[replica][model] = (count, event)
        return event

    def choose_replica(request: int) -> int:
        if policy == "round_robin":
            return request % replicas
        if policy == "least_request":
            one, other = first[request], second[request]
            return other if unfinished[other] < unfinished[one] else one
        return first[request]

    def balancer():
        for request, at_ms in enumerate(arrivals):
            yield _After(env, at_ms - env.now, _ARRIVAL)
            replica, model = choose_replica(request), model_of[request]
            unfinished[replica] += 1
            queue = queues[replica][model]
            queue.append(request)
            wanted = awaited[replica][model]
            if wanted is not None and len(queue) >= wanted[0]:
                awaited[replica][model] = None
                wanted[1].succeed()

    def batcher(replica: int, model: int):
        queue = queues[replica][model]
        while True:
            if not queue:
                yield until_waiting(replica, model, 1)
            oldest = queue[0]
            window_ends = arrivals[oldest] + window_ms
            if len(queue) < batch_limit and env.now < window_ends:
                full = until_waiting(replica, model, batch_limit)
                yield full | _After(env, window_ends - env.now, _WINDOW_EXPIRY)
                awaited[replica][model] = None
            ready_since = window_ends
            if len(queue) >= batch_limit:
                ready_since = min(ready_since, arrivals[queue[batch_limit - 1]])
            slot = slots[replica].request(priority=(ready_since, oldest))
            yield slot
            batch = [queue.popleft() for _ in range(min(batch_limit, len(queue)))]
            env.process(serve(replica, batch, slot))

    def serve(replica: int, batch: list[int], slot):
        yield _After(env, service_ms[len(batch)], _COMPLETION)
        completion_ms[batch] = env.now
        unfinished[replica] -= len(batch)
        slots[replica].release(slot)

    env.process(balancer())
    for replica in range(replicas):
        for model in range(models):
            env.process(batcher(replica, model))
    env.run()
    return completion_ms


def _central_inputs(workload: Workload, count: int, seed: int) -> tuple[np.ndarray, None]:
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    return np.cumsum(rng.exponential(1000.0 / workload.rate_rps, count)), None


def _fleet_inputs(
    workload: Workload, count: int, seed: int
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Arrivals and routing draws from one seed, drawn as ``simulator._simulate_trace`` does."""
    arrival_stream, _, routing_stream = np.random.SeedSequence(seed).spawn(3)
    mean_gap_ms = 1000.0 / workload.rate_rps
    gaps_ms = simulator.arrival_gaps(
        workload, np.random.default_rng(arrival_stream), count, mean_gap_ms
    )
    routing = simulator.routing_draws(workload, np.random.default_rng(routing_stream), count)
    return np.cumsum(gaps_ms), routing


def _benchmark(title, workload, draw_inputs, simpy_model, args) -> bool:
    """Check agreement, then time SimPy against the kernel; True when every latency agrees."""
    load = workload.rate_rps / workload.capacity_rps
    print(f"\n{title}: {workload.rate_rps:,.1f} req/s ({load:.2g} of capacity)")
    started = time.perf_counter()
    warm_up_ms, warm_up_routing = draw_inputs(workload, 1_000, seed=0)
    simulator.run_trace(workload, warm_up_ms, None, warm_up_routing)
    print(
        f"JIT warm-up (compile or cache load, untimed below): {time.perf_counter() - started:.2f} s"
    )

    # Agreement first: both serve the same arrivals and must give the same latencies.
    arrival_ms, routing = draw_inputs(workload, args.simpy_requests, seed=1)
    kernel_ms = simulator.run_trace(workload, arrival_ms, None, routing).latency_ms
    simpy_ms = simpy_model(workload, arrival_ms, routing) - arrival_ms
    difference = np.abs(kernel_ms - simpy_ms)
    worst_ms = float(np.max(difference)) if np.all(np.isfinite(simpy_ms)) else np.inf
    agree = bool(np.allclose(simpy_ms, kernel_ms, rtol=LATENCY_RTOL, atol=0.0))
    verdict = (
        "identical"
        if np.array_equal(simpy_ms, kernel_ms)
        else (f"agree to rtol {LATENCY_RTOL:g}" if agree else "DISAGREE")
    )
    print(
        f"Agreement on {args.simpy_requests:,} requests: max |latency difference| {worst_ms:.3g} ms"
        f" ({np.count_nonzero(difference)} differ; {verdict})"
    )

    # Interleaved rounds, so both see the same load from other work on the machine. A kernel run
    # takes tens of milliseconds, so each round times it several times and also end to end
    # (drawing the arrivals included), which is what ``simulate`` pays.
    simpy_rates, kernel_rates, end_to_end_rates = [], [], []
    kernel_inputs = draw_inputs(workload, args.kernel_requests, seed=2)
    for repeat in range(args.repeats):
        simpy_inputs = draw_inputs(workload, args.simpy_requests, seed=10 + repeat)
        started = time.perf_counter()
        simpy_model(workload, *simpy_inputs)
        simpy_rates.append(args.simpy_requests / (time.perf_counter() - started))
        for _ in range(KERNEL_RUNS_PER_ROUND):
            started = time.perf_counter()
            simulator.run_trace(workload, kernel_inputs[0], None, kernel_inputs[1])
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
    return agree


def _time_grids(repeats: int) -> None:
    print()
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
        for _ in range(repeats):
            started = time.perf_counter()
            grid = simulator.simulate_grid(
                grid_workload, rates, grid_replicas, n_requests=30_000, seed=0
            )
            timings.append(time.perf_counter() - started)
        simulated = int(np.count_nonzero(np.isfinite(grid)))
        print(
            f"Grid  : {label}, {len(grid_replicas)} x {len(rates)} cells, 30,000 requests a cell, "
            f"{simulated} stable cells simulated: {statistics.median(timings):.2f} s median "
            f"({min(timings):.2f}-{max(timings):.2f} s over {repeats} runs)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simpy-requests", type=int, default=100_000)
    parser.add_argument("--kernel-requests", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--utilization",
        type=float,
        default=CENTRAL_UTILIZATION,
        help="of the central-queue benchmark",
    )
    parser.add_argument(
        "--fleet-utilization",
        type=float,
        default=FLEET_UTILIZATION,
        help="of the least-request fleet benchmark",
    )
    parser.add_argument("--skip-grid", action="store_true", help="skip the heatmap grid timings")
    args = parser.parse_args()

    central = BENCH_WORKLOAD.with_changes(rate_rps=args.utilization * BENCH_WORKLOAD.capacity_rps)
    fleet = FLEET_WORKLOAD.with_changes(
        rate_rps=args.fleet_utilization * FLEET_WORKLOAD.capacity_rps
    )
    agreed = _benchmark(
        f"Central queue, {central.servers} CPU servers, window {central.batch_window_ms:g} ms, "
        f"max batch {central.max_batch_size}",
        central,
        _central_inputs,
        lambda workload, arrival_ms, _routing: simpy_batching_queue(workload, arrival_ms),
        args,
    )
    agreed &= _benchmark(
        f"Least request, {fleet.replicas} replicas x {fleet.slots_per_replica} CPU workers, "
        f"{fleet.models_hosted} models (skew {fleet.popularity_skew:g}), window "
        f"{fleet.batch_window_ms:g} ms, max batch {fleet.max_batch_size}",
        fleet,
        _fleet_inputs,
        simpy_fleet,
        args,
    )
    if not args.skip_grid:
        _time_grids(args.repeats)
    if not agreed:
        print("SimPy and the kernel disagree on latencies (see above).")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
