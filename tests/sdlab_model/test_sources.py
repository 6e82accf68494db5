"""Sources, teaching assumptions, tradeoffs and formulas: complete, linked, and in step."""

from __future__ import annotations

from urllib.parse import urlparse

from sdlab_model.design import DECISION_LABELS
from sdlab_model.sources import (
    FORMULAS,
    SOURCES,
    TEACHING_ASSUMPTIONS,
    TRADEOFF_BY_DECISION,
    TRADEOFFS,
)

# The original page's four source-backed rules: source name and link of each.
SPEC_SOURCES = {
    "NVIDIA Triton Inference Server": "https://github.com/triton-inference-server/server",
    "TensorFlow Serving": "https://www.tensorflow.org/tfx/guide/serving",
    "KServe": "https://kserve.github.io/website/",
    "The Tail at Scale (Dean & Barroso, CACM 2013)": "https://research.google/pubs/the-tail-at-scale/",
}


def test_four_sources_with_the_specs_links():
    assert {source.source_name: source.url for source in SOURCES} == SPEC_SOURCES, (
        f"sources {[(source.source_name, source.url) for source in SOURCES]}"
    )
    for source in SOURCES:
        assert urlparse(source.url).scheme == "https", f"{source.id}: {source.url}"
        assert len(source.summary) > 80, f"{source.id}: summary too thin: {source.summary!r}"


def test_three_teaching_assumptions_each_refined():
    assert len(TEACHING_ASSUMPTIONS) == 3, f"{len(TEACHING_ASSUMPTIONS)} assumptions"
    for assumption in TEACHING_ASSUMPTIONS:
        assert assumption.teaching.strip() and assumption.queueing_refinement.strip(), (
            f"{assumption.id} lacks a side"
        )
    refinements = " ".join(item.queueing_refinement for item in TEACHING_ASSUMPTIONS)
    for idea in ("replicas × slots", "Erlang C", "M/D/c", "same rules"):
        assert idea in refinements, f"the refinements never mention {idea!r}"


def test_a_tradeoff_for_each_decision():
    assert [entry.decision_id for entry in TRADEOFFS] == list(DECISION_LABELS), (
        f"tradeoffs {[entry.decision_id for entry in TRADEOFFS]} vs decisions "
        f"{list(DECISION_LABELS)}"
    )
    for entry in TRADEOFFS:
        assert entry.gain.strip() and entry.cost.strip() and entry.when.strip(), (
            f"{entry.decision_id} lacks gain, cost or when"
        )
        assert TRADEOFF_BY_DECISION[entry.decision_id] is entry, f"{entry.decision_id} lookup"


def test_formulas_carry_latex_and_a_reference():
    ids = [formula.id for formula in FORMULAS]
    assert ids == ["teaching-p99", "erlang-c", "mdc-decay", "affine-batch"], f"formulas {ids}"
    for formula in FORMULAS:
        assert formula.reference.strip(), f"{formula.id} has no reference"
        assert formula.latex.count("{") == formula.latex.count("}"), (
            f"{formula.id}: unbalanced braces in {formula.latex}"
        )
    by_id = {formula.id: formula for formula in FORMULAS}
    assert r"\eta S = c\,\ln" in by_id["mdc-decay"].latex, "the M/D/c decay-rate equation"
    assert r"S(b) = S_1\,\bigl(f + (1-f)\,b\bigr)" in by_id["affine-batch"].latex, "batch cost"
    assert r"\sqrt{R}" in by_id["teaching-p99"].latex, "the teaching model's square-root relief"
