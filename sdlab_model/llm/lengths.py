"""Prompt and output lengths: a lognormal with a given mean and coefficient of variation.

Token counts of chat and instruction datasets are right-skewed with a long tail; a lognormal
with the dataset's mean and spread is the usual stand-in (e.g. Vidur, Agrawal et al.,
MLSys 2024, fits its traces' lengths this way). ``cv = 0`` is every request the same length.
Draws are rounded to whole tokens and kept within ``[1, cap]``; the analytic model uses the
same distribution through quantile nodes (``NODE_WEIGHTS``). Measured lengths replace it
through ``length_sample``, at the same nodes.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

_BODY_NODES = 24
_TAIL_NODES = 8
_BODY_MASS = 0.96
NODE_EDGES = np.concatenate(
    [
        np.linspace(0.0, _BODY_MASS, _BODY_NODES + 1),
        1.0 - (1.0 - _BODY_MASS) * np.geomspace(1.0, 1e-4, _TAIL_NODES + 1)[1:],
    ]
)
NODE_EDGES[-1] = 1.0
NODE_WEIGHTS = np.diff(NODE_EDGES)
"""Probability each quantile node stands for: 24 equal slices of the body, 8 ever thinner ones
in the top 4%, so that a p99 is resolved (equal slices would stop at the 98.4th percentile)."""
NODES = len(NODE_WEIGHTS)
_Z = np.array(
    [
        NormalDist().inv_cdf(float(p))
        for p in np.minimum((NODE_EDGES[:-1] + NODE_EDGES[1:]) / 2.0, 0.99999)
    ]
)


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


def length_nodes(mean: float, cv: float, cap: int) -> np.ndarray:
    """The lengths at the quantile nodes (weights ``NODE_WEIGHTS``): the slices' midpoints."""
    if cv == 0.0:
        return np.full(NODES, float(min(max(round(mean), 1), cap)))
    mu, sigma = _log_parameters(mean, cv)
    return np.clip(np.exp(mu + sigma * _Z), 1.0, float(cap))
