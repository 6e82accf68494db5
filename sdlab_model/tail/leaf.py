"""One leaf's latency: a lognormal body with a Pareto tail, fitted to three quantiles.

The fit (``fit_leaf``) takes a leaf's p50, p95 and p99 and matches all three exactly:

- below the p95, a lognormal with median ``p50`` and shape ``sigma = ln(p95 / p50) / z_0.95``
  (so the lognormal's own p95 is the given p95);
- above the p95, a Pareto tail ``P(X > t) = 0.05 (t / p95)^-alpha`` with
  ``alpha = ln(0.05 / 0.01) / ln(p99 / p95)``, the log-log slope between the p95 and the p99.

Why this family: a lognormal alone fits the body but extrapolates a light tail (fitted to a p50
and p95 of 1 and 5 ms its p99 is 9.7 ms, not 10), while a fan-out of N leaves reads the leaf's
``1 - 1/N``-th quantile and beyond, so the tail's shape past the p99 decides the answer. A power
law is the heaviest tail the three quantiles can pin down with one more parameter, and the tail
the paper describes (rare episodes of queueing, garbage collection and contention, far out
from the median). Three quantiles cannot say how the tail continues past the p99; this is an
assumption, and the fan-out predictions inherit it.

Source: J. Dean, L. A. Barroso, "The Tail at Scale", Communications of the ACM 56(2), 74-80,
2013, Table 1, first row (one random leaf, measured at the root: p50/p95/p99 = 1/5/10 ms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()
_ERFC = np.frompyfunc(math.erfc, 1, 1)
SPLICE_QUANTILE = 0.95
"""Where the lognormal body hands over to the Pareto tail: the fitted p95."""
TAIL_QUANTILE = 0.99
"""The second tail point, the fitted p99, that sets the Pareto index."""


@dataclass(frozen=True)
class LeafLatency:
    """A leaf's latency in ms: lognormal up to ``splice_ms``, Pareto above it.

    ``splice_tail`` is ``P(X > splice_ms)``, which the lognormal body gives up to the tail.
    """

    median_ms: float
    sigma: float
    splice_ms: float
    splice_tail: float
    tail_index: float

    def sf(self, t: np.ndarray | float) -> np.ndarray:
        """``P(X > t)`` for every ``t`` (ms)."""
        t = np.asarray(t, dtype=float)
        safe = np.maximum(t, 1e-300)
        z = (np.log(safe / self.median_ms)) / (self.sigma * math.sqrt(2.0))
        body = 0.5 * np.asarray(_ERFC(z), dtype=float)
        tail = self.splice_tail * (np.maximum(safe, self.splice_ms) / self.splice_ms) ** (
            -self.tail_index
        )
        return np.where(t <= 0.0, 1.0, np.where(t <= self.splice_ms, body, tail))

    def cdf(self, t: np.ndarray | float) -> np.ndarray:
        """``P(X <= t)``."""
        return 1.0 - self.sf(t)

    def isf(self, tail: float) -> float:
        """The ``t`` with ``P(X > t) = tail``; tiny tails exact (the Pareto part in closed form)."""
        if not 0.0 < tail < 1.0:
            raise ValueError(f"tail probability must be in (0, 1), got {tail}")
        if tail <= self.splice_tail:
            return self.splice_ms * (tail / self.splice_tail) ** (-1.0 / self.tail_index)
        return self.median_ms * math.exp(self.sigma * _NORMAL.inv_cdf(1.0 - tail))

    def quantile(self, q: float) -> float:
        """The ``q``-th quantile (``q`` in (0, 1))."""
        return self.isf(1.0 - q)

    def mean(self) -> float:
        """``E[X]``: the lognormal's partial mean below the splice plus the Pareto tail's mass."""
        mu = math.log(self.median_ms)
        upper = (math.log(self.splice_ms) - mu - self.sigma**2) / self.sigma
        body = math.exp(mu + self.sigma**2 / 2.0) * _NORMAL.cdf(upper)
        alpha = self.tail_index
        if alpha <= 1.0:
            return math.inf
        return body + self.splice_tail * self.splice_ms * alpha / (alpha - 1.0)

    def scaled(self, factor: float) -> LeafLatency:
        """The same shape with every latency ``factor`` times longer."""
        if not factor > 0.0:
            raise ValueError(f"scale factor must be positive, got {factor}")
        return LeafLatency(
            median_ms=self.median_ms * factor,
            sigma=self.sigma,
            splice_ms=self.splice_ms * factor,
            splice_tail=self.splice_tail,
            tail_index=self.tail_index,
        )

    def sample(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """Independent draws: a lognormal draw past the splice is redrawn from the Pareto tail.

        Exact because the lognormal's own mass above ``splice_ms`` is ``splice_tail`` (the fit
        makes the splice the body's quantile), so the body keeps its shape below the splice.
        """
        draws = self.median_ms * np.exp(self.sigma * rng.standard_normal(shape))
        past = draws > self.splice_ms
        uniform = 1.0 - rng.random(int(past.sum()))  # in (0, 1]: never an infinite draw
        draws[past] = self.splice_ms * uniform ** (-1.0 / self.tail_index)
        return draws


def fit_leaf(p50_ms: float, p95_ms: float, p99_ms: float) -> LeafLatency:
    """The lognormal-body, Pareto-tail leaf whose p50, p95 and p99 are the ones given (exactly)."""
    if not 0.0 < p50_ms < p95_ms < p99_ms:
        raise ValueError(f"need 0 < p50 < p95 < p99, got {p50_ms}, {p95_ms}, {p99_ms}")
    splice_tail = 1.0 - SPLICE_QUANTILE
    sigma = math.log(p95_ms / p50_ms) / _NORMAL.inv_cdf(SPLICE_QUANTILE)
    alpha = math.log(splice_tail / (1.0 - TAIL_QUANTILE)) / math.log(p99_ms / p95_ms)
    return LeafLatency(
        median_ms=p50_ms,
        sigma=sigma,
        splice_ms=p95_ms,
        splice_tail=splice_tail,
        tail_index=alpha,
    )
