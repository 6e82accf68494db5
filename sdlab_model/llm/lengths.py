"""Prompt and output lengths: a lognormal with a given mean and coefficient of variation.

Token counts of chat and instruction datasets are right-skewed with a long tail; a lognormal
with the dataset's mean and spread is the usual stand-in (e.g. Vidur, Agrawal et al.,
MLSys 2024, fits its traces' lengths this way). ``cv = 0`` is every request the same length.
Draws are rounded to whole tokens and kept within ``[1, cap]``; the analytic model uses the
same distribution through equal-probability quantile nodes.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

NODES = 48
"""Quantile nodes the analytic model integrates a length distribution over."""


def _log_parameters(mean: float, cv: float) -> tuple[float, float]:
    sigma = math.sqrt(math.log1p(cv * cv))
    return math.log(mean) - sigma * sigma / 2.0, sigma


def draw_lengths(rng: np.random.Generator, mean: float, cv: float, count: int, cap: int):
    """``count`` whole token counts, lognormal with this mean and cv, within ``[1, cap]``."""
    if cv == 0.0:
        values = np.full(count, round(mean), dtype=np.int64)
    else:
        mu, sigma = _log_parameters(mean, cv)
        values = np.rint(rng.lognormal(mu, sigma, count)).astype(np.int64)
    return np.clip(values, 1, cap)


def length_nodes(mean: float, cv: float, cap: int, nodes: int = NODES) -> np.ndarray:
    """``nodes`` equally likely lengths standing for the distribution (midpoint quantiles)."""
    if cv == 0.0:
        return np.full(nodes, float(min(max(round(mean), 1), cap)))
    mu, sigma = _log_parameters(mean, cv)
    normal = NormalDist()
    z = np.array([normal.inv_cdf((node + 0.5) / nodes) for node in range(nodes)])
    return np.clip(np.exp(mu + sigma * z), 1.0, float(cap))
