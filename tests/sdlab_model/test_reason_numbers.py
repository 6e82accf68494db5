"""Every number in a reason, decision or meter is one the model computed (issue 10, must-show 3).

For each card, both models, and every numeric input at its minimum and its maximum (one at a
time, the rest as on the card), each number a reason, decision or meter shows must be, to the
digits shown, one of the values that reason is about, computed here independently of ``design.py``:
the utilization and the safe line, the p99 and the target, the p99 with batching toggled, the
fewest replicas that meet the target now / with batching toggled / on the other hardware, and so
on. A number written into prose, or one computed from the wrong quantity, fails.
"""

from __future__ import annotations

import math
import re

import pytest

from sdlab_model import SCENARIOS, evaluate, min_replicas_for_target
from sdlab_model.advice.search import price_per_replica_hour
from sdlab_model.design import FLEET_METER_REPLICAS, PACKING_PRESSURE_MODELS
from sdlab_model.params import (
    MODEL_CHOICES,
    MODELS_PER_REPLICA_HOT,
    NUMERIC_INPUTS,
    SAFE_UTILIZATION,
)
from sdlab_model.residency.inputs import ResidencyInputs
from sdlab_model.residency.placement import plan_residency
from sdlab_model.workload import Workload

REPLICAS_LIMIT = 500  # "no count up to 500": the replicas slider's maximum
# A number as the page writes one: "$1,234.56", "75%", "36.8", "1,000" (not the 99 of "p99").
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])\$?\d[\d,]*(?:\.\d+)?%?")


def _cases() -> list[tuple[str, Workload]]:
    cases = []
    for card in SCENARIOS:
        base = card.workload()
        cases.append((f"{card.id}", base))
        for spec in NUMERIC_INPUTS:
            for end, value in (("min", spec.minimum), ("max", spec.maximum)):
                cases.append(
                    (
                        f"{card.id}-{spec.name}-{end}",
                        base.with_changes(**{spec.name: value}),
                    )
                )
    return cases


CASES = _cases()


def _candidates(workload: Workload, model: str) -> dict[str, dict[str, float]]:
    """Per reason id, the values (name -> value) its numbers may show; percentages as shares."""
    result = evaluate(workload, model)
    p99, target = result.p99_ms, workload.p99_target_ms
    shared = {"safe line": SAFE_UTILIZATION}
    values = {
        "capacity": {"utilization": result.utilization, **shared},
        "tail_latency": {"p99": p99, "target": target},
        "headroom": {"target": target, "headroom": target - p99},
        "rollout": {"models": workload.models_hosted},
        "packing": {
            "models": workload.models_hosted,
            "replicas": workload.replicas,
            "models per replica": workload.models_hosted / workload.replicas,
        },
        "fleet": {"replicas": workload.replicas},
        "batching": {"window": workload.batch_window_ms, "rate": workload.rate_rps},
        "hardware": {"model latency": workload.model_latency_ms, "rate": workload.rate_rps},
    }
    if model == "queueing" and result.is_stable and result.mean_batch_size > 1.0:
        # The slots' busy share at the batches that form: each request's part of its batch.
        size = result.mean_batch_size
        busy = workload.rate_rps * workload.batch_service_ms(size) / size / 1000 / workload.servers
        values["capacity"].update({"slots busy": min(1.0, busy), "batch size": size})
    if model == "queueing":
        toggled = workload.with_changes(dynamic_batching=not workload.dynamic_batching)
        other = workload.with_changes(gpu=not workload.gpu)
        now_n = min_replicas_for_target(workload, model)
        toggled_n = min_replicas_for_target(toggled, model)
        other_n = min_replicas_for_target(other, model)
        values["batching"].update(
            {
                "p99": p99,
                "p99 with batching toggled": evaluate(toggled, model).p99_ms,
                "target": target,
                "replicas now": math.nan if now_n is None else now_n,
                "replicas with batching toggled": math.nan if toggled_n is None else toggled_n,
                "replica limit": REPLICAS_LIMIT,
            }
        )
        values["hardware"].update(
            {
                "replicas now": math.nan if now_n is None else now_n,
                "replicas on the other hardware": math.nan if other_n is None else other_n,
                "cost now": math.nan if now_n is None else now_n * price_per_replica_hour(workload),
                "cost on the other hardware": math.nan
                if other_n is None
                else other_n * price_per_replica_hour(other),
                "replica limit": REPLICAS_LIMIT,
            }
        )
    packing = _packing_values(workload, result, model)
    values["packing"].update(packing)
    # The meters: one name and one number per quantity.
    values["meter:capacity"] = dict(values["capacity"])
    if model == "teaching":  # the seed page's own wording: load as a share of safe capacity
        values["meter:capacity"]["share of safe capacity"] = result.utilization / SAFE_UTILIZATION
    values["meter:tail_latency"] = values["tail_latency"]
    values["meter:fleet_size"] = {"replicas": workload.replicas, "line": FLEET_METER_REPLICAS}
    values["meter:multi_model"] = {
        "models": workload.models_hosted,
        "hot-load slots": workload.replicas * MODELS_PER_REPLICA_HOT,
        "line": PACKING_PRESSURE_MODELS,
        **packing,
    }
    values["meter:gpu_efficiency"] = {}
    return values


def _packing_values(workload: Workload, result, model: str) -> dict[str, float]:
    """The residency model's numbers, where the queueing model's packing decision quotes them."""
    if model != "queueing" or not workload.gpu or workload.is_central_queue:
        return {}
    if workload.models_hosted < 2 or not result.needs.needs_packing:
        return {}
    plan = plan_residency(workload, ResidencyInputs(), sweep=False)
    packed = plan.placement("packed_lru")
    values = {
        "models fit per replica": plan.models_fit_per_replica,
        "models": workload.models_hosted,
        "accelerator memory (GB)": plan.inputs.accelerator_memory_gb,
        "packed hit ratio": packed.hit_ratio,
        "packed p99": packed.p99_ms,
        "share waiting for a load": packed.load_wait_share,
        "dedicated cost to meet": plan.placement("dedicated").usd_per_hour_to_meet,
        "replica limit": REPLICAS_LIMIT,
        "catalog price of a replica-hour": plan.usd_per_replica_hour,
    }
    if plan.recommended:
        chosen = plan.placement(plan.recommended)
        values["recommended cost"] = chosen.usd_per_hour_to_meet
        values["recommended replicas"] = chosen.replicas_to_meet or math.nan
    return values


def _texts(result) -> list[tuple[str, str]]:
    """(what it is about, text) for every reason, decision and meter value shown."""
    texts = [(reason.id, reason.text) for reason in result.reasons]
    texts += [(d.id, d.text) for d in result.decisions if d.id in ("batching", "hardware")]
    texts += [(f"meter:{m.id}", m.value_text) for m in result.meters]
    return texts


def _shows(token: str, value: float) -> bool:
    """Whether ``value`` printed to the token's digits is the token."""
    if not math.isfinite(value):
        return False
    digits = token.lstrip("$").rstrip("%")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    shown = float(digits.replace(",", ""))
    number = value * 100 if token.endswith("%") else value
    return abs(round(number, decimals) - shown) <= 10 ** (-decimals) / 2 + 1e-9


@pytest.mark.parametrize("model", MODEL_CHOICES)
def test_every_number_in_a_reason_decision_or_meter_is_the_models_value(model):
    wrong = []
    checked = 0
    for case, workload in CASES:
        result = evaluate(workload, model)
        allowed = _candidates(workload, model)
        for about, text in _texts(result):
            for token in _NUMBER.findall(text):
                checked += 1
                if not any(_shows(token, v) for v in allowed[about].values()):
                    wrong.append(f"{case}: {about} shows {token!r} in {text!r}")
    assert checked > 500, f"only {checked} numbers checked: the sweep lost its reasons"
    assert not wrong, f"{len(wrong)} numbers are not the model's:\n" + "\n".join(wrong[:10])


def test_the_check_catches_a_number_that_is_not_the_models():
    # A p99 one tenth off must not pass as the model's p99.
    assert not _shows("36.9", 36.8), "a different p99 was taken for the model's"
    assert _shows("36.8", 36.84) and _shows("75%", 0.75) and _shows("$1,428.00", 1428.0), (
        "a correctly printed value was rejected"
    )
