"""Advice: what to build and what it costs, judged as the Lab judges a design.

- ``hardware``: the catalog of instance types, prices and batch-latency profiles (data in
  ``advice/data``), and measured profiles a person uploads.
- ``cost``: dollars per hour and per million inferences.
- ``search``: ``advise`` (the cheapest design that meets the target), ``levers``,
  ``comparisons`` (idealized policies) and ``breaking_points``, every verdict the Lab's judge's.
"""

from sdlab_model.advice.cost import FleetCost, fleet_cost
from sdlab_model.advice.hardware import CATALOG, BatchProfile, HardwareType, hardware_by_id
from sdlab_model.advice.search import (
    Advice,
    BreakingPoint,
    Comparison,
    Design,
    Lever,
    advise,
    breaking_points,
    comparisons,
    levers,
    workload_cost,
)

__all__ = [
    "CATALOG",
    "Advice",
    "BatchProfile",
    "BreakingPoint",
    "Comparison",
    "Design",
    "FleetCost",
    "HardwareType",
    "Lever",
    "advise",
    "breaking_points",
    "comparisons",
    "fleet_cost",
    "hardware_by_id",
    "levers",
    "workload_cost",
]
