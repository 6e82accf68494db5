"""Teaching mode reproduces the original page: the five cards and every threshold of its rules.

Every expected value here was derived by hand from docs/teaching_model.md (the arithmetic is in
the comments), not by running the code. The card table's capacity, utilization and p99 are the
page's own outputs, quoted in that file.
"""

from __future__ import annotations

import math

import pytest

from sdlab_model import Workload, evaluate, teaching
from sdlab_model.design import Design, assess
from sdlab_model.scenarios import SCENARIO_BY_ID

# Shorthands for the expected state tables (node and flow order as in the spec).
NODE_ORDER = (
    "client",
    "gateway",
    "traffic_split",
    "batcher",
    "replicas",
    "registry",
    "gpu_pool",
    "metrics",
    "shadow",
)
FLOW_ORDER = (
    ("client", "gateway"),
    ("gateway", "traffic_split"),
    ("gateway", "batcher"),
    ("gateway", "replicas"),
    ("batcher", "replicas"),
    ("replicas", "gpu_pool"),
    ("replicas", "registry"),
    ("traffic_split", "shadow"),
    ("replicas", "metrics"),
)
METER_ORDER = ("capacity", "tail_latency", "gpu_efficiency", "fleet_size", "multi_model")
DECISION_ORDER = ("batching", "hardware", "registry", "rollout", "packing", "latency_tradeoff")

# Golden values per card, hand-derived from the spec (L latency, W window, R replicas, M models).
CARDS = {
    # 50 req/s, L=15, W=0, R=1, M=1, T=200, no batching, CPU.
    # capacity 1000*15/15 = 1000; u = 0.05; queue = 15*0.05/0.95 = 0.78947; p99 = 15.78947.
    # No flag is raised: stage 1. Meters: 0.05/0.75, 15.78947/200, CPU enough 0.3, 1/100,
    # packing max(1/4, 1/60) = 0.25.
    "single-endpoint": {
        "title": "Single model endpoint",
        "stage": 1,
        "capacity_rps": 1_000.0,
        "utilization": 0.05,
        "p99_ms": 15.7894737,
        "nodes": (
            "ok",
            "ok",
            "inactive",
            "inactive",
            "ok",
            "inactive",
            "inactive",
            "ok",
            "inactive",
        ),
        "flows": (
            "active",
            "inactive",
            "inactive",
            "active",
            "inactive",
            "inactive",
            "inactive",
            "inactive",
            "active",
        ),
        "meters": (0.0666667, 0.0789474, 0.3, 0.01, 0.25),
        "meter_statuses": ("ok", "ok", "ok", "ok", "ok"),
        "decisions": ("not-yet", "not-yet", "not-yet", "not-yet", "not-yet", "useful"),
        "reasons": (
            ("capacity", "ok"),
            ("tail_latency", "ok"),
            ("fleet", "ok"),
            ("headroom", "ok"),
        ),
    },
    # 3000 req/s, L=20, W=10, R=4, M=1, T=150, batching, CPU.
    # multiplier min(6, 1+10*20/200) = 2; per replica 750*2 = 1500; capacity 6000; u = 0.5;
    # queue = 20*0.5/0.5/sqrt(4) = 10; p99 = 20+10+10 = 40. needs_batching (3000 > 1000, T > 60)
    # and nothing else: stage 2. Packing max(1/16, 1/60) = 0.0625.
    "batching": {
        "title": "Dynamic batching on CPU replicas",
        "stage": 2,
        "capacity_rps": 6_000.0,
        "utilization": 0.5,
        "p99_ms": 40.0,
        "nodes": ("ok", "ok", "inactive", "ok", "ok", "inactive", "inactive", "ok", "inactive"),
        "flows": (
            "active",
            "inactive",
            "active",
            "inactive",
            "active",
            "inactive",
            "inactive",
            "inactive",
            "active",
        ),
        "meters": (0.6666667, 0.2666667, 0.3, 0.04, 0.0625),
        "meter_statuses": ("ok", "ok", "ok", "ok", "ok"),
        "decisions": ("needed", "not-yet", "not-yet", "not-yet", "not-yet", "useful"),
        "reasons": (
            ("capacity", "ok"),
            ("tail_latency", "ok"),
            ("batching", "ok"),
            ("fleet", "ok"),
            ("headroom", "ok"),
        ),
    },
    # 25000 req/s, L=60, W=15, R=5, M=1, T=130, batching, GPU.
    # multiplier min(6, 1+15*60/200) = 5.5; per replica 250*8*5.5 = 11000; capacity 55000;
    # u = 5/11; queue = 60*(5/11)/(6/11)/sqrt(5) = 50/sqrt(5) = 22.36068; p99 = 97.36068.
    # needs_gpu (60 >= 40, 25000 > 5000), autoscale, batching; M=1: stage 3.
    # Meters: (5/11)/0.75 = 20/33, 97.36068/130, GPU batched 0.85, 5/100, max(1/20, 1/60).
    "gpu-autoscale": {
        "title": "GPU + dynamic batching + autoscaling",
        "stage": 3,
        "capacity_rps": 55_000.0,
        "utilization": 0.4545455,
        "p99_ms": 97.3606798,
        "nodes": ("ok", "ok", "inactive", "ok", "ok", "inactive", "ok", "ok", "inactive"),
        "flows": (
            "active",
            "inactive",
            "active",
            "inactive",
            "active",
            "active",
            "inactive",
            "inactive",
            "active",
        ),
        "meters": (0.6060606, 0.7489283, 0.85, 0.05, 0.05),
        "meter_statuses": ("ok", "ok", "ok", "ok", "ok"),
        "decisions": ("needed", "needed", "not-yet", "not-yet", "not-yet", "useful"),
        "reasons": (
            ("capacity", "ok"),
            ("tail_latency", "ok"),
            ("batching", "ok"),
            ("hardware", "ok"),
            ("fleet", "warning"),
            ("headroom", "ok"),
        ),
    },
    # 60000 req/s, L=50, W=12, R=13, M=8, T=100, batching, GPU.
    # multiplier min(6, 1+12*50/200) = 4; per replica 300*8*4 = 9600; capacity 124800;
    # u = 60000/124800 = 0.4807692; queue = 50*60000/64800/sqrt(13) = 46.296296/3.6055513
    # = 12.840282; p99 = 50+12+12.840282 = 74.840282. Registry (8 > 1) and canary (8 > 2);
    # packing no (8 <= 13, 8/52 <= 0.5, 8 <= 20): stage 4. Packing max(8/52, 8/60) = 0.1538462.
    "registry-canary": {
        "title": "GPU autoscaling fleet + registry + canary",
        "stage": 4,
        "capacity_rps": 124_800.0,
        "utilization": 0.4807692,
        "p99_ms": 74.840282,
        "nodes": ("ok", "ok", "needed", "ok", "ok", "needed", "ok", "ok", "needed"),
        "flows": (
            "active",
            "active",
            "active",
            "inactive",
            "active",
            "active",
            "active",
            "active",
            "active",
        ),
        "meters": (0.6410256, 0.7484028, 0.85, 0.13, 0.1538462),
        "meter_statuses": ("ok", "ok", "ok", "ok", "ok"),
        "decisions": ("needed", "needed", "needed", "needed", "useful", "useful"),
        "reasons": (
            ("capacity", "ok"),
            ("tail_latency", "ok"),
            ("batching", "ok"),
            ("hardware", "ok"),
            ("rollout", "ok"),
            ("fleet", "warning"),
            ("headroom", "ok"),
        ),
    },
    # 300000 req/s, L=40, W=8, R=70, M=120, T=70, batching, GPU.
    # multiplier min(6, 1+8*40/200) = 2.6; per replica 375*8*2.6 = 7800; capacity 546000;
    # u = 300000/546000 = 0.5494505; queue = 40*300000/246000/sqrt(70) = 48.780488/8.3666003
    # = 5.830383; p99 = 40+8+5.830383 = 53.830383. Packing (120 > 70): stage 5; T=70 is not
    # tight (> 60). Packing max(120/280, 120/60) = 2 -> danger. Seven reasons: no headroom line.
    "multi-model-scale": {
        "title": "Multi-model packed fleet + canary rollout",
        "stage": 5,
        "capacity_rps": 546_000.0,
        "utilization": 0.5494505,
        "p99_ms": 53.830383,
        "nodes": ("ok", "ok", "needed", "ok", "ok", "needed", "ok", "ok", "needed"),
        "flows": (
            "active",
            "active",
            "active",
            "inactive",
            "active",
            "active",
            "active",
            "active",
            "active",
        ),
        "meters": (0.7326007, 0.7690055, 0.85, 0.7, 2.0),
        "meter_statuses": ("ok", "ok", "ok", "ok", "danger"),
        "decisions": ("needed", "needed", "needed", "needed", "needed", "useful"),
        "reasons": (
            ("capacity", "ok"),
            ("tail_latency", "ok"),
            ("batching", "ok"),
            ("hardware", "ok"),
            ("rollout", "ok"),
            ("packing", "warning"),
            ("fleet", "warning"),
        ),
    },
}

# The page's own outputs for the cards (docs/teaching_model.md), as the page rounds them.
PAGE_TABLE = {
    "single-endpoint": ("Single model endpoint", 1_000, "0.0500", "15.79"),
    "batching": ("Dynamic batching on CPU replicas", 6_000, "0.5000", "40.00"),
    "gpu-autoscale": ("GPU + dynamic batching + autoscaling", 55_000, "0.4545", "97.36"),
    "registry-canary": ("GPU autoscaling fleet + registry + canary", 124_800, "0.4808", "74.84"),
    "multi-model-scale": ("Multi-model packed fleet + canary rollout", 546_000, "0.5495", "53.83"),
}


def teaching_design(workload: Workload) -> Design:
    return assess(workload, teaching.latency(workload))


@pytest.mark.parametrize("card_id", PAGE_TABLE)
def test_cards_match_the_pages_table(card_id):
    title, capacity, utilization, p99 = PAGE_TABLE[card_id]
    assessment = evaluate(SCENARIO_BY_ID[card_id].workload(), "teaching")
    assert assessment.stage.title == title, f"{card_id}: title {assessment.stage.title!r}"
    assert round(assessment.capacity_rps) == capacity, (
        f"{card_id}: capacity {assessment.capacity_rps} req/s, page says {capacity}"
    )
    assert f"{assessment.utilization:.4f}" == utilization, (
        f"{card_id}: utilization {assessment.utilization:.6f}, page says {utilization}"
    )
    assert f"{assessment.p99_ms:.2f}" == p99, (
        f"{card_id}: p99 {assessment.p99_ms:.4f} ms, page says {p99}"
    )


@pytest.mark.parametrize("card_id", CARDS)
def test_cards_numbers_states_meters_decisions_reasons(card_id):
    expected = CARDS[card_id]
    assessment = evaluate(SCENARIO_BY_ID[card_id].workload(), "teaching")
    assert assessment.stage.number == expected["stage"], (
        f"{card_id}: stage {assessment.stage.number}, expected {expected['stage']}"
    )
    assert assessment.stage.title == expected["title"], f"{card_id}: {assessment.stage.title!r}"
    for name in ("capacity_rps", "utilization", "p99_ms"):
        got = getattr(assessment, name)
        assert math.isclose(got, expected[name], rel_tol=1e-6), (
            f"{card_id}: {name} = {got!r}, hand-derived {expected[name]!r}"
        )
    nodes = tuple(assessment.node_states[node] for node in NODE_ORDER)
    assert nodes == expected["nodes"], (
        f"{card_id}: node states {dict(zip(NODE_ORDER, nodes, strict=True))}"
    )
    flows = tuple(assessment.flow_states[flow] for flow in FLOW_ORDER)
    assert flows == expected["flows"], (
        f"{card_id}: flow states {dict(zip(FLOW_ORDER, flows, strict=True))}"
    )
    assert tuple(meter.id for meter in assessment.meters) == METER_ORDER, (
        f"{card_id}: meter order {[meter.id for meter in assessment.meters]}"
    )
    for meter, ratio in zip(assessment.meters, expected["meters"], strict=True):
        assert math.isclose(meter.ratio, ratio, rel_tol=1e-6), (
            f"{card_id}: meter {meter.id} ratio {meter.ratio!r}, hand-derived {ratio!r}"
        )
    statuses = tuple(meter.status for meter in assessment.meters)
    assert statuses == expected["meter_statuses"], f"{card_id}: meter statuses {statuses}"
    decisions = tuple((decision.id, decision.state) for decision in assessment.decisions)
    assert decisions == tuple(zip(DECISION_ORDER, expected["decisions"], strict=True)), (
        f"{card_id}: decisions {decisions}"
    )
    reasons = tuple((reason.id, reason.status) for reason in assessment.reasons)
    assert reasons == expected["reasons"], f"{card_id}: reasons {reasons}"


# --- Thresholds, each just either side, on workloads built so only that rule moves. -----------


def test_window_zero_keeps_batching_on_but_inactive():
    # Defaults: 200 req/s, L=20, R=2, batching on. W=0: no multiplier, capacity 750*2 = 1500;
    # W=1: multiplier 1+1*20/200 = 1.1, capacity 1650.
    off = teaching_design(Workload(batch_window_ms=0))
    on = teaching_design(Workload(batch_window_ms=1))
    assert math.isclose(teaching.latency(Workload(batch_window_ms=0)).capacity_rps, 1_500.0), (
        "window 0 must not multiply capacity"
    )
    assert math.isclose(teaching.latency(Workload(batch_window_ms=1)).capacity_rps, 1_650.0), (
        "window 1 ms must multiply capacity by 1.1"
    )
    assert off.node_states["batcher"] == "warning", f"W=0 batcher {off.node_states['batcher']}"
    assert on.node_states["batcher"] == "ok", f"W=1 batcher {on.node_states['batcher']}"
    assert off.decisions[0].state == "tradeoff", f"W=0 batching decision {off.decisions[0]}"
    assert on.decisions[0].state == "needed", f"W=1 batching decision {on.decisions[0]}"
    batching_reason = {reason.id: reason.status for reason in off.reasons}["batching"]
    assert batching_reason == "warning", f"W=0 batching reason {batching_reason}"
    assert off.meters[2].ratio == 0.3 and on.meters[2].ratio == 0.3, "CPU meter is 0.3 either way"


def test_window_zero_with_gpu_wastes_the_accelerator():
    # GPU on: the meter reads 0.85 while batching is active and 1.4 when it is not.
    idle = teaching_design(Workload(gpu=True, batch_window_ms=0))
    busy = teaching_design(Workload(gpu=True, batch_window_ms=1))
    assert idle.meters[2].ratio == 1.4 and idle.meters[2].status == "danger", (
        f"unbatched GPU meter {idle.meters[2]}"
    )
    assert busy.meters[2].ratio == 0.85, f"batched GPU meter {busy.meters[2]}"
    idle_hardware = {reason.id: reason.status for reason in idle.reasons}["hardware"]
    busy_hardware = {reason.id: reason.status for reason in busy.reasons}["hardware"]
    assert idle_hardware == "warning", f"unbatched GPU reason {idle_hardware}"
    assert busy_hardware == "ok", f"batched GPU must not be warned about, got {busy_hardware}"


@pytest.mark.parametrize(("target_ms", "tight"), [(60, True), (60.5, False)])
def test_target_60_is_tight(target_ms, tight):
    # 1500 req/s on CPU without batching: needs batching only when the tail is not tight
    # (1500 > 1000 but not > 2000).
    design = teaching_design(
        Workload(rate_rps=1_500, replicas=4, dynamic_batching=False, p99_target_ms=target_ms)
    )
    assert design.needs.tight_tail is tight, f"T={target_ms}: tight_tail {design.needs.tight_tail}"
    assert design.needs.needs_batching is not tight, (
        f"T={target_ms}: needs_batching {design.needs.needs_batching}"
    )
    assert design.node_states["batcher"] == ("inactive" if tight else "needed"), (
        f"T={target_ms}: batcher {design.node_states['batcher']}"
    )
    assert design.decisions[-1].state == ("tradeoff" if tight else "useful"), (
        f"T={target_ms}: p99 decision {design.decisions[-1]}"
    )
    assert design.reasons[-1].id == "headroom", f"T={target_ms}: last reason {design.reasons[-1]}"
    assert design.reasons[-1].status == ("warning" if tight else "ok"), (
        f"T={target_ms}: headroom reason {design.reasons[-1]}"
    )


@pytest.mark.parametrize(
    ("rate_rps", "target_ms", "needed"),
    [
        (1_000, 100, False),
        (1_000.5, 100, True),  # over 1000 with a loose target
        (2_000, 60, False),
        (2_000.5, 60, True),  # over 2000 whatever the target
    ],
)
def test_batching_rate_thresholds(rate_rps, target_ms, needed):
    # L=5 keeps these rates well inside capacity: 3000 req/s per replica x 4.
    design = teaching_design(
        Workload(
            rate_rps=rate_rps,
            model_latency_ms=5,
            replicas=4,
            dynamic_batching=False,
            p99_target_ms=target_ms,
        )
    )
    assert design.needs.needs_batching is needed, (
        f"{rate_rps} req/s, T={target_ms}: needs_batching {design.needs.needs_batching}"
    )
    assert design.flow_states[("gateway", "batcher")] == ("active" if needed else "inactive"), (
        f"{rate_rps} req/s: gateway->batcher {design.flow_states[('gateway', 'batcher')]}"
    )
    assert design.flow_states[("gateway", "replicas")] == ("inactive" if needed else "active"), (
        f"{rate_rps} req/s: gateway->replicas {design.flow_states[('gateway', 'replicas')]}"
    )
    assert design.stage.number == (2 if needed else 1), (
        f"{rate_rps} req/s: stage {design.stage.number}"
    )


@pytest.mark.parametrize(
    ("rate_rps", "latency_ms", "gpu_needed", "hardware"),
    [
        (5_000, 40, False, "not-yet"),  # not above 5000: neither GPU nor autoscaling
        (5_000.5, 40, True, "needed"),  # above 5000 with a 40 ms model: GPU
        (5_000.5, 39, False, "useful"),  # above 5000 with a lighter model: autoscaling only
    ],
)
def test_gpu_and_autoscale_rate_threshold(rate_rps, latency_ms, gpu_needed, hardware):
    # R=5 (more would ask for autoscaling by itself) with a 100 ms window keeps these loads under
    # capacity: 1000*15/40 * min(6, 1+100*40/200) * 5 = 375*6*5 = 11250 req/s.
    design = teaching_design(
        Workload(rate_rps=rate_rps, model_latency_ms=latency_ms, batch_window_ms=100, replicas=5)
    )
    assert design.needs.needs_gpu is gpu_needed, (
        f"{rate_rps} req/s, L={latency_ms}: needs_gpu {design.needs.needs_gpu}"
    )
    assert design.node_states["gpu_pool"] == ("needed" if gpu_needed else "inactive"), (
        f"gpu_pool {design.node_states['gpu_pool']}"
    )
    assert design.decisions[1].state == hardware, f"hardware decision {design.decisions[1]}"
    expected_meter = 1.2 if gpu_needed else 0.3
    assert design.meters[2].ratio == expected_meter, f"accelerator meter {design.meters[2]}"


@pytest.mark.parametrize(("replicas", "autoscale"), [(5, False), (6, True)])
def test_more_than_five_replicas_ask_for_autoscaling(replicas, autoscale):
    design = teaching_design(Workload(replicas=replicas))
    assert design.needs.needs_autoscale is autoscale, f"R={replicas}: {design.needs}"
    fleet = {reason.id: reason.status for reason in design.reasons}["fleet"]
    assert fleet == ("warning" if autoscale else "ok"), f"R={replicas}: fleet reason {fleet}"


@pytest.mark.parametrize(
    ("models", "replicas", "registry", "canary", "packing", "rollout_state", "packing_state"),
    [
        (1, 2, False, False, False, "not-yet", "not-yet"),
        (2, 2, True, False, False, "useful", "useful"),  # a registry, no canary yet
        (3, 3, True, True, False, "needed", "useful"),  # more than two: canary
        (2, 1, True, False, True, "useful", "needed"),  # more models than replicas: packing
        (20, 40, True, True, False, "needed", "useful"),  # 20 on 40 replicas still fit
        (21, 42, True, True, True, "needed", "needed"),  # over 20 models: packing regardless
    ],
)
def test_model_count_thresholds(
    models, replicas, registry, canary, packing, rollout_state, packing_state
):
    design = teaching_design(Workload(models_hosted=models, replicas=replicas))
    needs = design.needs
    assert (needs.needs_registry, needs.needs_canary, needs.needs_packing) == (
        registry,
        canary,
        packing,
    ), f"M={models}, R={replicas}: {needs}"
    assert design.node_states["registry"] == ("needed" if registry else "inactive"), (
        f"M={models}: registry node {design.node_states['registry']}"
    )
    assert design.node_states["traffic_split"] == ("needed" if canary else "inactive"), (
        f"M={models}: traffic split {design.node_states['traffic_split']}"
    )
    assert design.node_states["shadow"] == design.node_states["traffic_split"], (
        "shadow and traffic split share the canary rule"
    )
    states = {decision.id: decision.state for decision in design.decisions}
    assert states["rollout"] == rollout_state, f"M={models}: rollout {states['rollout']}"
    assert states["packing"] == packing_state, f"M={models}: packing {states['packing']}"
    assert states["registry"] == ("needed" if registry else "not-yet"), (
        f"M={models}: registry decision {states['registry']}"
    )


@pytest.mark.parametrize(
    ("rate_rps", "replicas_state", "capacity_status", "meter_status"),
    [
        (600, "ok", "ok", "ok"),  # u = 0.6 exactly: not above 0.6
        (600.5, "warning", "ok", "ok"),
        (750, "warning", "ok", "warning"),  # u = 0.75: at, not over, the safe line
        (750.5, "overloaded", "warning", "danger"),
        (1_000, "overloaded", "warning", "danger"),  # u = 1: not above 1
        (1_000.5, "overloaded", "danger", "danger"),
    ],
)
def test_utilization_thresholds(rate_rps, replicas_state, capacity_status, meter_status):
    # One CPU replica of a 15 ms model, no batching: capacity 1000 req/s, so u = rate/1000.
    workload = Workload(
        rate_rps=rate_rps,
        model_latency_ms=15,
        replicas=1,
        dynamic_batching=False,
        p99_target_ms=1_000,
    )
    design = teaching_design(workload)
    assert design.node_states["replicas"] == replicas_state, (
        f"u={rate_rps / 1000}: replicas {design.node_states['replicas']}"
    )
    assert design.reasons[0].id == "capacity" and design.reasons[0].status == capacity_status, (
        f"u={rate_rps / 1000}: capacity reason {design.reasons[0]}"
    )
    assert design.meters[0].status == meter_status, (
        f"u={rate_rps / 1000}: capacity meter {design.meters[0]}"
    )


def test_missed_target_flags_metrics_and_the_p99_decision():
    # Card 3 with T=90: p99 97.36 > 90 and 90 > 60 (not tight), so the decision is "needed".
    workload = SCENARIO_BY_ID["gpu-autoscale"].workload().with_changes(p99_target_ms=90)
    design = teaching_design(workload)
    assert design.node_states["metrics"] == "warning", f"metrics {design.node_states['metrics']}"
    assert design.flow_states[("replicas", "metrics")] == "warning", "replicas->metrics"
    assert design.decisions[-1].state == "needed", f"p99 decision {design.decisions[-1]}"
    assert design.reasons[1].status == "danger", f"p99 reason {design.reasons[1]}"
    assert math.isclose(design.meters[1].ratio, 97.3606798 / 90, rel_tol=1e-6), (
        f"tail meter {design.meters[1]}"
    )
