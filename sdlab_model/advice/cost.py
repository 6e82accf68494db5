"""What a fleet costs: dollars per hour and per million inferences.

A fleet of ``replicas`` instances at ``usd_per_hour`` each costs ``replicas * usd_per_hour`` an
hour whatever its load; spread over the offered rate that is
``$/1M = $/h x replicas x 10^6 / (3600 x rate_rps)``. Prices are on-demand list prices from the
hardware catalog (``sdlab_model.advice.hardware``), each with its source and date.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class FleetCost:
    """The fleet's price: per hour, and per million inferences at the offered rate."""

    replicas: int
    usd_per_replica_hour: float
    rate_rps: float

    @property
    def usd_per_hour(self) -> float:
        return self.replicas * self.usd_per_replica_hour

    @property
    def usd_per_million(self) -> float:
        """Dollars per million inferences served at ``rate_rps`` (``inf`` at no traffic)."""
        if self.rate_rps <= 0.0:
            return math.inf
        return self.usd_per_hour * 1e6 / (SECONDS_PER_HOUR * self.rate_rps)


def fleet_cost(replicas: int, usd_per_replica_hour: float, rate_rps: float) -> FleetCost:
    """A ``FleetCost``, validated: whole replicas >= 1, a positive price, a rate >= 0."""
    if isinstance(replicas, bool) or int(replicas) != replicas or replicas < 1:
        raise ValueError(f"replicas={replicas!r} must be a whole number >= 1")
    if not (math.isfinite(usd_per_replica_hour) and usd_per_replica_hour > 0.0):
        raise ValueError(f"usd_per_replica_hour={usd_per_replica_hour!r} must be > 0")
    if not (math.isfinite(rate_rps) and rate_rps >= 0.0):
        raise ValueError(f"rate_rps={rate_rps!r} must be >= 0")
    return FleetCost(int(replicas), float(usd_per_replica_hour), float(rate_rps))
