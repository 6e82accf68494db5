"""The time-stepped model against the discrete-event simulator on the same arrivals and fleet.

``simulate_timeline`` takes a ``TimelineResult``, draws the requests of its offered rate (a
Poisson process whose rate is the step's, seeded) and serves them on the ready replicas as the
timeline scheduled them, each batch for the workload's deterministic batch time
(``sdlab_model.simulation._timeline_kernel``):

- central queue: one FCFS queue over every ready replica's slots, with dynamic batching if on;
- round robin and random: the balancer sends each request to a replica of the moment (the
  ``n``-th to ``n mod R(t)``, or a uniform pick); each replica batches and serves its own queue
  on its slots, and one taken out of the balancer finishes what it holds.

It then compares, minute by minute, the simulated p99 of the requests arriving in that minute
with the model's.

Scope (``is_covered``): one hosted model and Poisson arrivals (``arrival_cv`` 1), the system the
simulator draws. Least request is outside it: its choice depends on every replica's requests in
flight at that instant, which the per-replica queues here do not share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.policies import Policy
from sdlab_model.timeline.model import MINUTE_S, TimelineResult
from sdlab_model.workload import Workload

MAX_SIMULATED_REQUESTS = 30_000_000
"""Largest check: ~0.5 GB of arrays and seconds of compiled time at most."""
MIN_REQUESTS_PER_MINUTE = 200
"""A minute's simulated p99 from fewer requests is too noisy to judge the model by (its 99th
percentile rests on two requests); such minutes are left out of the error figures."""


COVERED_POLICIES = ("central_queue", "round_robin", "random")


def is_covered(workload: Workload) -> bool:
    """Whether the check simulates the system the model describes (see the module docstring)."""
    return (
        workload.lb_policy in COVERED_POLICIES
        and workload.models_hosted == 1
        and workload.arrival_cv == 1.0
    )


def coverage_note(workload: Workload) -> str | None:
    """Why ``workload`` is outside the check, in words a person can act on; None if covered."""
    reasons = []
    if workload.lb_policy not in COVERED_POLICIES:
        reasons.append(
            "least-request balancing (each choice depends on every replica's requests in "
            "flight, which this check does not simulate)"
        )
    if workload.models_hosted != 1:
        reasons.append(f"{workload.models_hosted} hosted models (the check serves one)")
    if workload.arrival_cv != 1.0:
        reasons.append(
            f"arrivals with a CV of {workload.arrival_cv:g} (the check draws Poisson arrivals)"
        )
    if not reasons:
        return None
    return (
        "The check simulates one model behind a central queue, round robin or random, batched "
        f"or not, with Poisson arrivals; this workload has {' and '.join(reasons)}."
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
    inputs = result.inputs
    workload = inputs.workload
    note = coverage_note(workload)
    if note is not None:
        raise ValueError(note)
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
    latency_ms = _latencies_ms(result, arrivals, random)
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


def _latencies_ms(result: TimelineResult, arrivals_s: np.ndarray, random) -> np.ndarray:
    """Each request's time from arrival to the end of its batch (ms; ``inf`` if never served),
    on the ready fleet the timeline scheduled."""
    from sdlab_model.simulation import _timeline_kernel

    workload = result.inputs.workload
    size = workload.effective_max_batch_size
    window_s = workload.batch_window_ms / 1000.0 if size > 1 else 0.0
    service_s = np.array([workload.batch_service_ms(b) / 1000.0 for b in range(size + 1)])
    replicas = result.ready_replicas.astype(np.int64)
    dispatch = np.empty(arrivals_s.size)
    completion = np.empty(arrivals_s.size)
    if workload.is_central_queue:
        servers = replicas * workload.slots_per_replica
        change = np.flatnonzero(np.r_[True, servers[1:] != servers[:-1]])
        _timeline_kernel.serve_batches(
            arrivals_s,
            size,
            window_s,
            service_s,
            result.times_s[change].astype(float),
            servers[change],
            dispatch,
            completion,
        )
    else:
        change = np.flatnonzero(np.r_[True, replicas[1:] != replicas[:-1]])
        segment_replicas = replicas[change]
        most_lives = int(segment_replicas[0] + np.maximum(np.diff(segment_replicas), 0).sum())
        life_of = np.empty(arrivals_s.size, np.int64)
        life_start = np.empty(max(1, most_lives))
        uniform = random.random(arrivals_s.size) if workload.lb_policy == "random" else np.empty(0)
        _timeline_kernel.route(
            arrivals_s,
            result.times_s[change].astype(float),
            segment_replicas,
            int(Policy.of(workload.lb_policy)),
            uniform,
            life_of,
            life_start,
        )
        _timeline_kernel.serve_lives(
            arrivals_s,
            life_of,
            life_start,
            workload.slots_per_replica,
            size,
            window_s,
            service_s,
            dispatch,
            completion,
        )
    return (completion - arrivals_s) * 1000.0
