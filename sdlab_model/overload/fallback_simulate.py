"""A seeded simulation of the primary and its fallback, to check ``fallback.with_fallback``.

The fallback never sends work back, so the two queues run one after the other with the same
compiled event loop (``simulate.run_attempts``, ``_overload_kernel``): the primary's Poisson
stream first, without retries; then every request it rejected (at its arrival) and, with
``take_timed_out``, every one it dropped at the deadline (at that moment), sorted, each sent to
one of the fallback's replicas at random. The overflow is the simulated one, bursts and all.

Sized by simulated time as ``simulate_overload`` is: a first run of ``PILOT_ATTEMPTS`` fresh
requests, then one sized from the widest 95% batch-means interval (``MEANS_BATCHES`` spans by
arrival at the primary after ``WARMUP_SHARE``, up to ``END_SHARE``), within ``max_attempts``;
otherwise ``converged=False``.

Measures (``FALLBACK_MEASURES``), per fresh request arriving in the measured span: the shares
answered by the fallback and lost, the p99 of the primary's served responses (late included, as
``simulate_overload``), of the fallback's answers and of every answer (each timed from arrival
at the primary), and the goodput.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from sdlab_model.overload.fallback import FallbackModel
from sdlab_model.overload.outcome import Outcome
from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.simulate import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_REL_HALF_WIDTH,
    MEANS_BATCHES,
    PILOT_ATTEMPTS,
    SHARE_FLOOR,
    WARMUP_SHARE,
    Measured,
    run_attempts,
)
from sdlab_model.simulation.simulator import percentiles, t_quantile_975
from sdlab_model.workload import Workload

END_SHARE = 0.97
"""The measured span ends here: requests the fallback still held when its stream ended would
read as lost."""
FALLBACK_MEASURES = (
    "fallback_share",
    "lost_share",
    "primary_p99_ms",
    "fallback_p99_ms",
    "answered_p99_ms",
    "goodput_rps",
)


@dataclass(frozen=True)
class FallbackSim:
    """What ``simulate_fallback`` measured (``FALLBACK_MEASURES``, each ``Measured``)."""

    fresh_rps: float
    measures: dict[str, Measured]
    converged: bool
    attempts_simulated: int
    seed: int
    note: str

    def __getitem__(self, name: str) -> Measured:
        return self.measures[name]


@dataclass(frozen=True)
class _Run:
    """Per fresh request: arrival at the primary, its path (0 primary answered, 1 fallback
    answered, 2 lost), the response from arrival (answered), and the primary's response where
    it served (late included; nan otherwise)."""

    arrival: np.ndarray
    path: np.ndarray
    response: np.ndarray
    primary_response: np.ndarray
    end: float
    attempts: int


def _run(station, policy, fallback: FallbackModel, per_queue_ms, count, seed) -> _Run:
    gaps, backoff, split, fb_backoff = np.random.SeedSequence(seed).spawn(4)
    fresh = np.cumsum(np.random.default_rng(gaps).exponential(1.0 / per_queue_ms, count))
    arrival, outcome, response, end = run_attempts(
        station, policy, fresh, np.random.default_rng(backoff)
    )
    path = np.where(outcome == Outcome.SERVED, 0, 2).astype(np.int8)
    answer = np.where(outcome == Outcome.SERVED, response, np.nan)
    primary_served = (outcome == Outcome.SERVED) | (outcome == Outcome.LATE)
    primary_response = np.where(primary_served, response, np.nan)
    sent = outcome == Outcome.REJECTED
    leave = arrival.copy()
    if fallback.take_timed_out and policy.deadline_ms is not None:
        timed_out = outcome == Outcome.TIMED_OUT
        leave[timed_out] += policy.deadline_ms
        sent |= timed_out
    attempts = arrival.size
    index = np.flatnonzero(sent)
    if index.size:
        replica = np.random.default_rng(split).integers(0, fallback.replicas, index.size)
        fb_station = replace(fallback.station, queues=1)
        fb_policy = fallback.policy(policy)
        for r in range(fallback.replicas):
            mine = index[replica == r]
            if not mine.size:
                continue
            mine = mine[np.argsort(leave[mine], kind="stable")]
            _, fb_outcome, fb_response, _ = run_attempts(
                fb_station, fb_policy, leave[mine], np.random.default_rng(fb_backoff)
            )
            attempts += fb_outcome.size
            ok = fb_outcome == Outcome.SERVED
            path[mine[ok]] = 1
            answer[mine[ok]] = leave[mine[ok]] - arrival[mine[ok]] + fb_response[ok]
    keep = arrival <= end
    return _Run(arrival[keep], path[keep], answer[keep], primary_response[keep], end, attempts)


def _per_batch(run: _Run, start: float, end: float, good_ms: float, queues: int) -> np.ndarray:
    edges = np.linspace(start, end, MEANS_BATCHES + 1)
    span_s = (end - start) / MEANS_BATCHES / 1000.0
    rows = []
    for low, high in itertools.pairwise(edges):
        inside = (run.arrival >= low) & (run.arrival < high)
        path, answer = run.path[inside], run.response[inside]
        n = max(int(inside.sum()), 1)
        primary = run.primary_response[inside]
        fb = answer[path == 1]
        rows.append(
            (
                np.count_nonzero(path == 1) / n,
                np.count_nonzero(path == 2) / n,
                _p99(primary[np.isfinite(primary)]),
                _p99(fb),
                _p99(answer[path < 2]),
                np.count_nonzero((path < 2) & (answer <= good_ms)) / span_s * queues,
            )
        )
    return np.array(rows)


def _p99(values: np.ndarray) -> float:
    return float(percentiles(values, (99,))[0]) if values.size else math.nan


def simulate_fallback(
    workload: Workload,
    policy: OverloadPolicy,
    fallback: FallbackModel,
    fresh_rps: float | None = None,
    *,
    seed: int = 0,
    rel_half_width: float = DEFAULT_REL_HALF_WIDTH,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> FallbackSim:
    """Simulate one primary queue of ``workload`` and the fallback's share of its overflow.

    The primary's queues each overflow to all the fallback's replicas; one primary queue is
    simulated with ``1 / queues`` of the fallback (its replicas' rate share): the fallback's
    replicas are scaled to ``replicas / queues`` by thinning the overflow they receive, which
    needs ``replicas`` to be a multiple of the primary's queues or the primary to have one.
    """
    rate = workload.rate_rps if fresh_rps is None else float(fresh_rps)
    if not (math.isfinite(rate) and rate > 0.0):
        raise ValueError(f"fresh_rps must be a number above 0, got {fresh_rps!r}")
    if not fallback.is_on:
        raise ValueError("the fallback is off (replicas 0): simulate_overload checks the primary")
    station = Station.of(workload)
    if fallback.replicas % station.queues:
        raise ValueError(
            f"fallback replicas ({fallback.replicas}) must be a multiple of the primary's "
            f"queues ({station.queues}) to simulate one primary queue's share"
        )
    share = replace(fallback, replicas=fallback.replicas // station.queues)
    policy = replace(policy, max_retries=0)
    per_queue_ms = rate / station.queues / 1000.0
    good_ms = workload.p99_target_ms
    count, spent = PILOT_ATTEMPTS, 0
    while True:
        run = _run(station, policy, share, per_queue_ms, count, seed)
        spent += run.attempts
        start, end = WARMUP_SHARE * run.end, END_SHARE * run.end
        rows = _per_batch(run, start, end, good_ms, station.queues)
        measures, worst = _summarize(rows)
        per_fresh = max(run.attempts / count, 1.0)
        wanted = math.ceil(count * min(100.0, max(1.5, (worst / rel_half_width) ** 2 * 1.2)))
        affordable = int((max_attempts - spent) / per_fresh)
        if worst <= rel_half_width or affordable < 1.5 * count:
            break
        count = min(wanted, affordable)
    converged = worst <= rel_half_width
    note = (
        f"{'Converged' if converged else 'Not converged'}: {spent:,} attempts simulated"
        + ("" if converged else f"; widest interval ±{worst:.1%}, over ±{rel_half_width:.1%}")
        + "."
    )
    return FallbackSim(rate, measures, converged, spent, seed, note)


def _summarize(rows: np.ndarray) -> tuple[dict[str, Measured], float]:
    measures, worst = {}, 0.0
    t = t_quantile_975(MEANS_BATCHES - 1)
    for column, name in enumerate(FALLBACK_MEASURES):
        values = rows[:, column]
        values = values[np.isfinite(values)]
        if values.size < 2:
            measures[name] = Measured(math.nan, math.nan, math.nan)
            continue
        mean = float(values.mean())
        half = t * float(values.std(ddof=1)) / math.sqrt(values.size)
        measures[name] = Measured(mean, mean - half, mean + half)
        scale = max(abs(mean), SHARE_FLOOR) if name.endswith("share") else abs(mean)
        worst = max(worst, half / scale if scale > 0 else 0.0)
    return measures, worst


def overflow_dispersion(
    workload: Workload,
    policy: OverloadPolicy,
    fresh_rps: float,
    windows_ms: tuple[float, ...] = (1.0, 5.0, 20.0, 100.0),
    *,
    fresh_count: int = 400_000,
    seed: int = 0,
) -> dict[float, float]:
    """The index of dispersion (variance over mean of the count in a window) of one primary
    queue's rejected requests, for each window length: 1 for a Poisson stream, above it for
    bursts. What the fallback's Poisson model leaves out."""
    station = Station.of(workload)
    gaps, backoff = np.random.SeedSequence(seed).spawn(2)
    per_queue_ms = fresh_rps / station.queues / 1000.0
    fresh = np.cumsum(np.random.default_rng(gaps).exponential(1.0 / per_queue_ms, fresh_count))
    arrival, outcome, _, end = run_attempts(
        station, replace(policy, max_retries=0), fresh, np.random.default_rng(backoff)
    )
    overflow = arrival[outcome == Outcome.REJECTED]
    dispersion = {}
    for window in windows_ms:
        counts = np.histogram(overflow, bins=np.arange(WARMUP_SHARE * end, end, window))[0]
        mean = counts.mean() if counts.size else 0.0
        dispersion[window] = float(counts.var() / mean) if mean > 0 else math.nan
    return dispersion
