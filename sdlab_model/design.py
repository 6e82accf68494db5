"""The seed's design rules: need-flags, recommended stage, node/flow states, meters, decisions, reasons.

PLACEHOLDER CONTRACT — to be implemented from shared/SEED_MODEL.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sdlab_model.latency import LatencyResult
from sdlab_model.workload import Workload

MeterStatus = Literal["ok", "warning", "danger"]
ReasonStatus = Literal["ok", "warning", "danger"]


@dataclass(frozen=True)
class Needs:
    """The seed's raw need-flags plus the two architecture flags (batching', gpu')."""

    tight_tail: bool
    needs_batching: bool
    needs_gpu: bool
    needs_autoscale: bool
    needs_registry: bool
    needs_canary: bool
    needs_packing: bool
    over_capacity: bool
    tail_missed: bool
    models_per_slot: float
    packing_pressure: float
    batching_in_architecture: bool
    gpu_in_architecture: bool


@dataclass(frozen=True)
class Stage:
    """The recommended shape: stage 1-5, its title, a one-line summary and the request path."""

    number: int
    title: str
    summary: str
    path: tuple[str, ...]


@dataclass(frozen=True)
class Meter:
    """One bottleneck meter: ratio 1.0 = at the limit."""

    id: str
    label: str
    ratio: float
    status: MeterStatus
    value_text: str
    explanation: str


@dataclass(frozen=True)
class Decision:
    """One design decision and its state: needed, useful, tradeoff or not-yet."""

    id: str
    label: str
    state: str
    text: str


@dataclass(frozen=True)
class Reason:
    """One 'why this changes' line."""

    id: str
    status: ReasonStatus
    text: str


@dataclass(frozen=True)
class Design:
    needs: Needs
    stage: Stage
    node_states: dict[str, str]
    flow_states: dict[tuple[str, str], str]
    meters: tuple[Meter, ...]
    decisions: tuple[Decision, ...]
    reasons: tuple[Reason, ...]


def assess(workload: Workload, latency: LatencyResult) -> Design:
    raise NotImplementedError
