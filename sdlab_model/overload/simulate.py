"""A seeded event-driven simulation of the overload model, to check ``analytic.overload``.

One queue of the design (one replica: the balancer's Poisson thinning gives each replica a
Poisson stream, or the central queue), ``servers`` slots taking up to ``max_batch`` waiting
requests at once (greedy: no batch window) for ``batch_service_ms(b)``, a queue limit, a
deadline, and clients retrying after exponential backoffs within a token-bucket budget
(``_overload_kernel``, numba, imported only when a simulation runs).

Sized by simulated time: a first run of ``PILOT_ATTEMPTS`` fresh requests' worth; if any measure's
95% interval (batch means over ``MEANS_BATCHES`` equal spans of simulated time, after the first
``WARMUP_SHARE`` is dropped) is wider than ``rel_half_width`` of it, a longer run sized from the
shortfall, within ``max_attempts`` (every run's attempts together). Otherwise the result says
``converged=False`` and its intervals are what the budget bought.

Measures per attempt arriving in the measured span: the shares rejected, timed out and late, the
p99 of the served responses, and goodput (attempts served within the target, per second, times
the number of queues).

Sources: Law, *Simulation Modeling and Analysis* (5th ed.), ch. 9 (batch means, relative
half-width stopping); the analytic model's sources in ``shedding`` and ``retries``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.overload.outcome import Outcome
from sdlab_model.overload.policy import RETRY_BUDGET_DEPTH, OverloadPolicy, Station
from sdlab_model.simulation.simulator import percentiles, t_quantile_975
from sdlab_model.workload import Workload

PILOT_ATTEMPTS = 60_000
DEFAULT_MAX_ATTEMPTS = 1_500_000
MEANS_BATCHES = 20
WARMUP_SHARE = 0.1
DEFAULT_REL_HALF_WIDTH = 0.02
SHARE_FLOOR = 0.01
"""Shares below this are judged on ``rel_half_width x SHARE_FLOOR`` (a 0.1% share need not be
known to 2% of itself)."""
MEASURES = ("rejected_share", "timed_out_share", "late_share", "served_p99_ms", "goodput_rps")


@dataclass(frozen=True)
class Measured:
    """One measure's estimate and its 95% interval."""

    estimate: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return 0.5 * (self.high - self.low)


@dataclass(frozen=True)
class OverloadSim:
    """What ``simulate_overload`` measured (``MEASURES``, each ``Measured``)."""

    fresh_rps: float
    attempt_rps: float
    measures: dict[str, Measured]
    converged: bool
    attempts_simulated: int
    simulated_s: float
    seed: int
    note: str

    def __getitem__(self, name: str) -> Measured:
        return self.measures[name]


def _run(station, policy, rate_per_queue_ms, fresh_count, seed):
    """One run of ``fresh_count`` Poisson fresh requests; the kernel's arrays, trimmed."""
    gaps_stream, backoff_stream = np.random.SeedSequence(seed).spawn(2)
    gaps = np.random.default_rng(gaps_stream).exponential(1.0 / rate_per_queue_ms, fresh_count)
    return run_attempts(station, policy, np.cumsum(gaps), np.random.default_rng(backoff_stream))


def run_attempts(station: Station, policy: OverloadPolicy, fresh_ms: np.ndarray, backoff_rng):
    """Every attempt that the sorted ``fresh_ms`` and their retries make at one queue: arrival
    times, ``Outcome`` codes, responses (ms) and the last fresh arrival (ms)."""
    from sdlab_model.overload import _overload_kernel  # numba: only when a simulation runs

    fresh_count = fresh_ms.size
    capacity = fresh_count * (policy.max_retries + 1)
    backoff = backoff_rng.exponential(
        max(policy.backoff_ms, 1e-9), fresh_count * policy.max_retries
    )
    times = np.array([station.batch_time_ms(max(b, 1)) for b in range(station.max_batch + 1)])
    arrival, response = np.zeros(capacity), np.zeros(capacity)
    outcome, tries = np.zeros(capacity, dtype=np.int8), np.zeros(capacity, dtype=np.int64)
    count = _overload_kernel.run_overload(
        fresh_ms,
        backoff if backoff.size else np.zeros(1),
        station.servers,
        station.max_batch,
        times,
        -1 if policy.queue_limit is None else policy.queue_limit,
        math.inf if policy.deadline_ms is None else policy.deadline_ms,
        policy.max_retries,
        -1.0 if policy.retry_budget is None else policy.retry_budget,
        RETRY_BUDGET_DEPTH,
        arrival,
        outcome,
        response,
        tries,
    )
    return arrival[:count], outcome[:count], response[:count], float(fresh_ms[-1])


def _per_batch(arrival, outcome, response, start, end, good_ms, queues):
    """Each measure over each of ``MEANS_BATCHES`` equal spans of [start, end)."""
    edges = np.linspace(start, end, MEANS_BATCHES + 1)
    span_s = (end - start) / MEANS_BATCHES / 1000.0
    rows = []
    for low, high in itertools.pairwise(edges):
        inside = (arrival >= low) & (arrival < high)
        fate, resp = outcome[inside], response[inside]
        n = max(int(inside.sum()), 1)
        served = (fate == Outcome.SERVED) | (fate == Outcome.LATE)
        pending = fate == Outcome.PENDING
        # a request still waiting at the end has waited at least until then
        lower = np.where(pending, end - arrival[inside], resp)
        late_or_served = lower[served | pending]
        p99 = percentiles(late_or_served, (99,))[0] if late_or_served.size else math.nan
        good = np.count_nonzero((fate == Outcome.SERVED) & (resp <= good_ms))
        rows.append(
            (
                np.count_nonzero(fate == Outcome.REJECTED) / n,
                np.count_nonzero(fate == Outcome.TIMED_OUT) / n,
                np.count_nonzero(fate == Outcome.LATE) / n,
                p99,
                good / span_s * queues,
            )
        )
    return np.array(rows)


def _pooled(arrival, outcome, response, start, end, good_ms, queues) -> list[float]:
    """Each measure over the whole measured span."""
    return list(_per_batch(arrival, outcome, response, start, end, good_ms, queues).mean(axis=0))


def simulate_overload(
    workload: Workload,
    policy: OverloadPolicy,
    fresh_rps: float | None = None,
    *,
    seed: int = 0,
    rel_half_width: float = DEFAULT_REL_HALF_WIDTH,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> OverloadSim:
    """Simulate one queue of ``workload`` under ``policy`` at ``fresh_rps`` (default its rate)
    until every measure's 95% interval is within ``rel_half_width`` or ``max_attempts`` is
    spent."""
    rate = workload.rate_rps if fresh_rps is None else float(fresh_rps)
    if not (math.isfinite(rate) and rate > 0.0):
        raise ValueError(f"fresh_rps must be a number above 0, got {fresh_rps!r}")
    station = Station.of(workload)
    per_queue_ms = rate / station.queues / 1000.0
    good_ms = min(workload.p99_target_ms, policy.deadline_ms or math.inf)
    fresh_count, spent = PILOT_ATTEMPTS, 0
    while True:
        arrival, outcome, response, end = _run(station, policy, per_queue_ms, fresh_count, seed)
        spent += arrival.size
        start = WARMUP_SHARE * end
        rows = _per_batch(arrival, outcome, response, start, end, good_ms, station.queues)
        measures, worst = _summarize(rows)
        per_fresh = max(arrival.size / fresh_count, 1.0)
        wanted = math.ceil(fresh_count * min(100.0, max(1.5, (worst / rel_half_width) ** 2 * 1.2)))
        affordable = int((max_attempts - spent) / per_fresh)
        if worst <= rel_half_width or affordable < 1.5 * fresh_count:
            break
        fresh_count = min(wanted, affordable)
    converged = worst <= rel_half_width
    measured = (arrival >= start) & (arrival < end)
    attempt_rps = np.count_nonzero(measured) / ((end - start) / 1000.0) * station.queues
    note = (
        f"{'Converged' if converged else 'Not converged'}: {spent:,} attempts simulated, "
        f"{(end - start) / 1000.0:.3g} s measured after {start / 1000.0:.3g} s of warm-up"
        + ("" if converged else f"; widest interval ±{worst:.1%}, over ±{rel_half_width:.1%}")
        + "."
    )
    return OverloadSim(rate, attempt_rps, measures, converged, spent, end / 1000.0, seed, note)


def _summarize(rows: np.ndarray) -> tuple[dict[str, Measured], float]:
    """Each measure's batch-means interval, and the widest relative half-width."""
    measures, worst = {}, 0.0
    t = t_quantile_975(MEANS_BATCHES - 1)
    for column, name in enumerate(MEASURES):
        values = rows[:, column]
        if np.isnan(values).any():
            measures[name] = Measured(math.nan, math.nan, math.nan)
            worst = math.inf
            continue
        mean = float(values.mean())
        half = t * float(values.std(ddof=1)) / math.sqrt(MEANS_BATCHES)
        measures[name] = Measured(mean, mean - half, mean + half)
        scale = max(abs(mean), SHARE_FLOOR) if name.endswith("share") else abs(mean)
        worst = max(worst, half / scale if scale > 0 else 0.0)
    return measures, worst
