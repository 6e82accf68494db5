"""What a latency model returns: percentiles, their breakdown, capacity and how far to trust it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# "validated": an approximation that simulation showed to be within its accuracy target there;
# "approximate": outside it, so the app shows a simulated p99 instead.
Accuracy = Literal["exact", "validated", "approximate", "heuristic"]


@dataclass(frozen=True)
class LatencyResult:
    """End-to-end latency of one workload under one model.

    ``p99_ms`` is ``inf`` (and ``is_stable`` False) at or beyond capacity, never a capped number.
    The breakdown splits the p99 into compute, batch formation wait and queueing so that the three
    add up to ``p99_ms`` when it is finite. ``p50_ms``/``p95_ms`` are None for the teaching model,
    which only defines a p99.
    """

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
