"""Clients that retry, with and without a retry budget: the offered load as a fixed point.

Fresh requests arrive at ``fresh_rps``. An attempt fails (rejected, timed out or late) with the
probability ``p(lambda)`` that the queue gives at the attempt rate ``lambda`` (``shedding.shed``),
and a failed attempt is retried up to ``max_retries`` times. Taking each attempt's fate as
independent of the others (the usual fixed-point reading), the attempt rate solves

    lambda = fresh + retries(lambda),  retries = fresh (p + p^2 + ... + p^n)

and with a budget of ``b`` retries per fresh request ``retries = min(fresh (p + ... + p^n),
b fresh)`` (a token bucket's long-run rate; its depth matters only for bursts). ``lambda`` is
found by a scan from ``fresh`` upwards, the first crossing refined by bisection: the load a
system reaches as its traffic rises. A second stable crossing above it is a *retry storm*: a load
the system can stay stuck in once a burst has pushed it there (``storm_attempt_rps``).

Without a budget and past capacity every failure is retried ``n`` times: the offered load grows
towards ``(1 + n) fresh`` and the queue stays full. The budget holds it below ``(1 + b) fresh``.

Approximations: retries are taken as Poisson and independent of the attempt that failed; the
backoff does not enter (a steady state).

Sources: Beyer et al., *Site Reliability Engineering* (2016) ch. 22 (retry amplification, budgets
of 10-20%); M. Brooker, "Timeouts, retries, and backoff with jitter" (Amazon Builders' Library,
2019); Envoy ``retry_budget``; gRPC A6 retry throttling; Bronson et al., "Metastable failures
in distributed systems", HotOS 2021.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.overload.shedding import Shedding, shed

SCAN_POINTS = 32
BISECTION_STEPS = 40


@dataclass(frozen=True)
class RetryFixedPoint:
    """The attempt rate that fresh requests and their retries make, and the queue there."""

    fresh_rps: float
    attempt_rps: float
    retry_rps: float
    queue: Shedding
    storm_attempt_rps: float | None
    """A second, higher steady attempt rate, where one exists (a retry storm can stick)."""

    @property
    def amplification(self) -> float:
        """Attempts per fresh request."""
        return self.attempt_rps / self.fresh_rps if self.fresh_rps > 0 else 1.0


def wanted_retries(fresh_rps: float, failed: float, policy: OverloadPolicy) -> float:
    """Retries per second the failures ask for, within the budget if there is one."""
    n = policy.max_retries
    if n == 0 or failed <= 0.0:
        return 0.0
    series = n if failed >= 1.0 else failed * (1.0 - failed**n) / (1.0 - failed)
    retries = fresh_rps * series
    if policy.retry_budget is not None:
        retries = min(retries, policy.retry_budget * fresh_rps)
    return retries


def retry_fixed_point(
    station: Station, fresh_rps: float, policy: OverloadPolicy, target_ms: float
) -> RetryFixedPoint:
    """The attempt rate ``lambda = fresh + retries(lambda)`` and the queue at that rate."""

    def queue_at(rate: float) -> Shedding:
        return shed(station, rate, policy, target_ms)

    if not policy.max_retries or not policy.sheds or fresh_rps <= 0.0:
        return RetryFixedPoint(fresh_rps, fresh_rps, 0.0, queue_at(fresh_rps), None)

    def excess(rate: float) -> float:
        failed = shed(station, rate, policy, target_ms, with_p99=False).failed_share
        return fresh_rps + wanted_retries(fresh_rps, failed, policy) - rate

    top = fresh_rps + wanted_retries(fresh_rps, 1.0, policy)
    rates = [fresh_rps + (top - fresh_rps) * k / SCAN_POINTS for k in range(SCAN_POINTS + 1)]
    values = [excess(rate) for rate in rates]
    roots = [
        _bisect(excess, rates[k], rates[k + 1])
        for k in range(SCAN_POINTS)
        if values[k] >= 0.0 > values[k + 1]
    ]
    attempt = roots[0] if roots else top
    storm = roots[-1] if len(roots) > 1 else None
    return RetryFixedPoint(fresh_rps, attempt, attempt - fresh_rps, queue_at(attempt), storm)


def _bisect(function: Callable[[float], float], low: float, high: float) -> float:
    for _ in range(BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if function(middle) > 0.0:
            low = middle
        else:
            high = middle
        if high - low <= 1e-7 * high:
            break
    return 0.5 * (low + high)


def client_failure_share(point: RetryFixedPoint) -> float:
    """Fresh requests that never get an answer in time: failed attempts not retried."""
    if point.fresh_rps <= 0.0:
        return 0.0
    failed = point.attempt_rps * point.queue.failed_share - point.retry_rps
    return min(1.0, max(0.0, failed / point.fresh_rps)) if math.isfinite(failed) else 1.0
