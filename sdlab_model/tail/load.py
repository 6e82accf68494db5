"""Hedging's extra load fed back into the leaves' latency, under a stated queueing assumption.

Hedges are not free: each second copy is one more request at some leaf, and a busier leaf is a
slower one. Assumed here, plainly:

- each leaf is a single-server queue whose latency distribution at utilization ``rho`` is the
  fitted one, measured at ``base_utilization``, with every latency scaled by
  ``(1 - base) / (1 - rho)``: how every quantile of an M/M/1 sojourn time moves with load
  (exact there; for the fitted shape an assumption, not a result);
- a copy sent is a copy served: cancellation saves nothing (the bound, and the paper's
  "additional load" counted as requests), so the leaves' load rises by the share hedged,
  ``rho = base (1 + h)``;
- the hedge delay stays at the ms it was set to (the unloaded p95), so as the leaves slow down
  more requests pass it and ``h`` grows: ``h = P(scale X > d)``, a fixed point found by
  iteration. Past ``rho = 1`` there is no steady state and the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sdlab_model.tail.fanout import fanout_quantiles
from sdlab_model.tail.hedging import HedgedLeaf
from sdlab_model.tail.leaf import LeafLatency

_ITERATIONS = 500
_TOLERANCE = 1e-12


@dataclass(frozen=True)
class LoadedHedge:
    """Hedging with its load fed back: the utilization and scale it settles at, and the tail.

    Where no steady state exists (``stable`` false) ``scale`` and the loaded quantiles are
    infinite, and ``utilization`` and ``hedged_share`` are the iteration's first past 1.
    """

    base_utilization: float
    utilization: float
    scale: float
    hedged_share: float
    stable: bool
    unhedged: dict[float, float]
    hedged_unloaded: dict[float, float]
    hedged_loaded: dict[float, float]


def settle(leaf: LeafLatency, delay_ms: float, base: float) -> tuple[float, float, float]:
    """``(share hedged, utilization, scale)`` where the hedges' load and latency agree (scale
    infinite where the iteration passes a utilization of 1)."""
    scale, share, rho = 1.0, 0.0, base
    for _ in range(_ITERATIONS):
        share = float(leaf.sf(delay_ms / scale))
        rho = base * (1.0 + share)
        if rho >= 1.0:
            return share, rho, math.inf
        updated = (1.0 - base) / (1.0 - rho)
        if abs(updated - scale) <= _TOLERANCE * scale:
            return share, rho, updated
        scale = updated
    return share, rho, scale


def hedge_under_load(
    leaf: LeafLatency,
    delay_ms: float,
    fanout: int,
    base_utilization: float,
    quantiles: tuple[float, ...] = (0.99, 0.999),
) -> LoadedHedge:
    """The fanned-out request's quantiles unhedged, hedged on idle leaves, and hedged with the
    hedges' load slowing the leaves (``leaf`` measured at ``base_utilization``)."""
    if not 0.0 <= base_utilization < 1.0:
        raise ValueError(f"base utilization must be in [0, 1), got {base_utilization}")
    share, rho, scale = settle(leaf, delay_ms, base_utilization)
    stable = math.isfinite(scale)
    loaded = (
        fanout_quantiles(HedgedLeaf(leaf.scaled(scale), delay_ms), fanout, quantiles)
        if stable
        else dict.fromkeys(quantiles, math.inf)
    )
    return LoadedHedge(
        base_utilization=base_utilization,
        utilization=rho,
        scale=scale,
        hedged_share=share,
        stable=stable,
        unhedged=fanout_quantiles(leaf, fanout, quantiles),
        hedged_unloaded=fanout_quantiles(HedgedLeaf(leaf, delay_ms), fanout, quantiles),
        hedged_loaded=loaded,
    )
