"""The time-stepped model against the discrete-event simulator on the same arrivals and fleet.

``simulate_timeline`` takes a ``TimelineResult``, draws the requests of its offered rate (a
Poisson process whose rate is the step's, seeded) and serves them on the ready replicas as the
timeline scheduled them, each batch for the workload's deterministic batch time
(``sdlab_model.simulation._timeline_kernel``):

- central queue: one FCFS queue over every ready replica's slots, with dynamic batching if on;
- round robin and random: the balancer sends each request to a replica of the moment (the
  ``n``-th to ``n mod R(t)``, or a uniform pick); each replica batches and serves its own queue
  on its slots, and one taken out of the balancer finishes what it holds.

The requests are drawn and served a chunk at a time (``CHUNK_REQUESTS``), each queue's state
carried between chunks, so the check never holds every request. A timeline with more than
``MAX_SIMULATED_REQUESTS`` is checked over its first whole minutes up to that many: from the
start, with the model's own starting state, as if traffic stopped there (a batch within one
batching window of that end may close without requests that would have joined it).

It then compares, minute by minute, the simulated p99 of the requests arriving in that minute
with the model's.

Scope (``is_covered``): one hosted model and Poisson arrivals (``arrival_cv`` 1), the system the
simulator draws. Least request is outside it: its choice depends on every replica's requests in
flight at that instant, which the per-replica queues here do not share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass

import numpy as np

from sdlab_model.policies import Policy
from sdlab_model.timeline.model import MINUTE_S, TimelineResult
from sdlab_model.workload import Workload

MAX_SIMULATED_REQUESTS = 6_000_000
"""Most requests one check simulates (expected count), a few seconds of compiled time: a longer
timeline is checked over its first whole minutes up to this many (``check_span``)."""
CHUNK_REQUESTS = 250_000
"""Requests drawn and served at a time. The check holds one chunk's arrays (~70 bytes a
request) and 8 bytes a simulated request for the minutes' p99s, so its memory is bounded by
``MAX_SIMULATED_REQUESTS``, not by the timeline's length."""
PIECE_REQUESTS = CHUNK_REQUESTS // 4
"""A step with more expected requests is drawn in pieces, so a chunk can end inside it."""
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
class CheckSpan:
    """What a check simulates of a timeline: its first ``minutes`` (whole minutes, or steps
    when a step is longer), ``end_s`` seconds, about ``expected_requests`` requests."""

    minutes: int
    end_s: float
    expected_requests: float
    whole: bool
    """Whether that is the whole timeline."""


def check_span(result: TimelineResult, max_requests: int | None = None) -> CheckSpan:
    """The leading whole minutes of ``result`` with at most ``max_requests`` expected requests
    (default ``MAX_SIMULATED_REQUESTS``; none if its first minute alone has more)."""
    cap = MAX_SIMULATED_REQUESTS if max_requests is None else max_requests
    step = result.inputs.step_s
    bucket_s = max(MINUTE_S, step)
    n_minutes = len(result.minute_starts_s)
    minute_of_step = np.floor(result.times_s / bucket_s + 1e-9).astype(np.int64)
    expected = np.bincount(minute_of_step, result.offered_rps * step, minlength=n_minutes)
    cumulative = np.cumsum(expected[:n_minutes])
    minutes = int(np.searchsorted(cumulative, cap, side="right"))
    whole = minutes >= n_minutes
    end_s = float(result.times_s[-1] + step) if whole else minutes * bucket_s
    return CheckSpan(
        minutes=minutes,
        end_s=end_s,
        expected_requests=float(cumulative[minutes - 1]) if minutes else 0.0,
        whole=whole,
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
    span: CheckSpan
    """What was simulated: minutes after ``span.minutes`` have no simulated p99."""

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


def simulate_timeline(
    result: TimelineResult,
    seed: int = 0,
    chunk_requests: int = CHUNK_REQUESTS,
    max_requests: int | None = None,
    between_chunks: Callable[[int, int], None] | None = None,
) -> TimelineCheck:
    """Simulate ``result``'s traffic on its ready fleet over ``check_span(result,
    max_requests)`` and compare the minutes' p99s. ``chunk_requests`` sets the memory, never
    the result: the arrivals and the balancer's random picks come from their own seeded
    streams, drawn in time order. (A larger ``max_requests`` is for offline reports: memory
    grows by 8 bytes a request, time in proportion.) ``between_chunks(done,
    total)`` is called after each chunk, with the requests served so far and in all."""
    steps = timeline_check_steps(result, seed, chunk_requests, max_requests)
    while True:
        try:
            done, total = next(steps)
        except StopIteration as finished:
            return finished.value
        if between_chunks is not None:
            between_chunks(done, total)


def timeline_check_steps(
    result: TimelineResult,
    seed: int = 0,
    chunk_requests: int = CHUNK_REQUESTS,
    max_requests: int | None = None,
) -> Generator[tuple[int, int], None, TimelineCheck]:
    """``simulate_timeline`` a chunk at a time: yields (requests served so far, in all) after
    each chunk and returns the check, so that a caller can pause between chunks (the app's
    simulation worker keeps it paused while another visitor's turn runs)."""
    inputs = result.inputs
    workload = inputs.workload
    note = coverage_note(workload)
    if note is not None:
        raise ValueError(note)
    span = check_span(result, max_requests)
    if span.minutes == 0:
        cap = MAX_SIMULATED_REQUESTS if max_requests is None else max_requests
        raise ValueError(f"the first minute has more than the check's {cap:,} requests")
    arrival_seed, routing_seed = np.random.SeedSequence(seed).spawn(2)
    arrivals = _Arrivals(result, span, np.random.default_rng(arrival_seed), chunk_requests)
    queue = _queue_for(result, span, np.random.default_rng(routing_seed))
    latency_ms = np.empty(arrivals.total)
    bucket_s = max(MINUTE_S, inputs.step_s)
    n_minutes = len(result.minute_starts_s)
    per_minute = np.zeros(n_minutes, np.int64)
    for chunk, first, horizon_s in arrivals.chunks():
        minutes = np.floor(chunk / bucket_s + 1e-9).astype(np.int64)
        per_minute += np.bincount(minutes, minlength=n_minutes)[:n_minutes]
        queue.serve(chunk, first, horizon_s, latency_ms)
        yield first + chunk.size, arrivals.total
    simulated = np.full(n_minutes, np.nan)
    bounds = np.r_[0, np.cumsum(per_minute)]
    for minute in range(span.minutes):
        chunk = latency_ms[bounds[minute] : bounds[minute + 1]]
        if chunk.size:
            simulated[minute] = float(np.quantile(chunk, 0.99, method="inverted_cdf"))
    target = workload.p99_target_ms
    in_span = np.arange(n_minutes) < span.minutes
    steps = result.times_s < span.end_s - 1e-9
    model_over = result.offered_rps[steps] * inputs.step_s * result.over_target_share[steps]
    return TimelineCheck(
        minute_starts_s=result.minute_starts_s,
        model_p99_ms=result.minute_p99_ms,
        simulated_p99_ms=simulated,
        requests_per_minute=per_minute,
        compared=(per_minute >= MIN_REQUESTS_PER_MINUTE) & in_span,
        model_minutes_over=int(np.sum(result.minute_p99_ms[in_span] > target)),
        simulated_minutes_over=int(np.sum(simulated[in_span] > target)),
        model_requests_over=float(np.sum(model_over) + result.dropped_requests[steps].sum()),
        simulated_requests_over=int(np.sum(latency_ms > target)),
        requests=int(arrivals.total),
        seed=seed,
        span=span,
    )


class _Arrivals:
    """A Poisson stream of the offered rate over a span, drawn a chunk at a time in time order.

    Each step is drawn in pieces of at most ``PIECE_REQUESTS`` expected requests (a Poisson
    count per piece, uniform times within it), so a chunk can end inside a long busy step.
    Every count is drawn first, then the times chunk by chunk: the same requests whatever the
    chunk size."""

    def __init__(self, result: TimelineResult, span: CheckSpan, random, chunk_requests: int):
        step = result.inputs.step_s
        steps = int(np.sum(result.times_s < span.end_s - 1e-9))
        expected = result.offered_rps[:steps] * step
        pieces = np.maximum(1, np.ceil(expected / PIECE_REQUESTS)).astype(np.int64)
        self._step_of = np.repeat(np.arange(steps), pieces)
        first_piece = np.repeat(np.cumsum(pieces) - pieces, pieces)
        self._length_s = step / pieces[self._step_of]
        self._start_s = (
            result.times_s[self._step_of]
            + (np.arange(self._step_of.size) - first_piece) * self._length_s
        )
        self._counts = random.poisson(result.offered_rps[self._step_of] * self._length_s)
        self._ends = np.cumsum(self._counts)
        self._random = random
        self._chunk = max(1, chunk_requests)
        self.total = int(self._ends[-1]) if self._ends.size else 0

    def chunks(self):
        """``(sorted arrival times, index of the first, horizon)`` for each chunk in turn;
        every later arrival is at or after the horizon (``inf`` for the last chunk)."""
        pieces = self._counts.size
        begin = 0
        while begin < pieces:
            drawn = int(self._ends[begin - 1]) if begin else 0
            end = int(np.searchsorted(self._ends, drawn + self._chunk, side="right"))
            end = min(pieces, max(begin + 1, end))
            counts = self._counts[begin:end]
            chunk = np.repeat(self._start_s[begin:end], counts)
            chunk += self._random.random(chunk.size) * np.repeat(self._length_s[begin:end], counts)
            chunk.sort()
            yield chunk, drawn, (float(self._start_s[end]) if end < pieces else np.inf)
            begin = end


def _queue_for(result: TimelineResult, span: CheckSpan, random):
    workload = result.inputs.workload
    size = workload.effective_max_batch_size
    window_s = workload.batch_window_ms / 1000.0 if size > 1 else 0.0
    service_s = np.array([workload.batch_service_ms(b) / 1000.0 for b in range(size + 1)])
    steps = max(1, int(np.sum(result.times_s < span.end_s - 1e-9)))
    times_s = result.times_s[:steps].astype(float)
    replicas = result.ready_replicas[:steps].astype(np.int64)
    if workload.is_central_queue:
        return _PooledQueue(
            times_s, replicas * workload.slots_per_replica, size, window_s, service_s
        )
    return _BalancedReplicas(
        times_s,
        replicas,
        workload.slots_per_replica,
        size,
        window_s,
        service_s,
        round_robin=workload.lb_policy == "round_robin",
        random=random,
    )


class _PooledQueue:
    """The central queue over every ready replica's slots, served a chunk at a time."""

    def __init__(self, times_s, servers, size, window_s, service_s):
        from sdlab_model.simulation import _timeline_kernel

        self._kernel = _timeline_kernel
        change = np.flatnonzero(np.r_[True, servers[1:] != servers[:-1]])
        self._segment_start_s = times_s[change]
        self._segment_servers = servers[change]
        self._batch = (size, window_s, service_s)
        self._state = _timeline_kernel.start_queue(self._segment_start_s, self._segment_servers)
        self._carried = np.empty(0)
        self._carried_index = np.empty(0, np.int64)

    def serve(self, chunk, first, horizon_s, latency_ms) -> None:
        """Serve the carried requests and ``chunk`` (numbered from ``first``) up to the
        horizon; write each served request's latency (ms) at its number."""
        arrivals = np.concatenate([self._carried, chunk])
        index = np.concatenate([self._carried_index, np.arange(first, first + chunk.size)])
        completion = np.empty(arrivals.size)
        done = self._kernel.serve_queue_until(
            arrivals,
            *self._batch,
            self._segment_start_s,
            self._segment_servers,
            *self._state,
            horizon_s,
            np.empty(arrivals.size),
            completion,
        )
        latency_ms[index[:done]] = (completion[:done] - arrivals[:done]) * 1000.0
        self._carried, self._carried_index = arrivals[done:], index[done:]


class _BalancedReplicas:
    """Round robin or random over the replicas of the moment, each its own batching queue,
    served a chunk at a time (a replica's state kept per life, ``_timeline_kernel.route``)."""

    def __init__(self, times_s, replicas, slots, size, window_s, service_s, round_robin, random):
        from sdlab_model.simulation import _timeline_kernel

        self._kernel = _timeline_kernel
        change = np.flatnonzero(np.r_[True, replicas[1:] != replicas[:-1]])
        self._segment_start_s = times_s[change]
        self._segment_replicas = replicas[change]
        most_lives = max(
            1, int(replicas[change][0] + np.maximum(np.diff(replicas[change]), 0).sum())
        )
        self._life_start_s = np.empty(most_lives)
        self._alive, self._counters = _timeline_kernel.start_routing(
            self._segment_start_s, self._segment_replicas, self._life_start_s
        )
        self._heaps = np.empty((most_lives, slots))
        self._clocks_s = np.empty((most_lives, 2))
        self._prepared = 0
        self._slots = slots
        self._batch = (size, window_s, service_s)
        self._round_robin = round_robin
        self._random = random
        self._carried = np.empty(0)
        self._carried_life = np.empty(0, np.int64)
        self._carried_index = np.empty(0, np.int64)

    def serve(self, chunk, first, horizon_s, latency_ms) -> None:
        """As ``_PooledQueue.serve``: route ``chunk``, then serve each life up to the horizon."""
        life_of = np.empty(chunk.size, np.int64)
        uniform = np.empty(0) if self._round_robin else self._random.random(chunk.size)
        self._kernel.route_until(
            chunk,
            self._segment_start_s,
            self._segment_replicas,
            int(Policy.ROUND_ROBIN if self._round_robin else Policy.RANDOM),
            uniform,
            first,
            self._alive,
            self._counters,
            self._life_start_s,
            life_of,
        )
        lives = int(self._counters[1])
        new = slice(self._prepared, lives)
        self._heaps[new] = self._life_start_s[new, None]
        self._clocks_s[new, 0] = self._life_start_s[new]
        self._clocks_s[new, 1] = -np.inf
        self._prepared = lives
        arrivals = np.concatenate([self._carried, chunk])
        life_of = np.concatenate([self._carried_life, life_of])
        index = np.concatenate([self._carried_index, np.arange(first, first + chunk.size)])
        completion = np.empty(arrivals.size)
        served = np.zeros(arrivals.size, np.bool_)
        self._kernel.serve_lives_until(
            arrivals,
            life_of,
            self._life_start_s,
            self._slots,
            *self._batch,
            self._heaps,
            self._clocks_s,
            horizon_s,
            np.empty(arrivals.size),
            completion,
            served,
        )
        latency_ms[index[served]] = (completion[served] - arrivals[served]) * 1000.0
        waiting = ~served
        self._carried = arrivals[waiting]
        self._carried_life = life_of[waiting]
        self._carried_index = index[waiting]
