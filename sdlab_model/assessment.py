"""``evaluate``: one workload in, everything the lab shows out.

Latency comes from the chosen model (``queueing``, the default, or the seed's ``teaching`` model);
the architecture recommendation, node and flow states, meters, decisions and reasons come from the
seed's rules (``sdlab_model.design``) applied to that model's own capacity and p99.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    "evaluate",
    "latency",
    "min_replicas_for_target",
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

    @property
    def meets_target(self) -> bool:
        return self.is_stable and self.p99_ms <= self.workload.p99_target_ms


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
    """Assess one workload: latencies, capacity, stability, recommendation, states and advice.

    In queueing mode, a GPU fleet the rules say needs packing also gets the residency model's
    placements (``sdlab_model.residency``, with ``residency`` or the default inputs): the
    packing decision then says which placement meets the target for less.
    """
    result = latency(workload, model)
    replicas_now = min_replicas_for_target(workload, model)
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
    )


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
