"""The time-stepped model against the discrete-event simulator on the same arrivals and fleet.

``simulate_timeline`` takes a ``TimelineResult``, draws the requests of its offered rate (a
Poisson process whose rate is the step's, seeded) and serves them, first come first served, on
the ready replicas' slots as the timeline scheduled them, each for the workload's deterministic
single-request time (``sdlab_model.simulation._timeline_kernel``). It then compares, minute by
minute, the simulated p99 of the requests arriving in that minute with the model's.

Scope: an unbatched fleet whose slots pool into one queue, which is the central queue, and, as
the queueing model treats it, round robin without batching (``sdlab_model.queues.queueing``).
Batching, random and least-request balancing are outside this check (``is_covered``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.timeline.model import MINUTE_S, TimelineResult
from sdlab_model.workload import Workload

MAX_SIMULATED_REQUESTS = 30_000_000
"""Largest check: ~0.5 GB of arrays and seconds of compiled time at most."""
MIN_REQUESTS_PER_MINUTE = 200
"""A minute's simulated p99 from fewer requests is too noisy to judge the model by (its 99th
percentile rests on two requests); such minutes are left out of the error figures."""


def is_covered(workload: Workload) -> bool:
    """Whether the check simulates the system the model describes (see the module docstring)."""
    return workload.effective_max_batch_size == 1 and workload.lb_policy in (
        "central_queue",
        "round_robin",
    )


@dataclass(frozen=True)
class TimelineCheck:
    """Minute by minute: the model's p99, the simulation's and the relative error."""

    minute_starts_s: np.ndarray
    model_p99_ms: np.ndarray
    simulated_p99_ms: np.ndarray
    requests_per_minute: np.ndarray
    compared: np.ndarray
    """Minutes with enough requests to compare (``MIN_REQUESTS_PER_MINUTE``)."""
    model_minutes_over: int
    simulated_minutes_over: int
    model_requests_over: float
    simulated_requests_over: int
    requests: int
    seed: int

    @property
    def p99_errors(self) -> np.ndarray:
        """(model - simulation) / simulation for each compared minute with finite p99s."""
        model = self.model_p99_ms[self.compared]
        simulated = self.simulated_p99_ms[self.compared]
        finite = np.isfinite(model) & np.isfinite(simulated) & (simulated > 0)
        return (model[finite] - simulated[finite]) / simulated[finite]

    @property
    def median_abs_error(self) -> float:
        errors = self.p99_errors
        return float(np.median(np.abs(errors))) if errors.size else math.nan

    @property
    def worst_abs_error(self) -> float:
        errors = self.p99_errors
        return float(np.max(np.abs(errors))) if errors.size else math.nan


def simulate_timeline(result: TimelineResult, seed: int = 0) -> TimelineCheck:
    """Simulate ``result``'s traffic on its ready fleet and compare the minutes' p99s."""
    from sdlab_model.simulation import _timeline_kernel

    inputs = result.inputs
    workload = inputs.workload
    if not is_covered(workload):
        raise ValueError(
            "the timeline check simulates an unbatched pooled fleet (central queue or round "
            f"robin); got batching={workload.dynamic_batching}, lb_policy={workload.lb_policy}"
        )
    step = inputs.step_s
    expected = float(np.sum(result.offered_rps) * step)
    if expected > MAX_SIMULATED_REQUESTS:
        raise ValueError(
            f"{expected:,.0f} requests is more than the check's {MAX_SIMULATED_REQUESTS:,}"
        )
    random = np.random.default_rng(np.random.SeedSequence(seed))
    counts = random.poisson(result.offered_rps * step)
    step_of = np.repeat(np.arange(len(counts)), counts)
    arrivals = np.sort(result.times_s[step_of] + random.random(step_of.size) * step)
    servers = result.ready_replicas * workload.slots_per_replica
    change = np.flatnonzero(np.r_[True, servers[1:] != servers[:-1]])
    segment_start = result.times_s[change].astype(float)
    segment_servers = servers[change].astype(np.int64)
    service_s = workload.single_request_ms / 1000.0
    starts = _timeline_kernel.serve(arrivals, service_s, segment_start, segment_servers)
    latency_ms = (starts - arrivals + service_s) * 1000.0
    minutes = np.floor(arrivals / max(MINUTE_S, step) + 1e-9).astype(np.int64)
    n_minutes = len(result.minute_starts_s)
    simulated = np.full(n_minutes, np.nan)
    per_minute = np.bincount(minutes, minlength=n_minutes)[:n_minutes]
    order = np.argsort(minutes, kind="stable")
    bounds = np.r_[0, np.cumsum(per_minute)]
    for minute in range(n_minutes):
        chunk = latency_ms[order[bounds[minute] : bounds[minute + 1]]]
        if chunk.size:
            simulated[minute] = float(np.quantile(chunk, 0.99, method="inverted_cdf"))
    target = workload.p99_target_ms
    compared = per_minute >= MIN_REQUESTS_PER_MINUTE
    return TimelineCheck(
        minute_starts_s=result.minute_starts_s,
        model_p99_ms=result.minute_p99_ms,
        simulated_p99_ms=simulated,
        requests_per_minute=per_minute,
        compared=compared,
        model_minutes_over=result.totals.minutes_over_target,
        simulated_minutes_over=int(np.sum(simulated > target)),
        model_requests_over=result.totals.requests_over_target,
        simulated_requests_over=int(np.sum(latency_ms > target)),
        requests=int(arrivals.size),
        seed=seed,
    )
