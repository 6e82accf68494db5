"""One queue with a limit and a deadline, analytically: what is rejected, timed out or late, the
p99 of what is served, and the share served within a target.

The queue: Poisson arrivals at ``attempt_rps`` (fresh requests and retries alike), ``c`` servers,
a deterministic service time ``D``, FCFS; at most ``K`` waiting (more are rejected at once); a
request waiting longer than the deadline ``T`` leaves unserved (timed out); one that starts in
time but ends after ``T`` is served *late* (its client has gone).

Two regimes:

- Below capacity (``rho = lambda D / c < 1``, no batching): the infinite M/D/c queue's exact
  waiting-time law (``queues.mdc.MdcWait``, Crommelin-Franx), truncated. With FCFS and a fixed
  deadline a request whose wait would pass ``w_max = min(T, w_K)`` never gets service (``w_K =
  (K + KAPPA) D / c``, the wait of the K-th place: K departure gaps); the share lost is
  ``(1 - rho) P(W > w_max) / (1 - rho P(W > w_max))`` and those served wait ``W | W <= w_max``.
  Exact for M/M/c/K and for one server with a deadline (Baccelli, Boyer & Hebuterne 1984); for
  M/D/c/K Tijms' truncation heuristic. ``K -> inf`` and ``T -> inf`` give the M/D/c model itself.
- At or past capacity, or batched: no infinite queue to truncate. Whitt's diffusion scaling of
  the G/GI/c/K queue: the M/M/c/K' birth-death with ``K' = 2K / (1 + cs^2)`` scaled places, each
  worth ``D (1 + cs^2) / (2c)`` of waiting (deterministic service, ``cs^2 = 0``: twice as many
  places, each half a departure gap). The state an arrival sees (PASTA) gives its fate; its wait
  is the departure it waits for, from servers with independent uniform residuals
  (``DepartureWait``).

A queue with neither limit nor deadline at or past capacity has no steady state: unstable (∞).

Approximations: as above (``approximate_because`` says which applies). Batched slots are seen as
``c x b`` servers of a ``b``-request batch's time, ``b`` the batch that keeps the slots
``BATCH_UTILIZATION`` busy at this rate (``typical_batch``; full batches past capacity).

Sources: Gross, Shortle, Thompson & Harris, *Fundamentals of Queueing Theory* (4th ed., 2008)
§2.5 (M/M/c/K) and §5.1.9 (M/G/1/K from M/G/1); Tijms, *A First Course in Stochastic Models*
(2003) §9.4 (M/D/c) and §9.5 (finite-buffer heuristics); F. Baccelli, P. Boyer, G. Hebuterne,
"Single-server queues with impatient customers", Adv. Appl. Prob. 16 (1984) 887-905; W. Whitt,
"A diffusion approximation for the G/GI/n/m queue", Oper. Res. 52 (2004) 922-941.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from sdlab_model.overload.policy import OverloadPolicy, Station
from sdlab_model.queues.mdc import MdcWait, log_factorial

KAPPA = 0.0
"""The K-th waiting place waits ``(K + KAPPA) D / c``; 0 (K departure gaps) fitted the full
queue best on the tuning grid (``overload.validation.TUNING_GRID``)."""
SERVED_QUANTILE = 0.99
BATCH_UTILIZATION = 0.8
"""Batched slots: the batch a slot takes is the smallest that keeps them this busy. Set on the
tuning grid."""
MAX_PLACES = 1_000_000_000
"""Most scaled waiting places the birth-death holds (blocks keep the arrays at ``MAX_BLOCKS``)."""
MAX_BLOCKS = 4_000
"""Beyond this many places, all but the top half of them are summed into blocks, each waiting as
its middle place (``_blocks``): far below the limit the wait they share is a few departures
against thousands, and the top, where the mass piles past capacity, stays place by place."""


@dataclass(frozen=True)
class Shedding:
    """One queue's fate of an attempt at ``attempt_rps``: shares of attempts, the served p99.

    ``good_share``: attempts served (not late) within the target. ``served_p99_ms`` is the p99
    of every served attempt's response, late ones included; ``inf`` where nothing settles.
    """

    attempt_rps: float
    utilization: float
    rejected_share: float
    timed_out_share: float
    late_share: float
    good_share: float
    served_p99_ms: float
    is_stable: bool
    approximate_because: str | None

    @property
    def failed_share(self) -> float:
        """Attempts the client sees fail: rejected, timed out or late (and so retried)."""
        return self.rejected_share + self.timed_out_share + self.late_share

    @property
    def served_share(self) -> float:
        return 1.0 - self.rejected_share - self.timed_out_share


def _unstable(rate: float, rho: float) -> Shedding:
    return Shedding(rate, rho, 0.0, 0.0, 0.0, 0.0, math.inf, False, None)


def shed(
    station: Station,
    attempt_rps: float,
    policy: OverloadPolicy,
    target_ms: float,
    scv: float = 0.0,
    with_p99: bool = True,
) -> Shedding:
    """The fate of an attempt arriving at one of ``station``'s queues at ``attempt_rps`` in all.

    ``scv``: the service time's squared coefficient of variation (0 deterministic, as the Lab's
    model; 1 exponential, where the birth-death is M/M/c/K itself). ``with_p99=False`` skips the
    served p99 (``nan``): a fixed point's scan needs only the shares.
    """
    rate = attempt_rps / station.queues / 1000.0  # per ms, per queue
    batch = typical_batch(station, attempt_rps)
    c, d = station.servers * batch, station.batch_time_ms(batch)
    a = rate * d
    rho = a / c
    limit, deadline = policy.queue_limit, policy.deadline_ms
    if limit is None and deadline is None and rho >= 1.0:
        return _unstable(attempt_rps, rho)
    if rho < 1.0 and batch == 1 and scv == 0.0:
        result = _truncated_mdc(attempt_rps, c, d, a, policy, target_ms, with_p99)
    else:
        result = _scaled_birth_death(attempt_rps, c, d, a, policy, target_ms, scv, with_p99)
    if station.batched:
        why = f"batched slots seen as {c} servers of a {batch}-request batch's time"
        reason = result.approximate_because
        return replace(result, approximate_because=why if reason is None else f"{reason}; {why}")
    return result


def typical_batch(station: Station, attempt_rps: float) -> int:
    """The batch a slot takes at ``attempt_rps``: the smallest that keeps the slots' utilization
    at most ``BATCH_UTILIZATION`` (batches grow with load; full past capacity).

    With ``D(b) = s (f + (1 - f) b)`` the slots serve ``c b / D(b)``; asking for
    ``rate / BATCH_UTILIZATION`` gives ``b = rate s f / (U c - rate s (1 - f))``."""
    if not station.batched:
        return 1
    rate = attempt_rps / station.queues / 1000.0
    one, full = station.batch_service_ms[1], station.batch_service_ms[station.max_batch]
    per_request = (full - one) / (station.max_batch - 1)
    fixed = one - per_request
    room = BATCH_UTILIZATION * station.servers - rate * per_request
    if room <= 0.0:
        return station.max_batch
    return int(min(station.max_batch, max(1, math.ceil(rate * fixed / room))))


def _max_wait(c: int, d: float, policy: OverloadPolicy) -> tuple[float, bool]:
    """The longest wait that still gets service (ms), and whether the queue limit sets it."""
    by_limit = math.inf if policy.queue_limit is None else (policy.queue_limit + KAPPA) * d / c
    by_deadline = math.inf if policy.deadline_ms is None else policy.deadline_ms
    return min(by_limit, by_deadline), by_limit <= by_deadline


def _truncated_mdc(rate_rps, c, d, a, policy, target_ms, with_p99) -> Shedding:
    """Below capacity: the exact M/D/c wait, truncated at the longest wait served."""
    mdc = _solved_mdc(c, a)
    rho = a / c
    w_max, by_limit = _max_wait(c, d, policy)
    kept = _wait_cdf(mdc, w_max / d)
    tail = 1.0 - kept
    lost = (1.0 - rho) * tail / (1.0 - rho * tail)
    deadline = math.inf if policy.deadline_ms is None else policy.deadline_ms
    late = 0.0
    if math.isfinite(deadline) and deadline - d < w_max:
        late = (kept - _wait_cdf(mdc, (deadline - d) / d)) / kept
    in_time = min(w_max, min(deadline, target_ms) - d)
    good = _wait_cdf(mdc, in_time / d) / kept if in_time >= 0 else 0.0
    p99 = d * (1.0 + mdc.wait_quantile(SERVED_QUANTILE * kept)) if with_p99 else math.nan
    served = 1.0 - lost
    shedding = policy.sheds and lost > 0.0
    why = "Tijms' truncation of the exact M/D/c wait (a heuristic for c > 1)" if shedding else None
    if not mdc.is_exact:
        why = "M/D/c state space cut short near saturation"
    return Shedding(
        attempt_rps=rate_rps,
        utilization=rho * served,
        rejected_share=lost if by_limit else 0.0,
        timed_out_share=0.0 if by_limit else lost,
        late_share=late * served,
        good_share=good * served,
        served_p99_ms=p99,
        is_stable=True,
        approximate_because=why,
    )


@functools.lru_cache(maxsize=32)
def _solved_mdc(servers: int, offered_load: float) -> MdcWait:
    """``MdcWait.solve``, kept: the fallback's percentiles ask one queue for many waits."""
    return MdcWait.solve(servers, offered_load)


def _blocks(places: int) -> tuple[np.ndarray, np.ndarray]:
    """First place and size of each block: the top ``MAX_BLOCKS / 2`` places one by one (past
    capacity the mass piles there, against the limit or the deadline), the rest summed into at
    most ``MAX_BLOCKS / 2`` blocks."""
    fine = min(places, MAX_BLOCKS // 2)
    coarse = places - fine
    step = max(1, math.ceil(coarse / (MAX_BLOCKS // 2)))
    starts = np.concatenate((np.arange(0, coarse, step), np.arange(coarse, places))).astype(float)
    counts = np.minimum(
        np.where(starts < coarse, step, 1), np.where(starts < coarse, coarse, places) - starts
    )
    return starts, counts.astype(float)


def _log_geometric_sum(counts: np.ndarray, ratio: float) -> np.ndarray:
    """``ln(1 + r + ... + r^(n-1))`` for each ``n`` of ``counts``, without overflow."""
    if abs(ratio - 1.0) < 1e-12:
        return np.log(counts)
    log_ratio = math.log(ratio)
    if ratio < 1.0:
        return np.log1p(-np.exp(counts * log_ratio)) - math.log1p(-ratio)
    return counts * log_ratio + np.log1p(-np.exp(-counts * log_ratio)) - math.log(ratio - 1.0)


def _wait_cdf(mdc: MdcWait, x: float) -> float:
    """``mdc.wait_cdf(x)``, 1 where every solved state and all but ``e^-800`` of the Poisson
    arrivals before it have started (the sum would otherwise run over terms up to ``x c``)."""
    a = mdc.offered_load
    reach = mdc.queue_pmf.size + a + 40.0 * math.sqrt(a) + 40.0
    if x >= reach / mdc.servers + 1.0:
        return 1.0
    return mdc.wait_cdf(x)


def _scaled_birth_death(rate_rps, c, d, a, policy, target_ms, scv, with_p99) -> Shedding:
    """At or past capacity (or batched): Whitt's scaled M/M/c/K' birth-death, and the wait of
    an arrival with ``j`` ahead as the ``j``-th departure from ``c`` busy servers."""
    rho = a / c
    scale = 2.0 / (1.0 + scv)
    place_ms = d / (scale * c)
    w_max, by_limit = _max_wait(c, d, policy)
    places = MAX_PLACES if math.isinf(w_max) else min(MAX_PLACES, max(0, round(w_max / place_ms)))
    if rho < 1.0:  # places past rho^n < 1e-16 hold nothing a double can see
        places = min(places, math.ceil(math.log(1e-16) / math.log(rho)) if rho > 0 else 1)
    busy = np.arange(c + 1, dtype=float)
    log_busy = busy * math.log(a) - log_factorial(busy)
    # all c busy and j = 0 .. places - 1 places taken (accepted), in blocks; then full (lost)
    starts, counts = _blocks(places)
    log_blocks = log_busy[-1] + starts * math.log(rho) + _log_geometric_sum(counts, rho)
    log_full = log_busy[-1] + places * math.log(rho)
    log_p = np.concatenate((log_busy[:-1], log_blocks, [log_full]))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    lost = float(p[-1])
    deadline = math.inf if policy.deadline_ms is None else policy.deadline_ms
    ahead = np.floor((starts + 0.5 * (counts - 1.0)) / scale)
    law = DepartureWait(c, d, float(p[:c].sum()), p[c:-1], ahead, deadline)
    late = law.served - law.mass_within(deadline - d) if math.isfinite(deadline) else 0.0
    good = law.mass_within(min(deadline, target_ms) - d)
    return Shedding(
        attempt_rps=rate_rps,
        utilization=min(1.0, rho * (1.0 - lost)),
        rejected_share=lost if by_limit else 0.0,
        timed_out_share=0.0 if by_limit else lost,
        late_share=late,
        good_share=good,
        served_p99_ms=d + law.quantile(SERVED_QUANTILE) if with_p99 else math.nan,
        is_stable=True,
        approximate_because="Whitt's diffusion scaling of M/D/c/K to M/M/c/K' (G/GI/n/m)",
    )


@dataclass(frozen=True, eq=False)
class DepartureWait:
    """The wait of an accepted arrival: 0 with probability ``idle``; with ``ahead[i]`` requests
    waiting ahead (probability ``waiting[i]``), the ``ahead + 1``-th departure from ``c`` busy
    servers of service ``d``, whose residual times are taken as independent uniforms on
    ``[0, d)``: ``floor(ahead / c) d + d U_(k:c)``, ``k = ahead mod c + 1``, the ``k``-th of ``c``
    uniforms (``P(U_(k:c) <= y) = P(Binomial(c, y) >= k)``).

    Approximations: deterministic servers that never idle keep their phases, so independent
    uniform residuals describe a fresh overload, not one long one.

    Sources: David & Nagaraja, *Order Statistics* (3rd ed., 2003) §2.2 (uniform order
    statistics and the binomial).
    """

    servers: int
    service_ms: float
    idle: float
    waiting: np.ndarray
    ahead: np.ndarray
    deadline_ms: float = math.inf
    """Served waits end by this: the departure law is conditioned on it (the birth-death's
    places already hold the share that times out)."""

    @property
    def served(self) -> float:
        """``P(accepted)``."""
        return self.idle + float(self.waiting.sum())

    def mass_within(self, x_ms: float) -> float:
        """``P(accepted and wait <= x_ms)``."""
        if x_ms < 0.0:
            return 0.0
        if x_ms >= self.deadline_ms:
            return self.served
        queued = self._queued_within(x_ms)
        if math.isfinite(self.deadline_ms):
            cap = self._queued_within(self.deadline_ms)
            queued *= float(self.waiting.sum()) / cap if cap > 0.0 else 1.0
        return self.idle + queued

    def _queued_within(self, x_ms: float) -> float:
        """``P(queued and the departure law's wait <= x_ms)``, unconditioned."""
        if math.isinf(x_ms):
            return float(self.waiting.sum())
        c, d = self.servers, self.service_ms
        rounds = math.floor(x_ms / d)
        fraction = x_ms / d - rounds
        done = self.ahead // c
        below = float(self.waiting[done < rounds].sum())
        now = done == rounds
        if not now.any():
            return below
        k = (self.ahead[now] % c + 1).astype(np.int64)
        return below + float(np.dot(self.waiting[now], _binomial_at_least(c, fraction)[k]))

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (ms) of an accepted arrival's wait, by bisection."""
        needed = q * self.served
        if needed <= self.idle or self.waiting.size == 0:
            return 0.0
        low = 0.0
        high = min(
            self.deadline_ms, (float(self.ahead.max()) // self.servers + 1.0) * self.service_ms
        )
        for _ in range(60):
            middle = 0.5 * (low + high)
            if self.mass_within(middle) >= needed:
                high = middle
            else:
                low = middle
            if high - low <= 1e-7 * high:
                break
        return high


@functools.lru_cache(maxsize=64)
def _log_choose(n: int) -> np.ndarray:
    """``ln C(n, k)`` for ``k = 0 .. n``."""
    table = log_factorial(np.arange(n + 1))
    return table[-1] - table - table[::-1]


def _binomial_at_least(n: int, y: float) -> np.ndarray:
    """``P(Binomial(n, y) >= k)`` for ``k = 0 .. n`` (index ``k``)."""
    if y <= 0.0:
        return np.concatenate(([1.0], np.zeros(n)))
    if y >= 1.0:
        return np.ones(n + 1)
    k = np.arange(n + 1, dtype=float)
    pmf = np.exp(_log_choose(n) + k * math.log(y) + (n - k) * math.log1p(-y))

    return np.minimum(np.cumsum(pmf[::-1])[::-1], 1.0)
