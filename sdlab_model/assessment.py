"""``judge``: one design in, the one judgement every page shows out; ``evaluate``, the model alone.

Latency comes from the chosen model (``queueing``, the default, or the seed's ``teaching`` model);
the architecture recommendation, node and flow states, meters, decisions and reasons come from the
seed's rules (``sdlab_model.design``) applied to that latency's capacity and p99.

``judge`` is what a person is shown: where the queueing model says it is outside its accuracy
target (``approximate``) it simulates the design and the rules read the simulated percentiles,
measured utilization and batch size, and the fewest replicas that meet the target are found by
the same judge. ``evaluate`` is the model alone, for sweeps and for the accuracy table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

import numpy as np

from sdlab_model import teaching
from sdlab_model.advice.hardware import hardware_by_id
from sdlab_model.design import (
    Alternatives,
    Decision,
    Design,
    Meter,
    Needs,
    PackingNumbers,
    Reason,
    Stage,
    assess,
    needs_of,
)
from sdlab_model.latency import Accuracy, LatencyResult
from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.queues import queueing
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.simulation.converged import ConvergedSim
from sdlab_model.simulation.summary import simulate_design, simulation_key
from sdlab_model.workload import Workload

ModelName = Literal["queueing", "teaching"]

__all__ = [
    "Assessment",
    "Decision",
    "Meter",
    "ModelName",
    "Needs",
    "Reason",
    "Stage",
    "design_simulation",
    "evaluate",
    "judge",
    "judged_min_replicas",
    "latency",
    "may_simulate",
    "min_replicas_for_target",
    "needs_simulation",
    "p99_pairs",
]


@dataclass(frozen=True)
class Assessment:
    """Everything the lab shows for one workload under one model."""

    workload: Workload
    model: ModelName
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float
    compute_ms: float
    batch_wait_ms: float
    queue_ms: float
    capacity_rps: float
    utilization: float
    is_stable: bool
    mean_batch_size: float
    accuracy: Accuracy
    accuracy_note: str
    needs: Needs
    stage: Stage
    node_states: dict[str, str]
    flow_states: dict[tuple[str, str], str]
    meters: tuple[Meter, ...]
    decisions: tuple[Decision, ...]
    reasons: tuple[Reason, ...]
    min_replicas_for_target: int | None
    packing: PackingNumbers | None = None
    modelled: LatencyResult | None = None
    """The chosen model's own latency, before any simulation replaced it (the accuracy table)."""
    simulation: ConvergedSim | None = None
    """The simulation the percentiles come from, where they are simulated."""
    slot_utilization: float = math.nan
    """Busy share of the slots at the batch sizes that form (measured where simulated);
    ``utilization`` is the load against capacity, the rate at which the design turns unstable."""

    @property
    def meets_target(self) -> bool:
        return self.is_stable and self.p99_ms <= self.workload.p99_target_ms

    @property
    def is_simulated(self) -> bool:
        """Whether the percentiles, utilization and batch size shown come from a simulation."""
        return self.simulation is not None

    @property
    def p99_ci_ms(self) -> tuple[float, float] | None:
        """The simulated p99's 95% interval, or None where the p99 is the model's."""
        return self.simulation.p99_ci_ms if self.simulation is not None else None

    @property
    def p99_source(self) -> str:
        """Where the p99 comes from, in a few words a person reads beside it."""
        if self.simulation is None:
            return {
                "exact": "queueing model, exact",
                "validated": "queueing model, checked against simulation",
                "heuristic": "teaching model's heuristic",
            }.get(self.accuracy, "queueing model")
        if not self.simulation.converged:
            return "simulated, not converged"
        return "simulated"


def _check_model(model: str) -> None:
    if model not in ("queueing", "teaching"):
        raise ValueError(f"model={model!r} is not one of 'queueing', 'teaching'")


def latency(workload: Workload, model: ModelName = "queueing") -> LatencyResult:
    """The chosen model's latency result for one workload."""
    _check_model(model)
    if model == "teaching":
        return teaching.latency(workload)
    return _queueing_latency(workload.with_changes(p99_target_ms=_DEFAULT_TARGET_MS))


# Memos for the Lab's evaluations. A visitor moves one input at a time, and each alternative the
# decisions quote is some other workload's number: moving the p99 target changes no latency
# (the queueing model never reads it), and moving the replicas changes no p99-over-replica-counts
# column, so those are kept per workload with the input they ignore at its default. 256 of each
# (a column is at most 500 floats, 4 KB).
_DEFAULT_TARGET_MS = NUMERIC_BY_NAME["p99_target_ms"].default
_DEFAULT_REPLICAS = int(NUMERIC_BY_NAME["replicas"].default)


@lru_cache(maxsize=256)
def _queueing_latency(workload: Workload) -> LatencyResult:
    return queueing.latency(workload)


def p99_grid(
    workload: Workload,
    rates_rps: np.ndarray,
    replicas: np.ndarray,
    model: ModelName = "queueing",
) -> np.ndarray:
    """p99 (ms) over rates x replicas, shape ``(len(replicas), len(rates))``; inf if unstable.

    Every other input is the workload's. Vectorized: no Python loop per cell.
    """
    _check_model(model)
    module = teaching if model == "teaching" else queueing
    return module.p99_grid(workload, np.asarray(rates_rps, float), np.asarray(replicas, float))


def p99_pairs(
    workload: Workload,
    rates_rps: np.ndarray,
    replicas: np.ndarray,
    model: ModelName = "queueing",
) -> np.ndarray:
    """p99 (ms) per (rate, replica count) pair: ``rates_rps`` and ``replicas`` of one shape, each
    cell what ``p99_grid`` gives for that pair; inf if unstable. For searches that need a few
    counts per rate rather than every count at every rate."""
    _check_model(model)
    module = teaching if model == "teaching" else queueing
    rates, counts = np.broadcast_arrays(np.asarray(rates_rps, float), np.asarray(replicas, float))
    return module.p99_pairs(workload, rates, counts)


def min_replicas_for_target(workload: Workload, model: ModelName = "queueing") -> int | None:
    """Smallest replica count (up to the slider maximum) whose p99 meets the target, else None.

    The counts are tried in two spans, the first ``_FIRST_SPAN`` then the rest, so the usual
    answer costs a few dozen cells rather than every count (the same answer as a full sweep: the
    first span is searched whole before the second is computed).
    """
    _check_model(model)
    key = workload.with_changes(replicas=_DEFAULT_REPLICAS, p99_target_ms=_DEFAULT_TARGET_MS)
    top = int(NUMERIC_BY_NAME["replicas"].maximum)
    for first, last in ((1, _FIRST_SPAN), (_FIRST_SPAN + 1, top)):
        meets = np.flatnonzero(
            _p99_over_replica_counts(key, model, first, last) <= workload.p99_target_ms
        )
        if meets.size:
            return first + int(meets[0])
    return None


_FIRST_SPAN = 32
"""Replica counts searched first: most labs meet their target within them."""


@lru_cache(maxsize=256)
def _p99_over_replica_counts(
    workload: Workload, model: ModelName, first: int, last: int
) -> np.ndarray:
    """p99 (ms) at replica counts ``first`` to ``last``, at the workload's rate (read-only: it
    is shared)."""
    counts = np.arange(first, last + 1, dtype=float)
    p99 = p99_grid(workload, np.array([workload.rate_rps]), counts, model)[:, 0]
    p99.setflags(write=False)
    return p99


def evaluate(
    workload: Workload, model: ModelName = "queueing", residency: ResidencyInputs | None = None
) -> Assessment:
    """Assess one workload by the model alone: latencies, capacity, stability, recommendation,
    states and advice. For sweeps and the accuracy table; what a page shows is ``judge``'s.

    In queueing mode, a GPU fleet the rules say needs packing also gets the residency model's
    placements (``sdlab_model.residency``, with ``residency`` or the default inputs): the
    packing decision then says which placement meets the target for less.
    """
    result = latency(workload, model)
    return _assessment(
        workload, model, residency, result, min_replicas_for_target(workload, model), None
    )


def needs_simulation(workload: Workload, model: ModelName = "queueing") -> bool:
    """Whether ``judge`` simulates this design itself: the queueing model is outside its accuracy
    target here and the design is stable (``may_simulate`` also counts the replica search).
    Cheap: the model's own result is memoized."""
    if model != "queueing":
        return False
    result = latency(workload, model)
    return result.accuracy == "approximate" and result.is_stable


def judge(
    workload: Workload, model: ModelName = "queueing", residency: ResidencyInputs | None = None
) -> Assessment:
    """The one judgement of a design: the numbers and marks every page shows.

    Where the queueing model is ``approximate`` the design is simulated
    (``simulation.summary.simulate_design``) and the design rules read the simulated
    percentiles, measured slot utilization and batch size; the replicas needed are the fewest
    that meet the target by this same judgement (``judged_min_replicas``). Elsewhere it is
    ``evaluate``'s assessment. The teaching model is never simulated: it reproduces the seed page.

    Approximations: a simulation carries sampling error (``Assessment.p99_ci_ms``); the
    alternatives the decisions quote (batching toggled, the other hardware) are the model's.
    """
    _check_model(model)
    modelled = latency(workload, model)
    simulation = None
    result = modelled
    if needs_simulation(workload, model):
        simulation = design_simulation(workload)
        result = _simulated_latency(modelled, simulation)
    return _assessment(
        workload, model, residency, result, judged_min_replicas(workload, model), simulation
    )


def design_simulation(workload: Workload) -> ConvergedSim:
    """The simulation ``judge`` reads for ``workload`` (one per design, whatever its target)."""
    return _simulation(simulation_key(workload))


# A few KB each (a 250-point CDF): Advice's search alone may judge up to 80 designs.
@lru_cache(maxsize=256)
def _simulation(key: Workload) -> ConvergedSim:
    return simulate_design(key)


def _simulated_latency(modelled: LatencyResult, sim: ConvergedSim) -> LatencyResult:
    """The model's result with the simulation's percentiles and batch size; the breakdown keeps
    the model's compute and its formation wait (at most the window), the rest of the simulated
    p99 is queueing."""
    if not sim.is_stable:
        return replace(modelled, p50_ms=math.inf, p95_ms=math.inf, p99_ms=math.inf)
    rest = max(0.0, sim.p99_ms - modelled.compute_ms)
    formation = min(modelled.batch_wait_ms, rest)
    return replace(
        modelled,
        p50_ms=sim.p50_ms,
        p95_ms=sim.p95_ms,
        p99_ms=sim.p99_ms,
        compute_ms=min(modelled.compute_ms, sim.p99_ms),
        batch_wait_ms=formation,
        queue_ms=rest - formation,
        mean_batch_size=(
            sim.mean_batch_size if math.isfinite(sim.mean_batch_size) else modelled.mean_batch_size
        ),
        accuracy_note=f"{modelled.accuracy_note} Shown: the simulated percentiles. {sim.note}",
    )


def judged_p99_ms(workload: Workload, model: ModelName = "queueing") -> float:
    """The p99 ``judge`` gives ``workload`` (simulated where the model is approximate)."""
    if needs_simulation(workload, model):
        return design_simulation(workload).p99_ms
    return latency(workload, model).p99_ms


MAX_JUDGED_STEPS = 12
"""Simulated replica counts the judged search may try beyond the model's answer."""


def may_simulate(workload: Workload, model: ModelName = "queueing") -> bool:
    """Whether ``judge`` may run simulations for this design (itself, or the replica counts its
    search for the fewest replicas tries), so that a caller can budget for it."""
    if needs_simulation(workload, model):
        return True
    if model != "queueing":
        return False
    first = min_replicas_for_target(workload, model)
    return _search_simulates(
        workload, model, first if first is not None else int(NUMERIC_BY_NAME["replicas"].maximum)
    )


def _search_simulates(workload: Workload, model: ModelName, start: int) -> bool:
    """Whether the model is approximate at the replica count it finds, or one below it."""
    return any(
        needs_simulation(workload.with_changes(replicas=count), model)
        for count in (start - 1, start)
        if count >= 1
    )


def judged_min_replicas(workload: Workload, model: ModelName = "queueing") -> int | None:
    """The fewest replicas whose judged p99 meets the target: the model's answer where the model
    is trusted there, else a search by the same judgement from it (up in growing steps until a
    count meets, then bisection down to the fewest, assuming more replicas never hurt).

    None when no count up to the slider's maximum meets it (or the search ran out of its
    ``MAX_JUDGED_STEPS`` simulations without finding one).
    """
    first = min_replicas_for_target(workload, model)
    if model != "queueing":
        return first
    top = int(NUMERIC_BY_NAME["replicas"].maximum)
    target = workload.p99_target_ms
    checked: dict[int, bool] = {}

    def meets(count: int) -> bool:
        if count not in checked:
            checked[count] = judged_p99_ms(workload.with_changes(replicas=count), model) <= target
        return checked[count]

    start = first if first is not None else top
    if not _search_simulates(workload, model, start):
        return first
    # A bracket (low, high]: `low` misses or is 0, `high` meets; grown in doubling steps.
    if meets(start):
        low, high, step = start - 1, start, 1
        while low > 0 and meets(low) and len(checked) < MAX_JUDGED_STEPS:
            step *= 2
            low, high = max(0, low - step), low
    else:
        low, high, step = start, None, 1
        while high is None and low < top and len(checked) < MAX_JUDGED_STEPS:
            candidate = min(top, low + step)
            if meets(candidate):
                high = candidate
            else:
                low, step = candidate, step * 2
        if high is None:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if meets(middle) else (middle, high)
    return high


def _assessment(
    workload: Workload,
    model: ModelName,
    residency: ResidencyInputs | None,
    result: LatencyResult,
    replicas_now: int | None,
    simulation: ConvergedSim | None,
) -> Assessment:
    alternatives = None
    if model == "queueing":
        toggled = workload.with_changes(dynamic_batching=not workload.dynamic_batching)
        other = workload.with_changes(gpu=not workload.gpu)
        alternatives = Alternatives(
            batching_toggled_p99_ms=latency(toggled, model).p99_ms,
            replicas_now=replicas_now,
            replicas_batching_toggled=min_replicas_for_target(toggled, model),
            replicas_other_hardware=min_replicas_for_target(other, model),
            usd_per_replica_hour=_price(workload),
            other_usd_per_replica_hour=_price(other),
            packing=_packing_numbers(workload, result, residency),
            slot_utilization=_slot_utilization(workload, result, simulation),
        )
    design: Design = assess(workload, result, alternatives)
    return Assessment(
        workload=workload,
        model=model,
        p50_ms=result.p50_ms,
        p95_ms=result.p95_ms,
        p99_ms=result.p99_ms,
        compute_ms=result.compute_ms,
        batch_wait_ms=result.batch_wait_ms,
        queue_ms=result.queue_ms,
        capacity_rps=result.capacity_rps,
        utilization=result.utilization,
        is_stable=result.is_stable,
        mean_batch_size=result.mean_batch_size,
        accuracy=result.accuracy,
        accuracy_note=result.accuracy_note,
        needs=design.needs,
        stage=design.stage,
        node_states=design.node_states,
        flow_states=design.flow_states,
        meters=design.meters,
        decisions=design.decisions,
        reasons=design.reasons,
        min_replicas_for_target=replicas_now,
        packing=alternatives.packing if alternatives is not None else None,
        modelled=latency(workload, model),
        simulation=simulation,
        slot_utilization=_slot_utilization(workload, result, simulation),
    )


def _slot_utilization(
    workload: Workload, result: LatencyResult, simulation: ConvergedSim | None
) -> float:
    """Measured where simulated; else each request's share of its batch's service at the mean
    batch size that forms, times the rate, over the slots (the load itself without batching)."""
    if not result.is_stable:
        return 1.0
    if simulation is not None and math.isfinite(simulation.slot_utilization):
        return min(simulation.slot_utilization, 1.0)
    size = max(1.0, result.mean_batch_size)
    per_request_ms = float(workload.batch_service_ms(size)) / size
    return min(1.0, workload.rate_rps * per_request_ms / (1000.0 * workload.servers))


def _price(workload: Workload) -> float:
    return workload.gpu_usd_per_replica_hour if workload.gpu else workload.cpu_usd_per_replica_hour


def _packing_numbers(
    workload: Workload, result: LatencyResult, residency: ResidencyInputs | None
) -> PackingNumbers | None:
    """The residency model's placements, where the rules call for packing a GPU fleet."""
    if not workload.gpu or workload.is_central_queue or workload.models_hosted < 2:
        return None
    if not needs_of(workload, result).needs_packing:
        return None
    # Imported here: the residency model itself reads this module's p99 grid.
    from sdlab_model.residency.placement import PLACEMENT_LABELS, plan_residency

    plan = plan_residency(workload, residency or ResidencyInputs(), sweep=False)
    chosen = plan.placement(plan.recommended) if plan.recommended else None
    packed = plan.placement("packed_lru")
    return PackingNumbers(
        recommended=plan.recommended,
        recommended_label=PLACEMENT_LABELS[plan.recommended] if plan.recommended else "",
        recommended_usd_per_hour=chosen.usd_per_hour_to_meet if chosen else float("inf"),
        recommended_replicas=chosen.replicas_to_meet if chosen else None,
        dedicated_usd_per_hour=plan.placement("dedicated").usd_per_hour_to_meet,
        packed_p99_ms=packed.p99_ms,
        packed_hit_ratio=packed.hit_ratio,
        packed_load_wait_share=packed.load_wait_share,
        models_fit_per_replica=plan.models_fit_per_replica,
        accelerator_memory_gb=plan.inputs.accelerator_memory_gb,
        usd_per_replica_hour=plan.usd_per_replica_hour,
        accelerator=hardware_by_id(plan.inputs.accelerator).accelerator or "",
    )
