"""Poisson request counts: their probabilities, tails and the normal cdf, vectorised with numpy.

The canary judges sum over request counts (``canary_judges``, ``sequential_tests``); these are
the pieces they share, each exact or with its error stated.
"""

from __future__ import annotations

import math

import numpy as np


def normal_cdf(values: np.ndarray) -> np.ndarray:
    """Φ, vectorised: Abramowitz & Stegun 7.1.26 for erfc (absolute error under 1.5e-7)."""
    z = np.abs(np.asarray(values, dtype=float)) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    upper = 0.5 * poly * np.exp(-z * z)  # 1 − Φ(|x|)
    return np.where(np.asarray(values) >= 0.0, 1.0 - upper, upper)


_TABLE_COUNTS = 20_000
_LOG_FACTORIAL = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1.0, _TABLE_COUNTS + 1)))))
"""``ln k!`` for ``k ≤ _TABLE_COUNTS``; Stirling's series beyond (its next term under 1e-20)."""


def log_poisson(counts: np.ndarray, mean: float) -> np.ndarray:
    if counts.size and counts[-1] <= _TABLE_COUNTS:  # counts ascend
        log_factorial = _LOG_FACTORIAL[counts.astype(np.int64)]
    else:
        large = np.maximum(counts, 1.0)
        stirling = (
            large * np.log(large)
            - large
            + 0.5 * np.log(2.0 * math.pi * large)
            + 1.0 / (12.0 * large)
            - 1.0 / (360.0 * large**3)
        )
        whole = np.minimum(counts, _TABLE_COUNTS).astype(np.int64)
        log_factorial = np.where(counts <= _TABLE_COUNTS, _LOG_FACTORIAL[whole], stirling)
    return counts * math.log(mean) - mean - log_factorial


def poisson_support(mean: float) -> tuple[np.ndarray, np.ndarray]:
    """Counts of a Poisson(``mean``) to ±9 sd and their probabilities (renormalised)."""
    spread = 9.0 * math.sqrt(mean) + 10.0
    counts = np.arange(max(0, math.floor(mean - spread)), math.ceil(mean + spread) + 1, dtype=float)
    weights = np.exp(log_poisson(counts, mean))
    return counts, weights / weights.sum()


def poisson_below(limits: np.ndarray, mean: float) -> np.ndarray:
    """``P(G < limit)`` for G Poisson(``mean``), each limit: exact sums up to 20,000 requests,
    the Wilson–Hilferty approximation of the χ² behind the Poisson beyond (error under 1e-4)."""
    largest = (np.ceil(limits) - 1.0).astype(np.int64)
    if mean < 20_000:
        if mean <= 0.0:
            return np.where(largest < 0, 0.0, 1.0)
        # Beyond 12 sd either side the running sum is 0 or 1 to double precision.
        spread = 12.0 * math.sqrt(mean) + 20.0
        low, top = max(0, math.floor(mean - spread)), math.ceil(mean + spread)
        cdf = np.cumsum(np.exp(log_poisson(np.arange(low, top + 1, dtype=float), mean)))
        inside = cdf[np.clip(largest, low, top) - low]
        return np.where(largest < low, 0.0, np.where(largest > top, 1.0, inside))
    k = np.maximum(largest, 0) + 1.0  # P(G ≤ k − 1) = P(χ²_{2k} > 2·mean)
    z = ((mean / k) ** (1.0 / 3.0) - 1.0 + 1.0 / (9.0 * k)) * 3.0 * np.sqrt(k)
    return np.where(largest < 0, 0.0, normal_cdf(-z))
