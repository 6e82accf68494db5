"""Hedged requests: a second copy after a delay, the first answer wins, the other is cancelled.

Dean & Barroso ("The Tail at Scale", CACM 56(2), 2013, section "Within Request Short-Term
Adaptations", "Hedged requests") defer the second copy "until the first request has been
outstanding for more than the 95th-percentile expected latency", which "limits the additional
load to approximately 5%". That 5% is the share of requests that send a second copy,
``P(X1 > d)``, which is 5% at ``d`` = the leaf's p95 whatever the distribution.

With the copies' latencies ``X1`` and ``X2`` independent and of the leaf's distribution (the
second copy goes to another replica, unloaded by the first), a hedged leaf answers after
``T = min(X1, d + X2)``: ``P(T > t) = S(t)`` below ``d`` and ``S(t) S(t - d)`` above it.

The extra work counts what the copies keep their leaves busy for, taking a copy's latency as
its work and a cancellation as instant: ``T`` for the first copy, ``(T - d)+`` for the second,
against ``X1`` unhedged. Cancelling a slow first copy when the second wins saves work, so with a
heavy tail the extra work can be below the share hedged, even negative; the share hedged (the
copies sent) is the load where cancellation saves nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sdlab_model.tail.fanout import fanout_quantiles
from sdlab_model.tail.leaf import LeafLatency

_BISECTION_STEPS = 200
_GRID_POINTS = 20_001
_SMALLEST_MS = 1e-9
_LARGEST_MS = 1e12


@dataclass(frozen=True)
class HedgedLeaf:
    """A leaf asked twice: the second copy ``delay_ms`` after the first, the first answer wins."""

    leaf: LeafLatency
    delay_ms: float

    def sf(self, t: np.ndarray | float) -> np.ndarray:
        """``P(T > t)``: ``S(t)``, times ``S(t - d)`` once the second copy is out."""
        t = np.asarray(t, dtype=float)
        second = np.where(t > self.delay_ms, self.leaf.sf(t - self.delay_ms), 1.0)
        return self.leaf.sf(t) * second

    def isf(self, tail: float) -> float:
        """The ``t`` with ``P(T > t) = tail``, by bisection below the unhedged quantile."""
        high = self.leaf.isf(tail)
        if high <= self.delay_ms:
            return high  # no second copy is out before this quantile
        low = self.delay_ms
        for _ in range(_BISECTION_STEPS):
            middle = 0.5 * (low + high)
            if float(self.sf(middle)) > tail:
                low = middle
            else:
                high = middle
        return 0.5 * (low + high)

    def quantile(self, q: float) -> float:
        """The ``q``-th quantile of the hedged latency."""
        return self.isf(1.0 - q)

    def hedged_share(self) -> float:
        """The share of requests that send a second copy, ``P(X1 > d)``."""
        return float(self.leaf.sf(self.delay_ms))

    def extra_work(self) -> float:
        """``E[T + (T - d)+] / E[X1] - 1``: the copies' busy time against one copy's.

        ``E[T] = int_0^d S + I`` and ``E[(T - d)+] = I`` with ``I = int_0^inf S(d + u) S(u) du``;
        both integrals by the trapezoid rule on geometric grids (the tail's power law is
        integrable to 1e12 ms and negligible past it).
        """
        d = self.delay_ms
        before = np.concatenate(([0.0], np.geomspace(_SMALLEST_MS, d, _GRID_POINTS)))
        head = float(np.trapezoid(self.leaf.sf(before), before))
        after = np.concatenate(([0.0], np.geomspace(_SMALLEST_MS, _LARGEST_MS, _GRID_POINTS)))
        both = float(np.trapezoid(self.leaf.sf(d + after) * self.leaf.sf(after), after))
        return (head + 2.0 * both) / self.leaf.mean() - 1.0


@dataclass(frozen=True)
class HedgeOutcome:
    """Hedging at one delay, for one leaf and for a request fanned out to ``fanout`` of them."""

    delay_ms: float
    fanout: int
    hedged_share: float
    extra_work: float
    leaf_before: dict[float, float]
    leaf_after: dict[float, float]
    request_before: dict[float, float]
    request_after: dict[float, float]

    def reduction(self, q: float, fanned_out: bool = True) -> float:
        """How many times shorter the ``q``-th quantile is with hedging."""
        before, after = (
            (self.request_before, self.request_after)
            if fanned_out
            else (self.leaf_before, self.leaf_after)
        )
        return before[q] / after[q]


def hedge(
    leaf: LeafLatency,
    delay_ms: float,
    fanout: int,
    quantiles: tuple[float, ...] = (0.99, 0.999),
) -> HedgeOutcome:
    """Hedge every leaf request after ``delay_ms``; the leaf's and the fanned-out request's tail.

    The fanned-out request waits for all ``fanout`` leaves, each hedged independently.
    """
    if not delay_ms > 0.0 or not math.isfinite(delay_ms):
        raise ValueError(f"hedge delay must be a positive number of ms, got {delay_ms}")
    hedged = HedgedLeaf(leaf, delay_ms)
    return HedgeOutcome(
        delay_ms=delay_ms,
        fanout=fanout,
        hedged_share=hedged.hedged_share(),
        extra_work=hedged.extra_work(),
        leaf_before=fanout_quantiles(leaf, 1, quantiles),
        leaf_after=fanout_quantiles(hedged, 1, quantiles),
        request_before=fanout_quantiles(leaf, fanout, quantiles),
        request_after=fanout_quantiles(hedged, fanout, quantiles),
    )
