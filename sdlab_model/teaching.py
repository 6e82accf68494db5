"""The original lab's teaching model, reproduced exactly (docs/teaching_model.md, "Latency").

Every number here is a teaching budget, not a measurement: per-replica throughput is a fixed
budget, batching multiplies it up to 6x, and the queueing penalty is an M/M/1-like term relieved by
sqrt(replicas). It never reports saturation by itself; ``is_stable`` says honestly whether the
offered load exceeds the budgeted capacity.
"""

from __future__ import annotations

import math

import numpy as np

from sdlab_model.latency import LatencyResult
from sdlab_model.params import (
    SEED_BATCH_MULTIPLIER_CEILING,
    SEED_CPU_REPLICA_RPS_AT_15MS,
    SEED_GPU_FACTOR,
)
from sdlab_model.workload import Workload

_QUEUE_CAP_LATENCIES = 8.0


def batch_active(workload: Workload) -> bool:
    """The original page batches only with the toggle on and a window above zero."""
    return bool(workload.dynamic_batching and workload.batch_window_ms > 0)


def batch_multiplier(workload: Workload) -> float:
    """``min(6, 1 + W*L/200)`` when batching is active, else 1."""
    if not batch_active(workload):
        return 1.0
    return min(
        SEED_BATCH_MULTIPLIER_CEILING,
        1.0 + workload.batch_window_ms * workload.model_latency_ms / 200.0,
    )


def fleet_capacity_rps(workload: Workload) -> float:
    """Per-replica budget ``1000*15/max(1,L)``, x8 on GPU, x the batch multiplier, x replicas."""
    per_replica = (
        SEED_CPU_REPLICA_RPS_AT_15MS
        * 15.0
        / max(1.0, workload.model_latency_ms)
        * (SEED_GPU_FACTOR if workload.gpu else 1.0)
        * batch_multiplier(workload)
    )
    return per_replica * workload.replicas


def latency(workload: Workload) -> LatencyResult:
    """The teaching p99: ``L + W_active + min(queue, 8L)``, ``queue = L*u/(1-min(.99,u))/sqrt(R)``.

    Approximations: the queueing term is a heuristic, not a queueing result; it overstates the
    M/M/c wait several-fold and caps at 8L instead of diverging at saturation.
    Sources: the original Model Serving lab (``sources.ORIGINAL_LAB``), docs/teaching_model.md.
    """
    capacity = fleet_capacity_rps(workload)
    utilization = workload.rate_rps / max(1.0, capacity)
    latency_ms = float(workload.model_latency_ms)
    raw_queue_ms = latency_ms * utilization / max(0.01, 1.0 - min(0.99, utilization))
    queue_ms = min(raw_queue_ms / math.sqrt(workload.replicas), _QUEUE_CAP_LATENCIES * latency_ms)
    window_ms = float(workload.batch_window_ms) if batch_active(workload) else 0.0
    p99 = latency_ms + window_ms + queue_ms
    stable = utilization < 1.0
    note = "The original lab's teaching heuristic: a budget, not a queueing result."
    if not stable:
        note += (
            " The offered load exceeds the budgeted capacity, so a real queue would grow "
            "without bound."
        )
    return LatencyResult(
        p50_ms=None,
        p95_ms=None,
        p99_ms=p99,
        compute_ms=latency_ms,
        batch_wait_ms=window_ms,
        queue_ms=queue_ms,
        capacity_rps=capacity,
        utilization=utilization,
        is_stable=stable,
        # The original page has no batch size; its capacity multiplier is the nearest thing it has.
        mean_batch_size=batch_multiplier(workload),
        accuracy="heuristic",
        accuracy_note=note,
    )


def p99_grid(workload: Workload, rates_rps: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """The teaching p99 over rates x replicas, shape ``(len(replicas), len(rates))``, vectorized.

    Cells whose load reaches the budgeted capacity are ``inf``: the original page would show a
    capped number there, but a heatmap must not present an unstable queue as a finite latency.
    """
    rates = np.asarray(rates_rps, dtype=float)[None, :]
    reps = np.asarray(replicas, dtype=float)[:, None]
    return p99_pairs(workload, rates, reps)


def p99_pairs(workload: Workload, rates_rps: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """The teaching p99 per cell of ``rates_rps`` and ``replicas`` broadcast together (one
    (rate, replica count) pair per cell), as ``p99_grid`` gives it."""
    rates = np.asarray(rates_rps, dtype=float)
    reps = np.asarray(replicas, dtype=float)
    per_replica = fleet_capacity_rps(workload.with_changes(replicas=1))
    utilization = rates / np.maximum(1.0, per_replica * reps)
    latency_ms = float(workload.model_latency_ms)
    raw_queue = latency_ms * utilization / np.maximum(0.01, 1.0 - np.minimum(0.99, utilization))
    queue = np.minimum(raw_queue / np.sqrt(reps), _QUEUE_CAP_LATENCIES * latency_ms)
    window_ms = float(workload.batch_window_ms) if batch_active(workload) else 0.0
    return np.where(utilization < 1.0, latency_ms + window_ms + queue, np.inf)
