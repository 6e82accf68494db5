"""Invariants of the design rules over any valid workload and any latency result, stable or not."""

from __future__ import annotations

import math
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import WORKLOADS as workloads
from tree import leaves

from sdlab_model import SCENARIOS, Workload, evaluate, teaching
from sdlab_model.architecture import FLOW_STATES, FLOWS, NODE_IDS, NODE_STATES
from sdlab_model.design import (
    DECISION_STATES,
    DEDICATED_STAGE_5,
    METER_STATUSES,
    REASON_STATUSES,
    ROUTED_STAGE_5,
    STAGES,
    Design,
    assess,
    meter_status,
)
from sdlab_model.latency import LatencyResult
from sdlab_model.residency import ResidencyInputs

METER_IDS = ("capacity", "tail_latency", "gpu_efficiency", "fleet_size", "multi_model")
DECISION_IDS = ("batching", "hardware", "registry", "rollout", "packing", "latency_tradeoff")
# A number a person should never read: NaN, or a bare "inf" where "unstable (∞)" belongs.
UNREADABLE = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def any_latency(draw, workload: Workload) -> LatencyResult:
    """A latency result as any model could return it, including an unstable queue."""
    utilization = draw(st.floats(0.0, 50.0, allow_nan=False))
    unstable = utilization >= 1.0 and draw(st.booleans())
    p99 = math.inf if unstable else draw(st.floats(0.01, 1e6, allow_nan=False))
    return LatencyResult(
        p50_ms=None if unstable else p99 / 2,
        p95_ms=None if unstable else p99 * 0.9,
        p99_ms=p99,
        compute_ms=workload.model_latency_ms,
        batch_wait_ms=0.0,
        queue_ms=math.inf if unstable else max(0.0, p99 - workload.model_latency_ms),
        capacity_rps=workload.rate_rps / max(utilization, 1e-9),
        utilization=utilization,
        is_stable=not unstable,
        mean_batch_size=1.0,
        accuracy="approximate",
        accuracy_note="synthetic",
    )


@st.composite
def workload_and_latency(draw) -> tuple[Workload, LatencyResult]:
    workload = draw(workloads)
    if draw(st.booleans()):
        return workload, teaching.latency(workload)
    return workload, draw(any_latency(workload))


@SETTINGS
@given(workload_and_latency())
def test_shapes_and_states_are_always_within_the_allowed_sets(pair):
    workload, latency = pair
    design: Design = assess(workload, latency)
    assert 4 <= len(design.reasons) <= 7, f"{len(design.reasons)} reasons for {workload}"
    reason_ids = [reason.id for reason in design.reasons]
    assert len(set(reason_ids)) == len(reason_ids), f"repeated reasons {reason_ids}"
    assert all(reason.status in REASON_STATUSES for reason in design.reasons), design.reasons
    assert tuple(meter.id for meter in design.meters) == METER_IDS, design.meters
    assert all(meter.status in METER_STATUSES for meter in design.meters), design.meters
    failing = design.needs.tail_missed or design.needs.over_capacity

    def shown(ratio: float) -> str:
        # While the design fails, what its ratio alone would call "ok" reads as neutral.
        status = meter_status(ratio)
        return "neutral" if failing and status == "ok" else status

    assert all(meter.status == shown(meter.ratio) for meter in design.meters), (
        f"a meter status disagrees with its ratio: {design.meters}"
    )
    if failing:
        ticks = [m.id for m in design.meters if m.status == "ok"]
        ticks += [r.id for r in design.reasons if r.status == "ok"]
        assert not ticks, f"an 'ok' mark beside a missed target or an overload: {ticks}"
    assert tuple(decision.id for decision in design.decisions) == DECISION_IDS, design.decisions
    assert all(decision.state in DECISION_STATES for decision in design.decisions), design.decisions
    assert tuple(design.node_states) == NODE_IDS, f"node keys {tuple(design.node_states)}"
    assert set(design.node_states.values()) <= set(NODE_STATES), design.node_states
    assert tuple(design.flow_states) == FLOWS, f"flow keys {tuple(design.flow_states)}"
    assert set(design.flow_states.values()) <= set(FLOW_STATES), design.flow_states
    assert design.stage.number in STAGES, f"stage {design.stage.number}"
    assert design.stage == STAGES[design.stage.number], f"stage {design.stage} is not a known one"
    assert set(design.stage.path) <= set(NODE_IDS), f"path {design.stage.path}"


@SETTINGS
@given(workload_and_latency())
def test_no_nan_and_no_unreadable_numbers_anywhere(pair):
    workload, latency = pair
    for where, leaf in leaves(assess(workload, latency), "design"):
        if isinstance(leaf, float):
            assert not math.isnan(leaf), f"{where} is NaN for {workload} / {latency}"
            if math.isinf(leaf):
                assert where.endswith("ratio") and math.isinf(latency.p99_ms), (
                    f"{where} is infinite though p99 is {latency.p99_ms}"
                )
        elif isinstance(leaf, str):
            assert leaf.strip(), f"{where} is empty"
            assert not UNREADABLE.search(leaf), f"{where} reads {leaf!r}"


@SETTINGS
@given(workloads, st.floats(1.0, 50.0))
def test_an_unstable_queue_reads_unstable_and_is_flagged(workload, utilization):
    latency = LatencyResult(
        None,
        None,
        math.inf,
        workload.model_latency_ms,
        0.0,
        math.inf,
        workload.rate_rps / utilization,
        utilization,
        False,
        1.0,
        "approximate",
        "synthetic",
    )
    design = assess(workload, latency)
    meters = {meter.id: meter for meter in design.meters}
    assert "unstable (∞)" in meters["tail_latency"].value_text, meters["tail_latency"]
    assert "unstable (∞)" in meters["capacity"].value_text, meters["capacity"]
    assert meters["tail_latency"].status == "danger", meters["tail_latency"]
    reasons = {reason.id: reason.status for reason in design.reasons}
    assert reasons["capacity"] == "danger" and reasons["tail_latency"] == "danger", reasons
    assert design.node_states["replicas"] == "overloaded", design.node_states
    assert design.node_states["metrics"] == "warning", design.node_states
    assert design.needs.tail_missed and design.needs.over_capacity, design.needs


@SETTINGS
@given(workloads)
def test_the_flags_read_the_latency_result_not_the_teaching_formulas(workload):
    # The same workload under a result that says "busy and late" must be flagged so, whatever the
    # teaching model would have said: the queueing model's own capacity and p99 drive the rules.
    late = LatencyResult(
        None,
        None,
        workload.p99_target_ms * 2,
        workload.model_latency_ms,
        0.0,
        0.0,
        workload.rate_rps / 0.9,
        0.9,
        True,
        1.0,
        "approximate",
        "synthetic",
    )
    design = assess(workload, late)
    assert design.needs.over_capacity and design.needs.tail_missed, design.needs
    assert design.node_states["replicas"] == "overloaded", design.node_states
    assert design.flow_states[("replicas", "metrics")] == "warning", design.flow_states
    assert math.isclose(design.meters[0].ratio, 0.9 / 0.75), design.meters[0]
    assert math.isclose(
        design.meters[1].ratio, 2 * workload.p99_target_ms / max(1.0, workload.p99_target_ms)
    ), design.meters[1]


def test_meter_status_lines():
    # ok below 0.9, warning from 0.9 up to and at the limit, danger only past it; inf is danger.
    cases = {
        0.0: "ok",
        0.85: "ok",
        0.9: "warning",
        1.0: "warning",
        1.0001: "danger",
        math.inf: "danger",
    }
    for ratio, status in cases.items():
        assert meter_status(ratio) == status, f"ratio {ratio}: {meter_status(ratio)}"


def test_the_packing_meter_reads_the_memory_count_its_text_gives():
    # 12 models on 2 GPU replicas, 10 of them fit in a replica's memory: the bar is 12 / 10,
    # not the rule of thumb's 12 models on 2 x 4 hot-load slots (1.5) beside "10 of 12 fit".
    design = Workload(gpu=True, models_hosted=12, rate_rps=2_000.0)
    result = evaluate(design, "queueing")
    packing = result.packing
    assert packing is not None and 0 < packing.models_fit_per_replica < 12, packing
    meter = next(m for m in result.meters if m.id == "multi_model")
    ratio = 12 / packing.models_fit_per_replica
    assert math.isclose(meter.ratio, ratio) and meter.status == meter_status(ratio), meter
    assert f"{packing.models_fit_per_replica} of 12 models fit" in meter.value_text, meter
    assert "memory" in meter.explanation and "each)" not in meter.explanation, meter
    without = evaluate(design.with_changes(gpu=False), "queueing")
    assert without.packing is None
    cpu_meter = next(m for m in without.meters if m.id == "multi_model")
    assert math.isclose(cpu_meter.ratio, 12 / (2 * 4)), "off GPUs the rule of thumb stays"


def test_stage_5_names_the_placement_the_packing_numbers_pick():
    # Card 5 in queueing mode: model-aware routing is the cheapest placement that meets the
    # target, so the shape says so; with 12 GB models (one a GPU) dedicated replicas win.
    card = next(c for c in SCENARIOS if c.id == "multi-model-scale")
    queueing = evaluate(card.workload(), "queueing")
    assert queueing.packing is not None and queueing.packing.recommended == "model_aware", (
        f"card 5's packing numbers favour model-aware routing: {queueing.packing}"
    )
    assert queueing.stage == ROUTED_STAGE_5, (
        f"stage {queueing.stage.title!r} contradicts the packing decision beside it"
    )
    big = evaluate(card.workload(), "queueing", ResidencyInputs(model_size_gb=12))
    assert big.packing is not None and big.packing.recommended == "dedicated", big.packing
    assert big.stage == DEDICATED_STAGE_5 and "packed" not in big.stage.title.lower(), (
        f"stage {big.stage.title!r} contradicts the packing decision beside it"
    )
    teaching = evaluate(card.workload(), "teaching")
    assert teaching.stage.title == "Multi-model packed fleet + canary rollout", (
        "the teaching model keeps the seed page's shape"
    )
    # Where packing is the cheaper placement the seed's packed shape stays.
    card_4 = next(c for c in SCENARIOS if c.id == "registry-canary")
    packed = evaluate(card_4.workload().with_changes(replicas=1), "queueing")
    assert packed.stage.number == 5 and packed.packing is not None, "chosen to land on stage 5"
    assert packed.packing.recommended == "packed_lru", f"chosen to pack: {packed.packing}"
    assert packed.stage.title == "Multi-model packed fleet + canary rollout", packed.stage.title
