"""The design rules: need-flags, stage, node and flow states, meters, decisions, reasons.

The rules are the original lab's, exactly (docs/teaching_model.md: thresholds, states and the
order of the reasons). What the page computed from its own heuristic latency model — utilization,
whether the fleet is over capacity, whether the p99 misses its target — comes here from the
``LatencyResult`` passed in, so the same rules read the queueing model's capacity and p99 when that
model is chosen, and reproduce the page when the teaching model is. The queueing model may report
``p99_ms = inf`` and ``utilization >= 1`` for an unstable queue: every rule, ratio and text below
handles that (an infinite ratio, "unstable (∞)" in the text), and nothing is ever NaN.

The prose (titles aside) is ours; only the facts are the original page's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from sdlab_model.architecture import FLOWS, NODE_IDS
from sdlab_model.latency import LatencyResult
from sdlab_model.params import MODELS_PER_REPLICA_HOT, SAFE_UTILIZATION
from sdlab_model.teaching import batch_active
from sdlab_model.wording import count
from sdlab_model.workload import Workload

# "neutral": passes on its own while the design as a whole fails, so it gets neither a tick nor a
# warning (a tick only on what passes, a warning only on what is at risk).
MeterStatus = Literal["ok", "neutral", "warning", "danger"]
ReasonStatus = Literal["ok", "neutral", "warning", "danger"]
DecisionState = Literal["needed", "useful", "tradeoff", "not-yet"]

METER_STATUSES: tuple[str, ...] = ("ok", "neutral", "warning", "danger")
REASON_STATUSES: tuple[str, ...] = ("ok", "neutral", "warning", "danger")
DECISION_STATES: tuple[str, ...] = ("needed", "useful", "tradeoff", "not-yet")

# The original lab's rule thresholds (docs/teaching_model.md, need flags and component states).
TIGHT_TAIL_TARGET_MS = 60.0
BATCHING_RATE_RPS = 1_000.0  # batching pays off above this rate unless the tail is tight ...
BATCHING_ANY_TARGET_RATE_RPS = 2_000.0  # ... and above this one regardless
HEAVY_MODEL_LATENCY_MS = 40.0
HIGH_RATE_RPS = 5_000.0  # GPU (for heavy models) and autoscaling both start here
AUTOSCALE_REPLICAS = 5
CANARY_MODELS = 2  # more models than this means versions are in flight: split traffic
PACKING_MODELS = 20
PACKING_SLOT_SHARE = 0.5
PACKING_PRESSURE_MODELS = 60.0
REPLICA_WARNING_UTILIZATION = 0.6
FLEET_METER_REPLICAS = 100.0
MAX_REASONS = 7

# Meter status: a ratio of 1.0 is at the limit. The flags it mirrors (over_capacity, tail_missed)
# are strict inequalities, so being exactly at the limit is a warning, and only past it danger.
# The warning line sits at 0.9 because the accelerator meter scores a well-batched GPU 0.85, a
# healthy state that must not read as a warning.
METER_WARNING_RATIO = 0.9

# The accelerator-efficiency meter is a fixed score per situation in the original page, not a
# measurement.
GPU_BATCHED_RATIO = 0.85
GPU_UNBATCHED_RATIO = 1.4
CPU_NEEDS_GPU_RATIO = 1.2
CPU_ENOUGH_RATIO = 0.3


@dataclass(frozen=True)
class Needs:
    """The raw need-flags plus the two architecture flags (batching', gpu')."""

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
    """One bottleneck meter: ratio 1.0 = at the limit (``inf`` for an unstable queue's p99)."""

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
    state: DecisionState
    text: str


@dataclass(frozen=True)
class Reason:
    """One 'why this changes' line."""

    id: str
    status: ReasonStatus
    text: str


@dataclass(frozen=True)
class PackingNumbers:
    """What the residency model (``sdlab_model.residency``) says about packing this workload.

    ``recommended``: the cheapest placement meeting the target (``dedicated``, ``packed_lru``,
    ``packed_pinned``, ``model_aware``) or ``None``; the packed figures are the LRU placement's
    at the workload.
    """

    recommended: str | None
    recommended_label: str
    recommended_usd_per_hour: float
    recommended_replicas: int | None
    dedicated_usd_per_hour: float
    packed_p99_ms: float
    packed_hit_ratio: float
    packed_load_wait_share: float
    models_fit_per_replica: int
    accelerator_memory_gb: float
    usd_per_replica_hour: float = math.nan
    accelerator: str = ""


@dataclass(frozen=True)
class Alternatives:
    """What the queueing model says about the nearest alternatives to the current design.

    ``replicas_*`` are the fewest replicas (1-500) that meet the p99 target, ``None`` if none
    does; prices are per replica-hour.
    """

    batching_toggled_p99_ms: float
    replicas_now: int | None
    replicas_batching_toggled: int | None
    replicas_other_hardware: int | None
    usd_per_replica_hour: float
    other_usd_per_replica_hour: float
    packing: PackingNumbers | None = None
    slot_utilization: float = math.nan
    """Busy share of the slots at the batch sizes that form (see ``Assessment``)."""


@dataclass(frozen=True)
class Design:
    """Everything the original page's rules say about one workload under one latency result."""

    needs: Needs
    stage: Stage
    node_states: dict[str, str]
    flow_states: dict[tuple[str, str], str]
    meters: tuple[Meter, ...]
    decisions: tuple[Decision, ...]
    reasons: tuple[Reason, ...]


# The five shapes, numbered along the evolution path of the scenario cards (card n lands on stage
# n). The original page tries them in another order, most specific first: see ``recommend_stage``.
# The request paths are node ids.
STAGES: dict[int, Stage] = {
    1: Stage(
        1,
        "Single model endpoint",
        "One replica behind a gateway: the load is light, so anything more would only add "
        "latency and cost.",
        ("gateway", "replicas"),
    ),
    2: Stage(
        2,
        "Dynamic batching on CPU replicas",
        "Batch concurrent requests on the CPU replicas you have before buying more of them.",
        ("gateway", "batcher", "replicas"),
    ),
    3: Stage(
        3,
        "GPU + dynamic batching + autoscaling",
        "A heavy model at a high rate: batch onto GPUs and let an autoscaler follow the load.",
        ("gateway", "batcher", "replicas", "gpu_pool"),
    ),
    4: Stage(
        4,
        "GPU autoscaling fleet + registry + canary",
        "Batched GPU replicas scale with the load; a registry versions the models and canaries "
        "make each release reversible.",
        ("gateway", "batcher", "replicas", "gpu_pool", "registry"),
    ),
    5: Stage(
        5,
        "Multi-model packed fleet + canary rollout",
        "Many models share a packed GPU fleet; the gateway routes by model and splits canary "
        "traffic, and the registry says which version each name serves.",
        ("gateway", "replicas", "gpu_pool", "registry"),
    ),
}


# Stage 5 in queueing mode where the residency model finds dedicated replicas cheapest: the
# original page's shape says "packed", which the numbers beside it would contradict.
DEDICATED_STAGE_5 = Stage(
    5,
    "Multi-model fleet on dedicated replicas + canary rollout",
    "Many models, each on replicas of its own: here packing them onto shared GPUs costs more "
    "than it saves (see the packing decision). The gateway routes by model and splits canary "
    "traffic, and the registry says which version each name serves.",
    STAGES[5].path,
)

# Stage 5 where model-aware routing is the cheapest placement that meets the target.
ROUTED_STAGE_5 = Stage(
    5,
    "Multi-model fleet routed by model + canary rollout",
    "Many models share a GPU fleet, each on the replicas its traffic needs: the gateway sends "
    "each request to a replica that holds its model and splits canary traffic, and the registry "
    "says which version each name serves.",
    STAGES[5].path,
)


def needs_of(workload: Workload, latency: LatencyResult) -> Needs:
    """The need-flags: utilization and p99 from ``latency``, the rest from the inputs."""
    rate = workload.rate_rps
    models = workload.models_hosted
    replicas = workload.replicas
    tight_tail = workload.p99_target_ms <= TIGHT_TAIL_TARGET_MS
    needs_batching = (
        rate > BATCHING_RATE_RPS and not tight_tail
    ) or rate > BATCHING_ANY_TARGET_RATE_RPS
    needs_gpu = workload.model_latency_ms >= HEAVY_MODEL_LATENCY_MS and rate > HIGH_RATE_RPS
    models_per_slot = models / (replicas * MODELS_PER_REPLICA_HOT)
    return Needs(
        tight_tail=tight_tail,
        needs_batching=needs_batching,
        needs_gpu=needs_gpu,
        needs_autoscale=rate > HIGH_RATE_RPS or replicas > AUTOSCALE_REPLICAS,
        needs_registry=models > 1,
        needs_canary=models > CANARY_MODELS,
        needs_packing=(
            models > replicas or models_per_slot > PACKING_SLOT_SHARE or models > PACKING_MODELS
        ),
        over_capacity=latency.utilization > SAFE_UTILIZATION,
        tail_missed=latency.p99_ms > workload.p99_target_ms,
        models_per_slot=models_per_slot,
        packing_pressure=max(models_per_slot, models / PACKING_PRESSURE_MODELS),
        batching_in_architecture=workload.dynamic_batching or needs_batching,
        gpu_in_architecture=workload.gpu or needs_gpu,
    )


def recommend_stage(needs: Needs) -> Stage:
    """The shape of the first of the original page's rules that matches, tried in its order.

    Single endpoint when nothing is needed; else packing, then registry on GPUs, then GPUs, then
    batching on CPUs. A workload that needs only a registry or autoscaling (unbatched, on CPU)
    matches none of the original page's rules; it keeps the single endpoint.
    """
    if not (
        needs.batching_in_architecture
        or needs.gpu_in_architecture
        or needs.needs_registry
        or needs.needs_autoscale
    ):
        return STAGES[1]
    if needs.needs_packing:
        return STAGES[5]
    if needs.needs_registry and needs.gpu_in_architecture:
        return STAGES[4]
    if needs.gpu_in_architecture:
        return STAGES[3]
    if needs.batching_in_architecture:
        return STAGES[2]
    return STAGES[1]


def _first(*rules: tuple[bool, str], otherwise: str) -> str:
    """The state of the first rule whose condition holds, reading the rules in order."""
    return next((state for condition, state in rules if condition), otherwise)


def node_states_of(workload: Workload, latency: LatencyResult, needs: Needs) -> dict[str, str]:
    """State of each of the nine nodes, from the raw flags (not the architecture flags)."""
    if workload.dynamic_batching:
        batcher = "ok" if batch_active(workload) else "warning"
    else:
        batcher = "needed" if needs.needs_batching else "inactive"
    replicas = _first(
        (needs.over_capacity, "overloaded"),
        (latency.utilization > REPLICA_WARNING_UTILIZATION, "warning"),
        otherwise="ok",
    )
    gpu_pool = _first((workload.gpu, "ok"), (needs.needs_gpu, "needed"), otherwise="inactive")
    canary = "needed" if needs.needs_canary else "inactive"
    states = {
        "client": "ok",
        "gateway": "ok",
        "traffic_split": canary,
        "batcher": batcher,
        "replicas": replicas,
        "registry": "needed" if needs.needs_registry else "inactive",
        "gpu_pool": gpu_pool,
        "metrics": "warning" if needs.tail_missed else "ok",
        "shadow": canary,
    }
    return {node_id: states[node_id] for node_id in NODE_IDS}


def flow_states_of(needs: Needs) -> dict[tuple[str, str], str]:
    """State of each of the nine flows."""

    def active(condition: bool) -> str:
        return "active" if condition else "inactive"

    batched = needs.batching_in_architecture
    states = {
        ("client", "gateway"): "active",
        ("gateway", "traffic_split"): active(needs.needs_canary),
        ("gateway", "batcher"): active(batched),
        ("gateway", "replicas"): active(not batched),
        ("batcher", "replicas"): active(batched),
        ("replicas", "gpu_pool"): active(needs.gpu_in_architecture),
        ("replicas", "registry"): active(needs.needs_registry),
        ("traffic_split", "shadow"): active(needs.needs_canary),
        ("replicas", "metrics"): "warning" if needs.tail_missed else "active",
    }
    return {flow: states[flow] for flow in FLOWS}


def meter_status(ratio: float) -> MeterStatus:
    """ok below 0.9 of the limit, warning up to and at the limit (1.0), danger past it."""
    if ratio > 1.0:
        return "danger"
    return "warning" if ratio >= METER_WARNING_RATIO else "ok"


def _ms(value_ms: float) -> str:
    """A latency a person reads: whole ms from 100 up, one decimal below, ∞ when unstable."""
    if math.isinf(value_ms):
        return "unstable (∞)"
    return f"{value_ms:,.0f} ms" if value_ms >= 100 else f"{value_ms:.1f} ms"


def _unstable(latency: LatencyResult) -> bool:
    """True when the model says the queue grows without bound (never so in the teaching model)."""
    return math.isinf(latency.p99_ms)


def meters_of(workload: Workload, latency: LatencyResult, needs: Needs) -> tuple[Meter, ...]:
    """The five bottleneck meters in the original page's order."""
    capacity_ratio = latency.utilization / SAFE_UTILIZATION
    if _unstable(latency) or latency.utilization >= 1.0:
        capacity_text = f"unstable (∞): load is {latency.utilization:.0%} of capacity"
    else:
        capacity_text = f"{capacity_ratio:.0%} of safe capacity"

    tail_ratio = latency.p99_ms / max(1.0, workload.p99_target_ms)
    target = _ms(workload.p99_target_ms)
    if _unstable(latency):
        tail_text = f"unstable (∞) vs a {target} target"
    else:
        tail_text = f"{_ms(latency.p99_ms)} of a {target} target"

    active = batch_active(workload)
    if workload.gpu:
        gpu_ratio = GPU_BATCHED_RATIO if active else GPU_UNBATCHED_RATIO
        gpu_text = "GPU kept busy by batches" if active else "GPU idling on single requests"
    else:
        gpu_ratio = CPU_NEEDS_GPU_RATIO if needs.needs_gpu else CPU_ENOUGH_RATIO
        gpu_text = "CPU straining on a heavy model" if needs.needs_gpu else "CPU is enough"

    fleet_ratio = workload.replicas / FLEET_METER_REPLICAS
    hot_slots = workload.replicas * MODELS_PER_REPLICA_HOT
    return (
        Meter(
            "capacity",
            "Serving capacity",
            capacity_ratio,
            meter_status(capacity_ratio),
            capacity_text,
            f"Offered load over the fleet's capacity, against a safe line of "
            f"{SAFE_UTILIZATION:.0%} busy: past it, bursts queue and the tail grows fast.",
        ),
        Meter(
            "tail_latency",
            "p99 latency budget",
            tail_ratio,
            meter_status(tail_ratio),
            tail_text,
            "The 99th-percentile latency, queueing included, as a share of the target.",
        ),
        Meter(
            "gpu_efficiency",
            "Accelerator efficiency",
            gpu_ratio,
            meter_status(gpu_ratio),
            gpu_text,
            "A teaching score: a GPU pays off only while batches keep it busy, and a heavy "
            "model at high rate strains CPUs.",
        ),
        Meter(
            "fleet_size",
            "Replica fleet pressure",
            fleet_ratio,
            meter_status(fleet_ratio),
            f"{workload.replicas:,} of {FLEET_METER_REPLICAS:,.0f} replicas",
            "How large the fleet is against a hundred replicas, where hand-managing it stops "
            "being sensible.",
        ),
        Meter(
            "multi_model",
            "Multi-model packing",
            needs.packing_pressure,
            meter_status(needs.packing_pressure),
            _packing_text(workload, needs, hot_slots),
            f"Models against what the replicas can keep loaded ({MODELS_PER_REPLICA_HOT} each), "
            f"or against {PACKING_PRESSURE_MODELS:.0f} models, whichever is tighter.",
        ),
    )


def _packing_text(workload: Workload, needs: Needs, hot_slots: int) -> str:
    """The packing meter's number: whichever limit binds, slots or the model-count line."""
    models = count(workload.models_hosted, "model")
    if needs.models_per_slot >= workload.models_hosted / PACKING_PRESSURE_MODELS:
        return f"{models} on {hot_slots:,} hot-load slots"
    return f"{models} against a line of {PACKING_PRESSURE_MODELS:.0f} for one fleet"


# Decision prose: one line per (decision, state) the rules can reach.
DECISION_LABELS: dict[str, str] = {
    "batching": "Dynamic batching",
    "hardware": "Hardware + autoscaling",
    "registry": "Model registry",
    "rollout": "A/B + canary rollout",
    "packing": "Multi-model packing",
    "latency_tradeoff": "p99 vs throughput",
}
DECISION_TEXT: dict[tuple[str, str], str] = {
    ("batching", "needed"): "Batch concurrent requests: one call serves several, multiplying "
    "throughput per replica.",
    ("batching", "tradeoff"): "Batching is on but the window is 0 ms, so nothing is gained; give "
    "it a few ms or turn it off.",
    ("batching", "not-yet"): "Requests are too sparse to fill batches; a window would only add "
    "delay.",
    ("hardware", "needed"): "Run on GPU replicas behind an autoscaler: the model is heavy and the "
    "rate high.",
    ("hardware", "useful"): "CPU replicas still suffice, but let an autoscaler size the fleet.",
    ("hardware", "not-yet"): "A fixed CPU replica or two carries this load.",
    ("registry", "needed"): "Several models or versions: keep artifacts versioned and map names "
    "to versions in a registry.",
    ("registry", "not-yet"): "One model: a registry would only add a moving part.",
    ("rollout", "needed"): "Split traffic: canary or A/B the candidate and shadow it before "
    "promoting.",
    ("rollout", "useful"): "Two versions live: a traffic split lets you compare them safely.",
    ("rollout", "not-yet"): "Nothing to compare yet; deploy in place.",
    ("packing", "needed"): "More models than replicas can hot-load: pack several per replica "
    "and route by model.",
    ("packing", "useful"): "A few models fit on the replicas you have; watch the count.",
    ("packing", "not-yet"): "One model per fleet; nothing to pack.",
    ("latency_tradeoff", "tradeoff"): "The target is tight: every ms of batch window or queueing "
    "is taken from it.",
    ("latency_tradeoff", "needed"): "The p99 misses the target: trade throughput for latency "
    "(shorter window, more headroom).",
    ("latency_tradeoff", "useful"): "The target has room: some of it can buy throughput.",
}


def decisions_of(workload: Workload, latency: LatencyResult, needs: Needs) -> tuple[Decision, ...]:
    """The six decisions in the original page's order, with the original page's state rules."""
    if workload.dynamic_batching:
        batching = "needed" if batch_active(workload) else "tradeoff"
    else:
        batching = "needed" if needs.needs_batching else "not-yet"
    states = {
        "batching": batching,
        "hardware": _first(
            (needs.gpu_in_architecture, "needed"),
            (needs.needs_autoscale, "useful"),
            otherwise="not-yet",
        ),
        "registry": "needed" if needs.needs_registry else "not-yet",
        "rollout": _first(
            (needs.needs_canary, "needed"),
            (needs.needs_registry, "useful"),
            otherwise="not-yet",
        ),
        "packing": _first(
            (needs.needs_packing, "needed"),
            (workload.models_hosted > 1, "useful"),
            otherwise="not-yet",
        ),
        "latency_tradeoff": _first(
            (needs.tight_tail, "tradeoff"),
            (needs.tail_missed, "needed"),
            otherwise="useful",
        ),
    }
    return tuple(
        Decision(
            decision_id, DECISION_LABELS[decision_id], state, DECISION_TEXT[(decision_id, state)]
        )
        for decision_id, state in states.items()
    )


def reasons_of(workload: Workload, latency: LatencyResult, needs: Needs) -> tuple[Reason, ...]:
    """'Why this changes': 4 to 7 lines in the original page's order."""
    reasons: list[Reason] = []
    utilization = latency.utilization
    if utilization > 1.0 or _unstable(latency):
        reasons.append(
            Reason(
                "capacity",
                "danger",
                f"The load is {utilization:.0%} of capacity: the queue grows without bound. Add "
                "replicas, batch, or move to GPUs.",
            )
        )
    elif needs.over_capacity:
        reasons.append(
            Reason(
                "capacity",
                "warning",
                f"The load is {utilization:.0%} of capacity, past the {SAFE_UTILIZATION:.0%} safe "
                "line: bursts will queue.",
            )
        )
    else:
        reasons.append(
            Reason(
                "capacity",
                "ok",
                f"The load is {utilization:.0%} of capacity, "
                f"within the {SAFE_UTILIZATION:.0%} safe line.",
            )
        )

    target = _ms(workload.p99_target_ms)
    if _unstable(latency):
        reasons.append(
            Reason(
                "tail_latency",
                "danger",
                f"p99 is unbounded (∞): no tail meets the {target} target.",
            )
        )
    elif needs.tail_missed:
        reasons.append(
            Reason(
                "tail_latency",
                "danger",
                f"p99 of {_ms(latency.p99_ms)} misses the {target} target.",
            )
        )
    else:
        reasons.append(
            Reason("tail_latency", "ok", f"p99 of {_ms(latency.p99_ms)} fits the {target} target.")
        )

    if workload.dynamic_batching:
        if batch_active(workload):
            reasons.append(
                Reason(
                    "batching",
                    "ok",
                    f"Batching with a {_ms(workload.batch_window_ms)} window lets one call serve "
                    "several requests.",
                )
            )
        else:
            reasons.append(
                Reason(
                    "batching",
                    "warning",
                    "Batching is on but the window is 0 ms, so no batch ever forms.",
                )
            )
    elif needs.needs_batching:
        reasons.append(
            Reason(
                "batching",
                "warning",
                f"At {workload.rate_rps:,.0f} req/s batching would multiply each replica's "
                "throughput cheaply.",
            )
        )

    if workload.gpu:
        if batch_active(workload):
            reasons.append(
                Reason("hardware", "ok", "The GPU earns its keep: batches keep it busy.")
            )
        else:
            reasons.append(
                Reason(
                    "hardware",
                    "warning",
                    "A GPU without active batching idles between single requests: money wasted.",
                )
            )
    elif needs.needs_gpu:
        reasons.append(
            Reason(
                "hardware",
                "warning",
                f"A {_ms(workload.model_latency_ms)} model at {workload.rate_rps:,.0f} req/s "
                "belongs on batched GPUs.",
            )
        )

    if needs.needs_canary:
        reasons.append(
            Reason(
                "rollout",
                "ok",
                f"{workload.models_hosted:,} models or versions: a registry and a canary split "
                "keep releases reversible.",
            )
        )
    if needs.needs_packing:
        reasons.append(
            Reason(
                "packing",
                "warning",
                f"{workload.models_hosted:,} models on {count(workload.replicas, 'replica')} "
                f"({workload.models_hosted / workload.replicas:.1f} per replica): pack several "
                "per replica and route by model.",
            )
        )

    if workload.replicas > 1:
        if needs.needs_autoscale:
            reasons.append(
                Reason(
                    "fleet",
                    "warning",
                    f"{workload.replicas:,} replicas at this load: "
                    "let an autoscaler size the fleet.",
                )
            )
        else:
            reasons.append(
                Reason(
                    "fleet",
                    "ok",
                    f"{workload.replicas:,} replicas share the load; a fixed fleet is fine.",
                )
            )
    else:
        reasons.append(Reason("fleet", "ok", "One replica: nothing to orchestrate yet."))

    if len(reasons) < MAX_REASONS:
        reasons.append(_headroom_reason(workload, latency, needs))
    return tuple(reasons)


def _headroom_reason(workload: Workload, latency: LatencyResult, needs: Needs) -> Reason:
    status: ReasonStatus = "warning" if needs.tight_tail else "ok"
    if needs.tight_tail:
        text = (
            f"A {_ms(workload.p99_target_ms)} target leaves little room for a batch window "
            "or queueing: keep utilization low."
        )
    elif needs.tail_missed:
        text = "No headroom under the target: the p99 is already past it."
    else:
        text = f"{_ms(workload.p99_target_ms - latency.p99_ms)} of headroom under the target."
    return Reason("headroom", status, text)


def assess(
    workload: Workload, latency: LatencyResult, alternatives: Alternatives | None = None
) -> Design:
    """Apply the design rules to one workload and its latency result.

    Without ``alternatives`` (the teaching model) the rules are the original page's. With them
    (the queueing model) the batching and hardware decisions, their reasons and the accelerator
    meter come from the model's numbers (``_queueing_decisions``), and the capacity meter names
    utilization once. Either way nothing reads "ok" (a tick) while the p99 misses the target or
    the load is past the safe line (``_no_ok_beside_a_failure``).
    """
    needs = needs_of(workload, latency)
    meters = meters_of(workload, latency, needs)
    decisions = decisions_of(workload, latency, needs)
    reasons = reasons_of(workload, latency, needs)
    if alternatives is not None:
        meters, decisions, reasons = _queueing_decisions(
            workload, latency, alternatives, meters, decisions, reasons
        )
        if alternatives.packing is not None:
            meters, decisions, reasons = _packing_decision(
                workload, alternatives.packing, meters, decisions, reasons
            )
        needs = _architecture_from_decisions(workload, needs, decisions, alternatives)
    if needs.tail_missed or needs.over_capacity:
        meters, reasons = _no_ok_beside_a_failure(meters, reasons)
    stage = recommend_stage(needs)
    packing = alternatives.packing if alternatives is not None else None
    if stage.number == 5 and packing is not None and packing.recommended == "dedicated":
        stage = DEDICATED_STAGE_5
    elif stage.number == 5 and packing is not None and packing.recommended == "model_aware":
        stage = ROUTED_STAGE_5
    return Design(
        needs=needs,
        stage=stage,
        node_states=node_states_of(workload, latency, needs),
        flow_states=flow_states_of(needs),
        meters=meters,
        decisions=decisions,
        reasons=reasons,
    )


def _architecture_from_decisions(
    workload: Workload, needs: Needs, decisions, alternatives: Alternatives
) -> Needs:
    """In queueing mode the recommended shape follows the decisions the model's numbers made: a
    batcher only where batching is needed or useful, GPUs where the hardware decision keeps or
    moves to them (the seed's thresholds would otherwise draw a batcher the decisions reject)."""
    batching = next(d.state for d in decisions if d.id == "batching") in ("needed", "useful")
    return replace(
        needs,
        batching_in_architecture=batching,
        gpu_in_architecture=workload.gpu != _other_hardware_cheaper(alternatives),
    )


def _other_hardware_cheaper(alternatives: Alternatives) -> bool:
    """Whether the other kind of replica meets the target for less than this one."""
    now = _fleet_cost(alternatives.replicas_now, alternatives.usd_per_replica_hour)
    other = _fleet_cost(
        alternatives.replicas_other_hardware, alternatives.other_usd_per_replica_hour
    )
    return other < now


def _no_ok_beside_a_failure(meters, reasons):
    """While the target is missed or the load is past the safe line, no tick anywhere: what
    would read "ok" reads as neutral (its own number passes, the design does not)."""
    meters = tuple(
        replace(meter, status="neutral") if meter.status == "ok" else meter for meter in meters
    )
    reasons = tuple(
        replace(reason, status="neutral") if reason.status == "ok" else reason for reason in reasons
    )
    return meters, reasons


def _replicas_text(replicas: int | None) -> str:
    return "no count up to 500" if replicas is None else count(replicas, "replica")


def _meet(count: int | None) -> str:
    """'1 replica meets' / '3 replicas meet' / 'no count up to 500 meets'."""
    return _replicas_text(count) + (" meets" if count is None or count == 1 else " meet")


def _queueing_decisions(workload, latency, alternatives, meters, decisions, reasons):
    """Batching and hardware decided by the queueing model's numbers, not by thresholds."""
    target = workload.p99_target_ms
    meets_now = math.isfinite(latency.p99_ms) and latency.p99_ms <= target
    other_p99 = alternatives.batching_toggled_p99_ms
    other_meets = math.isfinite(other_p99) and other_p99 <= target
    now_n, toggled_n = alternatives.replicas_now, alternatives.replicas_batching_toggled
    on = workload.dynamic_batching
    without = "without" if on else "with"
    if on and not meets_now and other_meets:
        state, status = "tradeoff", "danger"
        text = (
            f"Batching is why the p99 misses: {_ms(latency.p99_ms)} with it, {_ms(other_p99)} "
            f"without, against the {_ms(target)} target. Turn it off or shorten the window."
        )
    elif not on and not meets_now and other_meets:
        state, status = "needed", "danger"
        text = (
            f"Turn batching on: the p99 would be {_ms(other_p99)} instead of "
            f"{_ms(latency.p99_ms)}, within the {_ms(target)} target."
        )
    elif on and meets_now and not other_meets:
        state, status = "needed", "ok"
        text = (
            f"Needed: without batching the p99 would be {_ms(other_p99)}, past the "
            f"{_ms(target)} target."
        )
    else:
        batched_n, plain_n = (now_n, toggled_n) if on else (toggled_n, now_n)
        if batched_n is not None and (plain_n is None or batched_n < plain_n):
            state = "useful" if on else "needed"
            status = "ok" if on else "warning"
            text = (
                f"Batching meets the target with {_replicas_text(batched_n)}, "
                f"{_replicas_text(plain_n)} without it."
            )
        else:
            state = "not-yet"
            status = "warning" if on else "ok"
            text = (
                f"Batching does not pay here: {_meet(plain_n)} the target "
                f"without it, {_replicas_text(batched_n)} with it "
                f"(p99 {_ms(other_p99)} {without} batching now)."
            )
    decisions = tuple(
        replace(d, state=state, text=text) if d.id == "batching" else d for d in decisions
    )

    now_cost = _fleet_cost(now_n, alternatives.usd_per_replica_hour)
    other_cost = _fleet_cost(
        alternatives.replicas_other_hardware, alternatives.other_usd_per_replica_hour
    )
    kind, other_kind = ("GPU", "CPU") if workload.gpu else ("CPU", "GPU")
    hardware_text = (
        f"Cheapest fleet meeting the target: {kind} {_money(now_cost, now_n)}, "
        f"{other_kind} {_money(other_cost, alternatives.replicas_other_hardware)}."
    )
    if _other_hardware_cheaper(alternatives):
        hardware_state, hardware_status = "needed", "warning"
        hardware_text += f" Move to {other_kind} replicas."
    else:
        hardware_state = "useful" if math.isfinite(now_cost) else "needed"
        hardware_status = "ok" if math.isfinite(now_cost) else "danger"
    decisions = tuple(
        replace(d, state=hardware_state, text=hardware_text) if d.id == "hardware" else d
        for d in decisions
    )
    meters = tuple(
        replace(
            m,
            value_text=_utilization_text(latency, alternatives.slot_utilization),
            explanation=f"How busy the replicas are; past the {SAFE_UTILIZATION:.0%} safe line "
            "bursts queue and the tail grows fast. The bar is utilization over that line.",
        )
        if m.id == "capacity"
        else m
        for m in meters
    )
    busy = _slots_busy_text(latency, alternatives.slot_utilization)
    reasons = tuple(
        replace(r, text=f"{r.text} {busy}")
        if r.id == "capacity" and busy
        else Reason("batching", status, text)
        if r.id == "batching"
        else Reason("hardware", hardware_status, hardware_text)
        if r.id == "hardware"
        else r
        for r in reasons
    )
    ids = {r.id for r in reasons}
    extra = []
    if "batching" not in ids:
        extra.append(Reason("batching", status, text))
    if "hardware" not in ids:
        extra.append(Reason("hardware", hardware_status, hardware_text))
    if extra:
        reasons = (reasons[0], reasons[1], *extra, *reasons[2:])[:MAX_REASONS]
    return meters, decisions, reasons


def _dedicated_cost_text(usd_per_hour: float) -> str:
    if not math.isfinite(usd_per_hour):
        return "dedicated replicas, which cannot meet it up to 500 replicas"
    return f"${usd_per_hour:,.2f}/h dedicated"


def packing_note(packing: PackingNumbers, models_hosted: int) -> str:
    """The residency numbers the packing decision uses, short enough for the GPU pool's node:
    how many models fit on a replica and how often a packed LRU replica finds its model, or,
    where routing by model is the placement that meets the target, how many replicas it takes."""
    fit = f"{packing.models_fit_per_replica} of {models_hosted:,} model{_s(models_hosted)} fit"
    if packing.recommended == "model_aware" and packing.recommended_replicas is not None:
        replicas = count(packing.recommended_replicas, "replica")
        return f"{fit} · routed by model on {replicas}, no loads"
    if math.isinf(packing.packed_p99_ms):
        return f"{fit} · LRU thrashes (∞)"
    return f"{fit} · LRU hit {packing.packed_hit_ratio:.0%}"


def _s(count: int) -> str:
    """The plural ending for ``count`` things ("1 model", "2 models")."""
    return "" if count == 1 else "s"


def _packing_decision(workload, packing: PackingNumbers, meters, decisions, reasons):
    """The packing decision, its reason and meter text from the residency model's numbers."""
    models = workload.models_hosted
    fit = f"{packing.models_fit_per_replica} of {models:,} model{_s(models)} fit in a GPU's " + (
        f"{packing.accelerator_memory_gb:g} GB"
    )
    if math.isinf(packing.packed_p99_ms):
        packed = "a packed LRU fleet thrashes: loads alone overrun its slots (unstable (∞))"
    else:
        packed = (
            f"a packed LRU fleet hits {packing.packed_hit_ratio:.0%} of the time and its p99 is "
            f"{_ms(packing.packed_p99_ms)} ({packing.packed_load_wait_share:.1%} of requests "
            "wait for a load)"
        )
    if packing.recommended is None:
        state, status = "needed", "danger"
        text = f"{fit}; {packed}, and no placement meets the target up to 500 replicas."
    elif packing.recommended == "dedicated":
        state, status = "tradeoff", "warning"
        text = (
            f"Packing costs more than it saves here: {fit}, so {packed}. Dedicated replicas per "
            f"model meet the target for ${packing.recommended_usd_per_hour:,.2f}/h "
            f"({_replicas_text(packing.recommended_replicas)})."
        )
    else:
        state, status = "needed", "ok"
        text = (
            f"{packing.recommended_label} meets the target for "
            f"${packing.recommended_usd_per_hour:,.2f}/h "
            f"({_replicas_text(packing.recommended_replicas)}), against "
            f"{_dedicated_cost_text(packing.dedicated_usd_per_hour)}; {fit}."
        )
        if packing.recommended == "model_aware":
            text += f" Sending every model to every replica instead, {packed}."
    if math.isfinite(packing.usd_per_replica_hour):
        text += (
            f" Priced at ${packing.usd_per_replica_hour:,.2f} a replica-hour, the hardware "
            f"catalog's {packing.accelerator} price."
        )
    decisions = tuple(
        replace(d, state=state, text=text) if d.id == "packing" else d for d in decisions
    )
    reasons = tuple(Reason("packing", status, text) if r.id == "packing" else r for r in reasons)
    # The meter then reads the memory count its text gives, not the rule of thumb's slots.
    fits = packing.models_fit_per_replica
    ratio = models / fits if fits > 0 else math.inf
    meters = tuple(
        replace(
            m,
            ratio=ratio,
            status=meter_status(ratio),
            value_text=f"{fit} per replica",
            explanation="Models against how many one replica's GPU memory keeps loaded at once.",
        )
        if m.id == "multi_model"
        else m
        for m in meters
    )
    return meters, decisions, reasons


def _utilization_text(latency: LatencyResult, slot_utilization: float = math.nan) -> str:
    if _unstable(latency) or latency.utilization >= 1.0:
        return f"unstable (∞): load {latency.utilization:.0%} of capacity"
    text = f"load {latency.utilization:.0%} of capacity (safe line {SAFE_UTILIZATION:.0%})"
    busy = _slots_busy_text(latency, slot_utilization)
    return f"{text}; {busy[0].lower()}{busy[1:-1]}" if busy else text


def _slots_busy_text(latency: LatencyResult, slot_utilization: float) -> str:
    """With batching, how busy the slots are at the batches that form (capacity counts full
    batches, so the two differ); empty where they are the same number."""
    if _unstable(latency) or not math.isfinite(slot_utilization) or latency.mean_batch_size <= 1:
        return ""
    return (
        f"Slots are {slot_utilization:.0%} busy at the batches that form "
        f"(≈{latency.mean_batch_size:.1f} requests; capacity counts full batches)."
    )


def _fleet_cost(replicas: int | None, usd_per_replica_hour: float) -> float:
    return math.inf if replicas is None else replicas * usd_per_replica_hour


def _money(usd_per_hour: float, replicas: int | None) -> str:
    if replicas is None or not math.isfinite(usd_per_hour):
        return "cannot meet it up to 500 replicas"
    return f"${usd_per_hour:,.2f}/h ({count(replicas, 'replica')})"
