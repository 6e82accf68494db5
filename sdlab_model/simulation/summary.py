"""The simulation of one design that the judgement reads: ``simulate_design`` and its cache key.

It is ``simulate_converged`` with the Lab's budget and seed: sized by simulated time and by
batches per batcher, one representative replica where the balancer allows, a batch-means
interval for the p99, and "not converged" where the budget ends first.
"""

from __future__ import annotations

from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.simulation.converged import ConvergedSim, simulate_converged
from sdlab_model.workload import Workload

DESIGN_SEED = 0

# Inputs that change no simulated latency, each with the value a simulation key holds instead.
# (The target is only compared with the result.) Every other input changes the simulation.
_NOT_SIMULATED = {"p99_target_ms": NUMERIC_BY_NAME["p99_target_ms"].default}


def simulation_key(workload: Workload) -> Workload:
    """``workload`` with the inputs a simulation ignores at fixed values: one simulation serves
    every p99 target."""
    return workload.with_changes(**_NOT_SIMULATED)


def simulate_design(workload: Workload) -> ConvergedSim:
    """The design's simulation with the Lab's budget and seed (a converged one, or one that
    says it is not and gives the interval it reached)."""
    return simulate_converged(simulation_key(workload), seed=DESIGN_SEED)
