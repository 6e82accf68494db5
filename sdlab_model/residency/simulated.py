"""The packed fleet with residency, simulated: what checks ``packed_latency`` and
``routed_latency``."""

from __future__ import annotations

import numpy as np

from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.residency.routing import ModelRouting, route_models
from sdlab_model.simulation.simulator import (
    CacheSettings,
    HolderRouting,
    ResidencySimResult,
    simulate_residency,
)
from sdlab_model.workload import Workload


def cache_settings(
    workload: Workload, inputs: ResidencyInputs, pinned_models: int = 0
) -> CacheSettings:
    """The simulator's per-model arrays for these inputs (the hottest ``pinned_models`` pinned)."""
    sizes = inputs.sizes_gb(workload.models_hosted)
    pinned = np.zeros(workload.models_hosted, dtype=np.bool_)
    pinned[:pinned_models] = True
    return CacheSettings(
        model_size_gb=sizes,
        load_ms=inputs.load_ms(sizes),
        pinned=pinned,
        cache_gb=inputs.usable_memory_gb,
    )


def simulate_packed(
    workload: Workload,
    inputs: ResidencyInputs,
    pinned_models: int = 0,
    n_requests: int = 200_000,
    seed: int = 0,
    replications: int = 4,
) -> ResidencySimResult:
    """Simulate the packed fleet with every replica's LRU cache of models (see
    ``sdlab_model.simulation.simulator.simulate_residency``)."""
    cache = cache_settings(workload, inputs, pinned_models)
    return simulate_residency(
        workload, cache, n_requests=n_requests, seed=seed, replications=replications
    )


def simulate_routed(
    workload: Workload,
    inputs: ResidencyInputs,
    routing: ModelRouting | None = None,
    n_requests: int = 200_000,
    seed: int = 0,
    replications: int = 4,
) -> ResidencySimResult:
    """Simulate model-aware routing: each request only to a replica holding its model, the
    balancer's policy among those, every replica's LRU cache of models as in
    ``simulate_packed`` (so a placement that overfills a replica's memory shows as misses)."""
    routing = route_models(workload, inputs) if routing is None else routing
    if not routing.feasible:
        raise ValueError(routing.note)
    holders = HolderRouting(routing.holder_replicas, routing.holder_start)
    return simulate_residency(
        workload,
        cache_settings(workload, inputs),
        n_requests=n_requests,
        seed=seed,
        replications=replications,
        holders=holders,
    )
