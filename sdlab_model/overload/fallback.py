"""Degradation: a cheaper, lower-quality fallback model that takes the primary's overflow.

The primary is the design's replicas under an ``OverloadPolicy`` (``analytic.overload``). A
request the primary turns away at its queue limit (and, with ``take_timed_out``, one that waited
out its deadline) goes to the fallback instead of failing: its own ``replicas`` x ``workers``,
its own model latency (deterministic), its own queue limit, the primary's deadline on its queue
(the same server configuration), its own price. What the fallback turns away is lost. With a
fallback the client does not retry: the fallback takes the place of retries.

The fallback's queue is ``shedding.shed`` at the overflow rate, Poisson, split evenly over its
replicas; a request from a timeout reaches it ``T`` after it arrived at the primary, and that
wait counts in its response. The percentiles of the fallback path and of all answered requests
are quantiles of the mixture of each path's answered-response law (``shed``'s share within a
target, bisected). Shares are of fresh requests.

Approximations: the overflow of a bounded queue is burstier than Poisson (its peakedness, the
variance over the mean of the busy servers it would hold, is above 1: it comes while the primary
is full). Modelled as Poisson at its mean rate, the fallback's queue is optimistic where the
overflow is small and bursty; where the primary is far past capacity the overflow is nearly
Poisson (fresh arrivals minus a nearly steady departure stream). Wilkinson's equivalent random
method and Hayward's or Fredericks' approximation scale a loss system for peaky traffic; they
are not used here: the flag rule (``flag_reason``, set on ``validation``'s tuning grid) marks
where the Poisson fallback is off the simulation, which runs the real overflow
(``simulate_fallback``).

Sources: R. I. Wilkinson, "Theories for toll traffic engineering in the U.S.A.", Bell Syst.
Tech. J. 35 (1956) 421-514 (overflow traffic, peakedness, equivalent random method); A. A.
Fredericks, "Congestion in blocking systems: a simple approximation technique", Bell Syst. Tech.
J. 59 (1980) 805-827 (Hayward's approximation); J. Riordan's peakedness of M/M/n overflow, in
Wilkinson (1956) and Cooper, *Introduction to Queueing Theory* (2nd ed., 1981) §6.3; the
overload model's sources in ``shedding``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sdlab_model.overload.analytic import OverloadResult, overload
from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.shedding import SERVED_QUANTILE, Shedding, shed
from sdlab_model.workload import Workload

FALLBACK_RANGES: dict[str, tuple[float, float]] = {
    "replicas": (0, 1_000),
    "workers_per_replica": (1, 1_024),
    "model_latency_ms": (0.01, 60_000.0),
    "queue_limit": (0, 100_000),
    "usd_per_replica_hour": (0.0, 1_000.0),
}
"""Allowed values of each ``FallbackModel`` field (``queue_limit`` and the price may be None)."""
OVERFLOW_FLAG_SHARE = 0.05
"""Below this share of fresh requests overflowing, the overflow comes in the primary's rare
full spells, far from Poisson: the fallback's numbers are flagged. Set on the tuning grid."""
FALLBACK_FLAG_LOAD = 0.8
"""A fallback busier than this (utilization) meets the overflow's bursts with a queue: flagged.
Set on the tuning grid."""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class FallbackModel:
    """The fallback: ``replicas`` 0 means none (the primary's result, unchanged)."""

    replicas: int = 0
    workers_per_replica: int = 4
    model_latency_ms: float = 5.0
    queue_limit: int | None = None
    take_timed_out: bool = False
    usd_per_replica_hour: float | None = None

    def __post_init__(self) -> None:
        for name, (low, high) in FALLBACK_RANGES.items():
            value = getattr(self, name)
            if value is None and name in ("queue_limit", "usd_per_replica_hour"):
                continue
            if not _is_number(value):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} = {value:g} is outside {low:g} to {high:g}")
        for name in ("replicas", "workers_per_replica", "queue_limit"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}")

    @property
    def is_on(self) -> bool:
        return self.replicas > 0

    @property
    def station(self) -> Station:
        """The fallback's queues: one per replica, the overflow split evenly over them."""
        return Station(self.workers_per_replica, float(self.model_latency_ms), self.replicas)

    def policy(self, primary: OverloadPolicy) -> OverloadPolicy:
        """The fallback's queue: its own limit, the primary's deadline, no retries."""
        return OverloadPolicy(queue_limit=self.queue_limit, deadline_ms=primary.deadline_ms)


@dataclass(frozen=True)
class FallbackResult:
    """The design with its fallback at one fresh rate. Shares are of fresh requests and sum to
    1 (``primary_share + fallback_share + lost_share``); ``goodput_rps`` counts both paths'
    answers within the p99 target, each timed from its arrival at the primary."""

    primary: OverloadResult
    """The primary alone: ``overload``'s own result (without retries when the fallback is on)."""
    fallback: FallbackModel
    overflow_rps: float
    primary_share: float
    fallback_share: float
    lost_share: float
    primary_p99_ms: float
    fallback_p99_ms: float
    answered_p99_ms: float
    goodput_rps: float
    fallback_utilization: float
    fallback_is_stable: bool
    primary_usd_per_hour: float
    fallback_usd_per_hour: float
    approximate_because: str | None
    flagged_because: str | None

    @property
    def total_usd_per_hour(self) -> float:
        return self.primary_usd_per_hour + self.fallback_usd_per_hour


def primary_usd_per_hour(workload: Workload) -> float:
    """The design's replicas at their price per replica-hour (GPU or CPU)."""
    price = workload.gpu_usd_per_replica_hour if workload.gpu else workload.cpu_usd_per_replica_hour
    return workload.replicas * float(price)


def with_fallback(
    workload: Workload,
    policy: OverloadPolicy,
    fallback: FallbackModel,
    fresh_rps: float | None = None,
) -> FallbackResult:
    """``workload`` under ``policy`` at ``fresh_rps`` (default its rate) with ``fallback``.

    Off (``fallback.replicas == 0``): ``primary`` is ``overload(workload, policy, fresh_rps)``
    itself and every other number is read from it.
    """
    if not fallback.is_on:
        return _alone(workload, policy, fallback, fresh_rps)
    primary = overload(workload, replace(policy, max_retries=0), fresh_rps)
    rate, target = primary.fresh_rps, workload.p99_target_ms
    deadline = math.inf if policy.deadline_ms is None else policy.deadline_ms
    timed_out = primary.timed_out_share if fallback.take_timed_out else 0.0
    sent = primary.rejected_share + timed_out
    overflow = rate * sent
    station, fb_policy = fallback.station, fallback.policy(policy)
    queue = shed(station, overflow, fb_policy, target) if overflow > 0 else None
    stable = queue is None or queue.is_stable
    answered_fb = 0.0 if queue is None or not stable else 1.0 - queue.failed_share
    primary_station = Station.of(workload)
    primary_policy = replace(policy, max_retries=0)

    def fallback_within(x_ms: float) -> float:
        """P(sent to the fallback, answered, response from arrival <= x_ms), of fresh."""
        if queue is None or not stable:
            return 0.0
        within = primary.rejected_share * _good(station, overflow, fb_policy, x_ms)
        if timed_out:
            within += timed_out * _good(station, overflow, fb_policy, x_ms - deadline)
        return within

    def primary_within(x_ms: float) -> float:
        if not primary.is_stable:
            return 0.0
        return _good(primary_station, primary.attempt_rps, primary_policy, x_ms)

    primary_answered = 1.0 - primary.rejected_share - primary.timed_out_share - primary.late_share
    fallback_share = sent * answered_fb
    return FallbackResult(
        primary=primary,
        fallback=fallback,
        overflow_rps=overflow,
        primary_share=primary_answered if primary.is_stable else 0.0,
        fallback_share=fallback_share,
        lost_share=max(0.0, 1.0 - primary_answered - fallback_share) if primary.is_stable else 1.0,
        primary_p99_ms=primary.served_p99_ms,
        fallback_p99_ms=_quantile(fallback_within, fallback_share, deadline)
        if stable
        else math.inf,
        answered_p99_ms=_quantile(
            lambda x: primary_within(x) + fallback_within(x),
            primary_answered + fallback_share,
            2.0 * deadline,
        )
        if primary.is_stable
        else math.inf,
        goodput_rps=rate * (primary_within(target) + fallback_within(target)),
        fallback_utilization=math.nan if queue is None else queue.utilization,
        fallback_is_stable=stable,
        primary_usd_per_hour=primary_usd_per_hour(workload),
        fallback_usd_per_hour=fallback.replicas * (fallback.usd_per_replica_hour or math.nan),
        approximate_because=_approximate(primary, queue),
        flagged_because=flag_reason(primary, sent, queue, fallback.queue_limit is not None),
    )


def _alone(workload, policy, fallback, fresh_rps) -> FallbackResult:
    primary = overload(workload, policy, fresh_rps)
    answered = 1.0 - primary.client_failure_share
    return FallbackResult(
        primary=primary,
        fallback=fallback,
        overflow_rps=0.0,
        primary_share=answered,
        fallback_share=0.0,
        lost_share=1.0 - answered,
        primary_p99_ms=primary.served_p99_ms,
        fallback_p99_ms=math.nan,
        answered_p99_ms=primary.served_p99_ms,
        goodput_rps=primary.goodput_rps,
        fallback_utilization=math.nan,
        fallback_is_stable=True,
        primary_usd_per_hour=primary_usd_per_hour(workload),
        fallback_usd_per_hour=0.0,
        approximate_because=primary.approximate_because,
        flagged_because=primary.flagged_because,
    )


def _good(station: Station, rate_rps: float, policy: OverloadPolicy, x_ms: float) -> float:
    """P(answered and response <= x_ms) at ``station`` (``Shedding.good_share`` at target x)."""
    if x_ms <= 0.0 or rate_rps <= 0.0:
        return 0.0
    return shed(station, rate_rps, policy, x_ms, with_p99=False).good_share


def _quantile(within, total: float, high_ms: float) -> float:
    """The ``SERVED_QUANTILE`` of the responses whose law is ``within(x) / total``, by
    bisection; nan where nothing is answered."""
    if total <= 1e-12:
        return math.nan
    needed = SERVED_QUANTILE * total
    high = high_ms if math.isfinite(high_ms) else 1.0
    while within(high) < needed:
        high *= 2.0
        if high > 1e9:
            return math.inf
    low = 0.0
    for _ in range(60):
        middle = 0.5 * (low + high)
        if within(middle) >= needed:
            high = middle
        else:
            low = middle
        if high - low <= 1e-6 * high:
            break
    return high


def _approximate(primary: OverloadResult, queue: Shedding | None) -> str | None:
    reasons = [primary.approximate_because] if primary.approximate_because else []
    if queue is not None:
        reasons.append("the overflow reaches the fallback as Poisson at its mean rate")
        if queue.approximate_because:
            reasons.append(f"fallback: {queue.approximate_because}")
    return "; ".join(reasons) or None


def flag_reason(
    primary: OverloadResult, sent: float, queue: Shedding | None, bounded: bool = False
) -> str | None:
    """Why the numbers may miss the simulation's by more than the tolerance, or None: the
    primary's own flag; a small overflow (``OVERFLOW_FLAG_SHARE``), which comes in bursts while
    the primary is full; a busy fallback (``FALLBACK_FLAG_LOAD``), whose queue those bursts
    fill; a fallback with a queue limit (``bounded``), whose losses come in those bursts (the
    tuning grid's 2 workers, limit 4, 41% busy: 0.008% lost modelled, 1.1% simulated). Set on
    ``fallback_validation.TUNING_GRID``."""
    if primary.flagged_because:
        return f"primary: {primary.flagged_because}"
    if queue is None:
        return None
    if 0.0 < sent < OVERFLOW_FLAG_SHARE:
        return (
            f"{sent:.1%} of requests overflow, in bursts while the primary is full, far from "
            "the Poisson stream modelled"
        )
    if queue.utilization > FALLBACK_FLAG_LOAD:
        return (
            f"the fallback is {queue.utilization:.0%} busy: the overflow's bursts queue there "
            "longer than a Poisson stream's"
        )
    if bounded:
        return (
            "the fallback's queue limit turns away the overflow's bursts, which a Poisson "
            "stream of the same rate rarely fills"
        )
    return None
