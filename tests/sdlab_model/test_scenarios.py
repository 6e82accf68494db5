"""The five scenario cards and the walkthrough: the seed's values, in the seed's order."""

from __future__ import annotations

import dataclasses
import re

import pytest

from sdlab_model import Workload, evaluate
from sdlab_model.scenarios import (
    SCENARIO_BY_ID,
    SCENARIOS,
    WALKTHROUGH,
    Scenario,
    walkthrough_numbers,
)

# docs/teaching_model.md, "The five scenario cards": step, id, title, rate, latency, window,
# replicas, models, p99 target, batching, GPU.
SPEC_TABLE = (
    (1, "single-endpoint", "Single model endpoint", 50, 15, 0, 1, 1, 200, False, False),
    (2, "batching", "Dynamic batching", 3_000, 20, 10, 4, 1, 150, True, False),
    (3, "gpu-autoscale", "GPU + autoscaling", 25_000, 60, 15, 5, 1, 130, True, True),
    (4, "registry-canary", "Registry + canary", 60_000, 50, 12, 13, 8, 100, True, True),
    (5, "multi-model-scale", "Multi-model at scale", 300_000, 40, 8, 70, 120, 70, True, True),
)
CARD_FIELDS = (
    "rate_rps",
    "model_latency_ms",
    "batch_window_ms",
    "replicas",
    "models_hosted",
    "p99_target_ms",
    "dynamic_batching",
    "gpu",
)


@pytest.mark.parametrize("row", SPEC_TABLE, ids=lambda row: row[1])
def test_cards_match_the_spec_table(row):
    step, card_id, title, *values = row
    card = SCENARIO_BY_ID[card_id]
    assert (card.step, card.title) == (step, title), f"{card_id}: step/title {card}"
    got = tuple(getattr(card, name) for name in CARD_FIELDS)
    assert got == tuple(values), f"{card_id}: values {dict(zip(CARD_FIELDS, got, strict=True))}"
    assert card.summary.strip(), f"{card_id} has no summary"


def test_cards_are_in_demo_order():
    assert [card.id for card in SCENARIOS] == [row[1] for row in SPEC_TABLE], "card order"
    assert [card.step for card in SCENARIOS] == [1, 2, 3, 4, 5], "steps must run 1 to 5"


@pytest.mark.parametrize("card", SCENARIOS, ids=lambda card: card.id)
def test_card_workload_sets_its_values_and_leaves_the_rest_default(card):
    workload = card.workload()
    default = Workload()
    for field in dataclasses.fields(Workload):
        expected = (
            getattr(card, field.name) if field.name in CARD_FIELDS else getattr(default, field.name)
        )
        assert getattr(workload, field.name) == expected, (
            f"{card.id}: {field.name} = {getattr(workload, field.name)!r}, expected {expected!r}"
        )


def test_cards_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SCENARIOS[0].rate_rps = 1  # type: ignore[misc]
    assert isinstance(SCENARIOS[0], Scenario), "SCENARIOS holds Scenario cards"


def test_walkthrough_visits_the_cards_in_order():
    assert [step.card_id for step in WALKTHROUGH] == [card.id for card in SCENARIOS], (
        f"walkthrough cards {[step.card_id for step in WALKTHROUGH]}"
    )
    assert [step.step for step in WALKTHROUGH] == [1, 2, 3, 4, 5], "walkthrough steps"
    for step in WALKTHROUGH:
        for name in ("focus", "question", "answer", "takeaway"):
            assert getattr(step, name).strip(), f"step {step.step} has an empty {name}"
        assert step.question.rstrip().endswith("?"), f"step {step.step} question: {step.question}"


@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_walkthrough_numbers_are_the_models_own(model):
    # Prose that quotes a number computes it: the templates hold no digits, and the rendered
    # text carries the card's inputs and the chosen model's p99 as the page formats them.
    for step in WALKTHROUGH:
        for template in (step.question, step.answer, step.routed_answer):
            prose = re.sub(r"\{\w+\}|\bp99\b", "", template)  # placeholders and the word p99
            assert not re.search(r"\d", prose), f"step {step.step} writes a number: {template}"
        card = SCENARIO_BY_ID[step.card_id].workload()
        result = evaluate(card, model)
        numbers = walkthrough_numbers(card, result)
        question, answer = step.render(numbers)
        assert f"{card.rate_rps:,.0f}" in question + answer or step.step == 4, step.step
        if "{p99}" in step.answer:
            shown = numbers["p99"]
            expected = (
                f"{result.p99_ms:,.0f} ms" if result.p99_ms >= 100 else f"{result.p99_ms:.1f} ms"
            )
            assert shown == expected and shown in answer, f"step {step.step}: p99 {shown}"


def test_card_5s_answer_quotes_the_placement_that_models_and_memory_recommends():
    # The story agrees with the numbers: the answer names the placement plan_residency picks,
    # with its replicas and cost, and the dedicated cost beside it, as the page formats them.
    from sdlab_model.residency import ResidencyInputs
    from sdlab_model.residency.placement import PLACEMENT_LABELS, plan_residency

    step = next(s for s in WALKTHROUGH if s.card_id == "multi-model-scale")
    card = SCENARIO_BY_ID[step.card_id].workload()
    _, answer = step.render(walkthrough_numbers(card, evaluate(card, "queueing")))
    plan = plan_residency(card, ResidencyInputs(), sweep=False)
    chosen = plan.placement(plan.recommended)
    dedicated = plan.placement("dedicated")
    for text in (
        PLACEMENT_LABELS[plan.recommended],
        f"{chosen.replicas_to_meet:,} replicas for ${chosen.usd_per_hour_to_meet:,.2f}/h",
        f"${dedicated.usd_per_hour_to_meet:,.2f}/h for dedicated",
    ):
        assert text in answer, f"card 5's answer does not say {text!r}: {answer}"
    assert "route" in SCENARIO_BY_ID["multi-model-scale"].summary, "the card tells another story"
