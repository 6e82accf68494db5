"""Residency: many models on few accelerators, what stays loaded and what a miss costs.

- ``che``: Che's approximation of each model's hit ratio in an LRU cache.
- ``inputs``: model sizes, accelerator memory (from the hardware catalog), the reserve, loads.
- ``latency``: ``packed_latency``, the p99 of a packed fleet with misses and loads in it.
- ``routing``: model-aware routing, each model on the fewest replicas its traffic needs and each
  request only to a replica that holds it, and its p99 from each replica's own mix.
- ``placement``: ``plan_residency``, the entry point: dedicated, packed LRU, packed with the
  hottest pinned and model-aware routing, side by side, with the memory the target needs and
  where packing stops paying.
- ``simulated``: the same fleet simulated, to check the analytic model.
"""

from sdlab_model.residency.che import hit_ratios, overall_hit_ratio
from sdlab_model.residency.inputs import ACCELERATOR_IDS, ResidencyInputs
from sdlab_model.residency.latency import ResidencyLatency, packed_latency

__all__ = [
    "ACCELERATOR_IDS",
    "ResidencyInputs",
    "ResidencyLatency",
    "hit_ratios",
    "overall_hit_ratio",
    "packed_latency",
]
