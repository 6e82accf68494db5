"""The five scenario cards and the walkthrough: the seed's values, in the seed's order."""

from __future__ import annotations

import dataclasses

import pytest

from sdlab_model import Workload
from sdlab_model.scenarios import SCENARIO_BY_ID, SCENARIOS, WALKTHROUGH, Scenario

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


def test_walkthrough_quotes_the_cards_numbers():
    # Each question names the numbers of its card; step 5 uses the card's 70 ms, not the
    # page question's 50 ms.
    expected = {
        1: ("50", "15 ms"),
        2: ("3,000",),
        3: ("60 ms", "25,000"),
        4: ("eight",),
        5: ("120", "300,000", "70 ms"),
    }
    for step in WALKTHROUGH:
        text = f"{step.question} {step.answer}"
        for fragment in expected[step.step]:
            assert fragment in text, f"step {step.step} does not mention {fragment!r}: {text}"
    last = WALKTHROUGH[-1]
    assert "50 ms" not in f"{last.question} {last.answer} {last.takeaway}", (
        "step 5 must say the card's 70 ms, not 50 ms"
    )
