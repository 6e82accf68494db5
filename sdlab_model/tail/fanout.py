"""Fan-out arithmetic: a request sent to N leaves, waiting for all of them or for k of them.

With independent leaves of one latency distribution ``F``:

- the chance a request is slow when each leaf is slow with probability ``p``:
  ``1 - (1 - p)^N`` (Dean & Barroso, "The Tail at Scale", CACM 56(2), 2013, section "Why
  Variability Is Amplified by Scale": p = 1/100, N = 100 gives 63%; p = 1/10,000, N = 2,000
  gives "almost one in five");
- the time until k of the N leaves are done is the k-th order statistic ``X_(k)``. It is at most
  ``t`` when at most ``N - k`` leaves are slower than ``t``, so with ``s = P(X > t)``
  ``P(X_(k) <= t) = P(Binomial(N, s) <= N - k)``; waiting for all (``k = N``) this is
  ``F(t)^N``. A quantile ``q`` of ``X_(k)`` is the leaf's ``s``-tail quantile, with ``s``
  solving ``P(Binomial(N, s) <= N - k) = q``: exact, and read in the leaf's survival function
  so that ``s`` of 1e-7 and below keeps its digits.

Any distribution with an ``isf`` (the leaf, or a hedged leaf) can be fanned out.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

_BISECTION_STEPS = 200
_SMALLEST_TAIL = 1e-300


class Latency(Protocol):
    """A latency distribution that can name the ``t`` with ``P(X > t) = tail``."""

    def isf(self, tail: float) -> float: ...


def slow_request_probability(slow_leaf_probability: float, fanout: int) -> float:
    """``1 - (1 - p)^N``: the chance at least one of ``fanout`` independent leaves is slow."""
    if not 0.0 <= slow_leaf_probability <= 1.0:
        raise ValueError(f"probability must be in [0, 1], got {slow_leaf_probability}")
    if fanout < 1:
        raise ValueError(f"fan-out must be at least 1, got {fanout}")
    if slow_leaf_probability == 1.0:
        return 1.0
    # log1p/expm1 keep the digits of a tiny p over a large N
    return -math.expm1(fanout * math.log1p(-slow_leaf_probability))


def _at_most_slow(slow: int, fanout: int, tail: float) -> float:
    """``P(Binomial(fanout, tail) <= slow)``, summed in logs."""
    j = np.arange(slow + 1, dtype=float)
    log_choose = (
        math.lgamma(fanout + 1.0)
        - np.array([math.lgamma(x + 1.0) for x in j])
        - np.array([math.lgamma(fanout - x + 1.0) for x in j])
    )
    terms = log_choose + j * math.log(tail) + (fanout - j) * math.log1p(-tail)
    top = float(terms.max())
    return min(1.0, math.exp(top) * float(np.exp(terms - top).sum()))


def order_statistic_tail(fanout: int, done: int, q: float) -> float:
    """The leaf tail ``s`` at which ``P(X_(done) <= t) = q``, ``t`` the leaf's ``s``-tail quantile.

    ``done`` of ``fanout`` leaves finished: ``P(Binomial(fanout, s) <= fanout - done) = q``,
    decreasing in ``s``; bisection on ``log s``. Waiting for all has the closed form
    ``s = 1 - q^(1/N)``.
    """
    if not 1 <= done <= fanout:
        raise ValueError(f"need 1 <= done <= fanout, got {done} of {fanout}")
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile must be in (0, 1), got {q}")
    if done == fanout:
        return -math.expm1(math.log(q) / fanout)
    low, high = math.log(_SMALLEST_TAIL), 0.0
    slow = fanout - done
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if _at_most_slow(slow, fanout, math.exp(middle)) > q:
            low = middle
        else:
            high = middle
    return math.exp(0.5 * (low + high))


def leaves_needed(fanout: int, done_share: float) -> int:
    """The leaves that make ``done_share`` of ``fanout``: ``ceil(share * N)``, at least 1."""
    if not 0.0 < done_share <= 1.0:
        raise ValueError(f"share of leaves must be in (0, 1], got {done_share}")
    # round first: 0.95 * 100 is 95.00000000000001 in floating point
    return max(1, math.ceil(round(done_share * fanout, 9)))


def fanout_quantiles(
    leaf: Latency,
    fanout: int,
    quantiles: tuple[float, ...] = (0.5, 0.95, 0.99),
    done_share: float = 1.0,
) -> dict[float, float]:
    """The request's latency quantiles (ms) when it waits for ``done_share`` of ``fanout`` leaves.

    ``done_share = 1`` waits for all of them (the maximum); ``0.95`` for the first 95% (Table 1's
    middle row). A fan-out of 1 gives the leaf's own quantiles.
    """
    done = leaves_needed(fanout, done_share)
    return {q: leaf.isf(order_statistic_tail(fanout, done, q)) for q in quantiles}
