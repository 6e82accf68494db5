"""A fleet of FCFS leaves where every request is tied across two of them: the check of
``TiedLeaf``'s independent-waits assumption that its Monte Carlo cannot make.

``servers`` leaves, each one FCFS queue with exponential service of mean ``service_ms``; requests
arrive as one Poisson stream at ``utilization x servers / service_ms``. Each request queues a copy
at a random leaf and, ``delay_ms`` later, a copy at another; a copy that reaches the head of its
queue starts unless its twin's cancellation (sent when the twin started, ``message_ms`` in flight)
has arrived, in which case it is dropped at no cost. A copy that starts before that is a
duplicate: both run. The answer is the first copy to finish. ``tied=False`` sends one copy
(an M/M/1 per leaf: the simulator's own check against theory).

Plain Python with a heap of events (about 5 microseconds a request): for scripts and tests, not
for the page. Seeded; the first ``WARMUP_SHARE`` of requests is dropped.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from sdlab_model.tail.simulate import SimQuantile, quantile_interval

WARMUP_SHARE = 0.1
_ARRIVE, _SEND_SECOND, _DONE = 0, 1, 2


@dataclass(frozen=True)
class FleetSim:
    """What ``simulate_tied_fleet`` measured per leaf request (after the warm-up)."""

    requests: int
    quantiles: dict[float, SimQuantile]
    duplicated_share: float
    utilization: float
    """Busy time of all leaves over their time: the offered load plus the duplicates."""


def simulate_tied_fleet(
    servers: int,
    service_ms: float,
    utilization: float,
    requests: int,
    seed: int,
    delay_ms: float = 1.0,
    message_ms: float = 0.5,
    tied: bool = True,
    quantiles: tuple[float, ...] = (0.5, 0.99, 0.999),
) -> FleetSim:
    """Simulate ``requests`` requests through ``servers`` leaves (see the module docstring)."""
    if servers < 2 or requests < 10 or not 0.0 < utilization < 1.0:
        raise ValueError(
            f"need 2+ servers, 10+ requests, utilization in (0, 1): {servers}, "
            f"{requests}, {utilization}"
        )
    arrivals_stream, choice_stream, service_stream = np.random.SeedSequence(seed).spawn(3)
    gaps = np.random.default_rng(arrivals_stream).exponential(
        service_ms / (utilization * servers), requests
    )
    arrival = np.cumsum(gaps)
    first = np.random.default_rng(choice_stream).integers(0, servers, requests)
    offset = np.random.default_rng(choice_stream).integers(1, servers, requests)
    second = (first + offset) % servers
    service = np.random.default_rng(service_stream).exponential(service_ms, (requests, 2))
    started = np.full((requests, 2), math.inf)
    finished = np.full(requests, math.inf)
    queues: list[deque] = [deque() for _ in range(servers)]
    busy = [False] * servers
    busy_ms = 0.0
    events = [(float(arrival[r]), _ARRIVE, r, 0) for r in range(requests)]
    if tied:
        events += [(float(arrival[r] + delay_ms), _SEND_SECOND, r, 1) for r in range(requests)]
    heapq.heapify(events)

    def start_next(leaf: int, now: float) -> None:
        nonlocal busy_ms
        queue = queues[leaf]
        while queue:
            request, copy = queue.popleft()
            if started[request, 1 - copy] + message_ms <= now:
                continue  # its twin's cancellation has arrived: dropped, no work
            started[request, copy] = now
            done = now + service[request, copy]
            finished[request] = min(finished[request], done)
            busy_ms += service[request, copy]
            busy[leaf] = True
            heapq.heappush(events, (done, _DONE, leaf, 0))
            return
        busy[leaf] = False

    while events:
        now, kind, subject, copy = heapq.heappop(events)
        if kind == _DONE:
            start_next(subject, now)
            continue
        leaf = int(first[subject] if kind == _ARRIVE else second[subject])
        queues[leaf].append((subject, copy))
        if not busy[leaf]:
            start_next(leaf, now)
    kept = slice(int(WARMUP_SHARE * requests), requests)
    latency = np.sort(finished[kept] - arrival[kept])
    both = np.isfinite(started[kept]).all(axis=1)
    span = float(np.nanmax(finished) - arrival[0])
    return FleetSim(
        requests=latency.size,
        quantiles={q: quantile_interval(latency, q) for q in quantiles},
        duplicated_share=float(both.mean()),
        utilization=busy_ms / (servers * span),
    )
