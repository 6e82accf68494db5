"""Tied requests: a copy queued at each of two leaves, the first to *start* cancels the other.

Dean & Barroso ("The Tail at Scale", CACM 56(2), 2013, section "Tied requests"): "the client
send[s] the request to two different servers, each tagged with the identity of the other server
('tied'). When a request begins execution, it sends a cancellation message to its counterpart."
Both copies may run when each starts before the other's cancellation arrives ("a brief window
of one average network message delay"), so the client sends the second copy after "a small delay
of two times the average network message delay (1ms or less in modern data-center networks)".
Their Table 2 (a BigTable read, tied after 1 ms): p99.9 98 ms -> 61 ms on a mostly idle cluster,
159 ms -> 108 ms beside a concurrent terasort, with "less than 1%" overhead in disk utilization.

Tied requests act on the *queue*, so the leaf here is a queue: M/M/1, FCFS, utilization ``rho``,
exponential service of mean ``s`` (``mu = 1/s``, ``theta = mu (1 - rho)``). One copy waits
``W`` with ``P(W > t) = rho e^(-theta t)`` and answers after ``W + S``, exponential with rate
``theta``. Tied, with the second copy sent after ``delta``, the request starts at
``U = min(W1, delta + W2)`` and is served once: ``T = U + S``. With ``G(u) = P(U > u)``
(``rho e^(-theta u)`` below ``delta``, ``rho^2 e^(-theta (2u - delta))`` above)

    P(T > t) = e^(-mu t) + int_0^t mu e^(-mu s) G(t - s) ds,

in closed form (``TiedLeaf.sf``). Both copies run when their starts are within the message delay
``m``: ``P(|W1 - delta - W2| < m)``, from the waits' atoms at 0 and the Laplace law of the
difference of two exponentials (``TiedLeaf.duplicated_share``).

Approximations (flagged, not hidden): the two waits are independent and each is an M/M/1 wait
at ``rho``. In a fleet where every request ties two leaves, a copy's wait depends on its twin's
(cancel-on-start under FCFS behaves like joining the leaf with less work), which shortens the
waits: the model is on the pessimistic side of tying, and it counts too few duplicates (copies
at two busy leaves start close together more often); ``tied_fleet.simulate_tied_fleet``
measures both (docs/tail.md: p99.9 9% long at 50% busy, 72% at 80%; duplicates 1.5-3x more in
the fleet). A duplicated copy runs its whole service
(the bound), the load it adds (``rho`` x the duplicated share) is not fed back, and cancelling a
queued copy costs one message and no work.

Sources: Dean & Barroso 2013, section "Tied requests" and Table 2; Gross, Shortle, Thompson &
Harris, *Fundamentals of Queueing Theory* (4th ed.) §2.2 (the M/M/1 waiting time); Ayesta, Bodas
& Verloop, "On a unifying product form framework for redundancy models", Performance Evaluation
127 (2018) (redundancy with cancel-on-start).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.tail.fanout import fanout_quantiles
from sdlab_model.tail.hedging import HedgedLeaf

PAPER_TIE_DELAY_MS = 1.0
"""Table 2: "tied request after 1ms"."""
MESSAGE_SHARE_OF_DELAY = 0.5
"""The paper's delay is "two times the average network message delay": the message takes half."""
_BISECTION_STEPS = 200


def _expm1_over(rate: np.ndarray | float, span: np.ndarray | float) -> np.ndarray:
    """``(e^(rate span) - 1) / rate``, ``span`` where ``rate`` is 0."""
    rate, span = np.asarray(rate, dtype=float), np.asarray(span, dtype=float)
    safe = np.where(rate == 0.0, 1.0, rate)
    return np.where(rate == 0.0, span, np.expm1(rate * span) / safe)


@dataclass(frozen=True)
class QueuedLeaf:
    """An M/M/1 leaf: FCFS, exponential service of mean ``service_ms``, ``utilization`` busy."""

    service_ms: float
    utilization: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.service_ms) and self.service_ms > 0.0):
            raise ValueError(f"service_ms must be above 0, got {self.service_ms!r}")
        if not 0.0 <= self.utilization < 1.0:
            raise ValueError(f"utilization must be in [0, 1), got {self.utilization!r}")

    @classmethod
    def with_median(cls, median_ms: float, utilization: float) -> QueuedLeaf:
        """The M/M/1 leaf at ``utilization`` whose latency's median is ``median_ms``."""
        return cls(median_ms * (1.0 - utilization) / math.log(2.0), utilization)

    @property
    def service_rate_per_ms(self) -> float:
        return 1.0 / self.service_ms

    @property
    def decay_per_ms(self) -> float:
        """``theta = mu (1 - rho)``: the rate of the latency's and the wait's exponential tail."""
        return (1.0 - self.utilization) / self.service_ms

    def wait_sf(self, t: np.ndarray | float) -> np.ndarray:
        """``P(W > t)``: 1 below 0, ``rho e^(-theta t)`` from 0."""
        t = np.asarray(t, dtype=float)
        return np.where(
            t < 0.0, 1.0, self.utilization * np.exp(-self.decay_per_ms * np.maximum(t, 0))
        )

    def sf(self, t: np.ndarray | float) -> np.ndarray:
        """``P(W + S > t) = e^(-theta t)``: the M/M/1 sojourn time is exponential."""
        t = np.asarray(t, dtype=float)
        return np.where(t <= 0.0, 1.0, np.exp(-self.decay_per_ms * np.maximum(t, 0.0)))

    def isf(self, tail: float) -> float:
        if not 0.0 < tail < 1.0:
            raise ValueError(f"tail probability must be in (0, 1), got {tail}")
        return -math.log(tail) / self.decay_per_ms

    def quantile(self, q: float) -> float:
        return self.isf(1.0 - q)

    def mean(self) -> float:
        return 1.0 / self.decay_per_ms

    def sample_wait(self, rng: np.random.Generator, shape) -> np.ndarray:
        """Independent waits: 0 with probability ``1 - rho``, else exponential of rate theta."""
        busy = rng.random(shape) < self.utilization
        return np.where(busy, rng.exponential(1.0 / self.decay_per_ms, shape), 0.0)

    def sample(self, rng: np.random.Generator, shape) -> np.ndarray:
        """Independent latencies (wait plus service)."""
        return self.sample_wait(rng, shape) + rng.exponential(self.service_ms, shape)


@dataclass(frozen=True)
class TiedLeaf:
    """A leaf request tied to a second copy sent ``delay_ms`` later; the first to start is
    served, its cancellation taking ``message_ms`` to reach the other."""

    leaf: QueuedLeaf
    delay_ms: float
    message_ms: float

    def __post_init__(self) -> None:
        for name in ("delay_ms", "message_ms"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"{name} must be 0 or more, got {value!r}")

    def sf(self, t: np.ndarray | float) -> np.ndarray:
        """``P(U + S > t)`` in closed form (module docstring)."""
        t = np.asarray(t, dtype=float)
        rho, mu, theta = (
            self.leaf.utilization,
            self.leaf.service_rate_per_ms,
            self.leaf.decay_per_ms,
        )
        delta = self.delay_ms
        span = np.maximum(t, 0.0)
        served_first = np.exp(-mu * span)
        # the first copy's wait alone (t below delta, or the part of S that spans delta)
        early = rho * mu * np.exp(-theta * span) * _expm1_over(-mu * rho, span)
        late = (
            rho
            * mu
            * np.exp(mu * (rho * delta - np.maximum(span, delta)))
            * _expm1_over(-mu * rho, delta)
        )
        one_copy = np.where(span < delta, early, late)
        past = np.maximum(span - delta, 0.0)
        rate = 2.0 * theta - mu
        with np.errstate(over="ignore", invalid="ignore"):  # the branch not taken may overflow
            small = rho**2 * mu * np.exp(-theta * (2.0 * span - delta)) * _expm1_over(rate, past)
            safe = np.where(rate == 0.0, 1.0, rate)
            large = (
                rho**2
                * mu
                * (np.exp(-theta * delta - mu * past) - np.exp(-theta * (2.0 * span - delta)))
                / safe
            )
        both = np.where(np.abs(rate) * past < 1.0, small, large)
        total = served_first + one_copy + np.where(span > delta, both, 0.0)
        return np.where(t <= 0.0, 1.0, np.clip(total, 0.0, 1.0))

    def isf(self, tail: float) -> float:
        """The ``t`` with ``P(T > t) = tail``, by bisection below the single copy's quantile."""
        low, high = 0.0, self.leaf.isf(tail)
        for _ in range(_BISECTION_STEPS):
            middle = 0.5 * (low + high)
            if float(self.sf(middle)) > tail:
                low = middle
            else:
                high = middle
        return 0.5 * (low + high)

    def quantile(self, q: float) -> float:
        return self.isf(1.0 - q)

    def duplicated_share(self) -> float:
        """``P(|W1 - (delta + W2)| < m)``: both copies start before either's cancellation
        arrives, so both run (a whole extra service, the bound)."""
        rho, theta = self.leaf.utilization, self.leaf.decay_per_ms
        delta, m = self.delay_ms, self.message_ms
        idle = 1.0 - rho
        both_idle = idle * idle if delta < m else 0.0
        first_idle = idle * rho * (-math.expm1(-theta * (m - delta))) if m > delta else 0.0
        second_idle = (
            rho * idle * (math.exp(-theta * max(0.0, delta - m)) - math.exp(-theta * (delta + m)))
        )

        def laplace_cdf(x: float) -> float:
            return 1.0 - 0.5 * math.exp(-theta * x) if x >= 0.0 else 0.5 * math.exp(theta * x)

        both_busy = rho * rho * (laplace_cdf(delta + m) - laplace_cdf(delta - m))
        return both_idle + first_idle + second_idle + both_busy


@dataclass(frozen=True)
class TiedOutcome:
    """Tied requests beside one copy and beside hedging, on the same M/M/1 leaf, at ``fanout``.

    Load, per leaf request: ``copies_sent`` (2 tied; 1 + the share hedged), ``messages``
    (cancellations: one, two where both copies ran; hedging cancels the loser once per hedge),
    and ``extra_work``, the extra service done as a share of one copy's (tied: the duplicated
    share; hedged: the share hedged, every second copy served, the bound)."""

    leaf: QueuedLeaf
    fanout: int
    tie_delay_ms: float
    hedge_delay_ms: float
    single: dict[float, float]
    tied: dict[float, float]
    hedged: dict[float, float]
    tied_extra_work: float
    hedged_extra_work: float
    tied_messages: float

    def reduction(self, q: float, tied: bool = True) -> float:
        """How many times shorter the request's ``q``-th quantile is, tied or hedged."""
        return self.single[q] / (self.tied if tied else self.hedged)[q]


def tie(
    leaf: QueuedLeaf,
    fanout: int,
    tie_delay_ms: float = PAPER_TIE_DELAY_MS,
    hedge_quantile: float = 0.95,
    quantiles: tuple[float, ...] = (0.99, 0.999),
) -> TiedOutcome:
    """The fanned-out request's quantiles with one copy per leaf, tied after ``tie_delay_ms``
    (message delay half of it, as the paper sizes it) and hedged at the leaf's
    ``hedge_quantile``."""
    tied = TiedLeaf(leaf, tie_delay_ms, MESSAGE_SHARE_OF_DELAY * tie_delay_ms)
    hedge_delay = leaf.quantile(hedge_quantile)
    hedged = HedgedLeaf(leaf, hedge_delay)  # type: ignore[arg-type]  # any sf/isf leaf
    duplicated = tied.duplicated_share()
    return TiedOutcome(
        leaf=leaf,
        fanout=fanout,
        tie_delay_ms=tie_delay_ms,
        hedge_delay_ms=hedge_delay,
        single=fanout_quantiles(leaf, fanout, quantiles),
        tied=fanout_quantiles(tied, fanout, quantiles),
        hedged=fanout_quantiles(hedged, fanout, quantiles),
        tied_extra_work=duplicated,
        hedged_extra_work=hedged.hedged_share(),
        tied_messages=1.0 + duplicated,
    )
