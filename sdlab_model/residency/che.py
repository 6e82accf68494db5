"""Che's approximation: the hit ratio of each model in an LRU cache of models.

A replica keeps the models it has loaded in accelerator memory and evicts the least recently
used one when a new one needs room. Under the independent reference model (model ``i`` is
referenced as a Poisson stream of rate ``rate_i``, independently of the others), Che, Tung and
Wang replace the random time a model survives in the cache by one deterministic *characteristic
time* ``T``: a model is resident at a reference if it was referenced within the last ``T``, so

    hit_i = 1 - exp(-rate_i * T),   with T solving   sum_i size_i * (1 - exp(-rate_i * T)) = C,

the expected memory held (``C`` the cache's capacity, in the sizes' unit) equal to the capacity.
With every size 1 this is Che's equation for a cache of ``C`` objects; with sizes it is the usual
extension (each model occupies its size while resident).

Approximations: the cache holds exactly ``C`` on average rather than at every instant; with
unequal sizes, LRU may leave a gap no evicted model could fill, which this ignores. Where the
cache holds one model at a time the hit ratio is exact instead (the previous reference was for
the same model), the one case Che's approximation is known to miss by a few points. Fricker,
Robert and Roberts explain why it is accurate even for small caches and many popularity laws;
``scripts/residency_check.py`` measures it against a simulated LRU cache on Zipf streams.

Sources:
    H. Che, Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling, design and
    experimental results", IEEE Journal on Selected Areas in Communications 20(7), 2002.
    C. Fricker, P. Robert, J. Roberts, "A versatile and accurate approximation for LRU cache
    performance", 24th International Teletraffic Congress (ITC 24), 2012; arXiv:1202.3974.
"""

from __future__ import annotations

import math

import numpy as np

_BISECTION_STEPS = 200


def characteristic_time(rates: np.ndarray, sizes: np.ndarray, capacity: float) -> float:
    """Che's characteristic time ``T`` (in the rates' reciprocal unit) for a cache of ``capacity``.

    ``inf`` when every referenced model fits at once (nothing is ever evicted); 0 when the cache
    cannot hold even the smallest one. The held memory ``m(T) = sum size_i (1 - exp(-rate_i T))``
    increases with ``T`` and is concave, so Newton's method started left of the root (at
    ``T = 0``) climbs to it without overshooting; a bisection bracket on ``T`` guards the steps
    and ends the search where Newton stalls (relative tolerance ``1e-12``).
    """
    rates = np.asarray(rates, dtype=float)
    sizes = np.broadcast_to(np.asarray(sizes, dtype=float), rates.shape)
    referenced = rates > 0.0
    if float(sizes[referenced].sum()) <= capacity:
        return math.inf
    if capacity <= 0.0:
        return 0.0
    rate, size = rates[referenced], sizes[referenced]
    low, high = 0.0, math.inf
    time = 0.0
    for _ in range(_BISECTION_STEPS):
        decay = np.exp(-rate * time)
        held = float(np.sum(size * (1.0 - decay)))
        slope = float(np.sum(size * rate * decay))
        if held < capacity:
            low = time
        else:
            high = time
        step = time + (capacity - held) / slope if slope > 0.0 else math.inf
        if not low <= step <= high or step == time:
            step = 0.5 * (low + high) if math.isfinite(high) else 2.0 * max(time, 1e-300)
        if abs(step - time) <= 1e-12 * step:
            return step
        time = step
    return time


def hit_ratios(rates: np.ndarray, sizes: np.ndarray, capacity: float) -> np.ndarray:
    """Each model's LRU hit ratio, ``1 - exp(-rate_i T)`` (exactly 1 where everything fits).

    ``rates``: references per unit time of each model (any unit); ``sizes``: memory of each model
    (one number for all, or one per model); ``capacity``: memory of the cache, same unit.
    """
    rates = np.asarray(rates, dtype=float)
    time = characteristic_time(rates, sizes, capacity)
    if math.isinf(time):
        return np.where(rates > 0.0, 1.0, 0.0)
    size = np.broadcast_to(np.asarray(sizes, dtype=float), rates.shape)
    referenced = rates > 0.0
    if capacity < 2.0 * float(size[referenced].min()):
        # Room for one model at a time: LRU holds the last one referenced, so a reference hits
        # exactly when the one before it was for the same model (Che is least accurate here).
        return np.where(size <= capacity, rates / rates.sum(), 0.0)
    return -np.expm1(-rates * time)


def overall_hit_ratio(rates: np.ndarray, sizes: np.ndarray, capacity: float) -> float:
    """The share of all references that hit: the rate-weighted mean of ``hit_ratios``."""
    rates = np.asarray(rates, dtype=float)
    return float(np.sum(rates * hit_ratios(rates, sizes, capacity)) / rates.sum())
