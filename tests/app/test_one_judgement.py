"""One design, one answer: every number and mark a person reads about a design is the judgement's.

For the defaults, the five cards, the cards with their targets at 0.9x and 1.1x their judged p99,
and random workloads under both models, the rendered Lab (headline, sidebar summary, stage,
meters, reasons, replicas needed, the A/B comparison of the design with itself) and the Markdown
report must say exactly what ``sdlab_model.judge`` says. A second test fails if any module of the
UI imports the model's latency, evaluation or simulation functions: only ``cache`` may reach the
judgement, and nothing else may compute a design's numbers of its own.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import (
    ADVICE_PAGE,
    assert_no_exception,
    headline_block,
    headline_metrics,
    open_app,
)

from sdlab_model import SCENARIOS, Workload
from sdlab_model.assessment import Assessment, judge
from sdlab_model.residency import ResidencyInputs
from sdlab_ui import cache, report
from sdlab_ui.lab import compare, headline, sections
from sdlab_ui.text import ms_text

ROOT = Path(__file__).resolve().parents[2]
RESIDENCY_PAGE = "app_pages/residency.py"
sys.path.insert(0, str(ROOT / "scripts"))
from evaluate_golden import random_workloads  # noqa: E402

RANDOM_COUNT = int(os.environ.get("SDLAB_JUDGEMENT_RANDOM", "100"))
"""Random workloads checked (both models each); the closing figures use the full 100."""
RANDOM_SEED = 20261202


def _cards() -> list[tuple[str, Workload]]:
    cases = [("defaults", Workload())]
    for card in SCENARIOS:
        workload = card.workload()
        cases.append((card.id, workload))
        p99 = judge(workload).p99_ms
        if math.isfinite(p99):
            for factor in (0.9, 1.1):
                # Round as the slider would not: the judgement must hold at any target.
                cases.append(
                    (f"{card.id}@{factor}x", workload.with_changes(p99_target_ms=p99 * factor))
                )
    return cases


@functools.cache
def _random_cases() -> list[tuple[str, Workload]]:
    return [
        (f"random-{index}", workload)
        for index, workload in enumerate(random_workloads(RANDOM_COUNT, RANDOM_SEED))
    ]


def _query(workload: Workload, model: str) -> dict[str, str]:
    query = {**workload.to_strings(), "model": model}
    # Design A pinned as the same design: the comparison must agree with the Lab on both sides.
    query["a"] = "1"
    query.update({f"a.{name}": text for name, text in workload.to_strings().items()})
    return query


def _why_lines(app) -> list[str]:
    block = next(m.value for m in app.markdown if "#### Why this changes" in m.value)
    return [line for line in block.split("\n") if line.startswith("- ")]


def _table_rows(app, heading: str) -> list[str]:
    """The body rows of the table under ``heading`` (in the analysis element)."""
    block = next(m.value for m in app.markdown if heading in m.value)
    section = block.split(heading, 1)[1].split("\n#### ", 1)[0]
    return [line for line in section.split("\n") if line.startswith("| ") and "**" in line]


def _assert_lab_says(app, judged: Assessment, case: str) -> None:
    metrics = headline_metrics(app)
    label = headline.p99_label(judged)
    assert label in metrics, f"{case}: headline labels {sorted(metrics)}, judgement {label!r}"
    value, tone, _ = metrics[label]
    # Past capacity every percentile reads ∞ (the teaching model's capped figure is quoted in
    # the banner, not headlined).
    shown = judged.p99_ms if judged.is_stable else math.inf
    assert value == headline.metric_ms(shown), (
        f"{case}: headline p99 {value!r}, judgement {judged.p99_ms!r}"
    )
    if judged.is_stable:
        assert (tone == "good") == judged.meets_target, (
            f"{case}: headline mark {tone!r}, judgement meets={judged.meets_target}"
        )
    needed = judged.min_replicas_for_target
    needed_text = "none up to 500" if needed is None else str(needed)
    block = headline_block(app)
    assert f"<td><strong>{needed_text}</strong></td>" in block, (
        f"{case}: replicas needed is not the judgement's {needed_text}: {block[-400:]}"
    )
    summary = next(m.value for m in app.sidebar.markdown if headline.SUMMARY_CLASS in m.value)
    assert summary.endswith(headline.summary_line(judged)), (
        f"{case}: sidebar {summary!r} is not the judgement's {headline.summary_line(judged)!r}"
    )
    shape = next(m.value for m in app.markdown if m.value.startswith("#### Recommended shape"))
    assert f"**{judged.stage.title}**" in shape, f"{case}: stage {shape!r} vs {judged.stage}"
    expected = [f"- {sections.STATUS_ICON[r.status]} {r.text}" for r in judged.reasons]
    assert _why_lines(app) == expected, f"{case}: reasons differ from the judgement's"
    rows = _table_rows(app, "#### Bottlenecks")
    assert len(rows) == len(judged.meters), f"{case}: {len(rows)} meters shown"
    for row, meter in zip(rows, judged.meters, strict=True):
        assert row.startswith(f"| {sections.STATUS_ICON[meter.status]} **{meter.label}**"), (
            f"{case}: meter {row!r} is not {meter.status} {meter.label}"
        )
        assert meter.value_text in row, f"{case}: meter {row!r} lacks {meter.value_text!r}"
    decisions = _table_rows(app, "#### Decisions")
    expected = [
        f"| **{d.label}** | {sections.DECISION_BADGE[d.state]} | {d.text} |"
        for d in judged.decisions
    ]
    assert decisions == expected, f"{case}: decisions differ from the judgement's"


def _assert_comparison_says(app, judged: Assessment, case: str) -> None:
    table = next(m.value for m in app.markdown if "| A (pinned) |" in m.value)
    side = compare.Side.of(judged)
    for name, a_text, b_text, _ in compare.rows(side, side, *(judged.workload.p99_target_ms,) * 2):
        assert f"| {name} | {a_text} | {b_text} |" in table, (
            f"{case}: comparison row {name!r} is not the judgement's ({a_text})"
        )


def _same_judgement(a: Assessment, b: Assessment) -> bool:
    """Equal assessments. A simulation compares by identity (``ConvergedSim`` holds arrays), and
    the cached view's can be another run of the same seeded simulation once the model's own
    cache has let it go: its numbers are compared instead."""
    sims = (a.simulation, b.simulation)
    if None in sims:
        same_sim = sims[0] is sims[1]
    else:
        same_sim = all(
            _same_value(getattr(a.simulation, f.name), getattr(b.simulation, f.name))
            for f in dataclasses.fields(a.simulation)
        )
    return same_sim and dataclasses.replace(a, simulation=None) == dataclasses.replace(
        b, simulation=None
    )


def _same_value(x: object, y: object) -> bool:
    try:
        return bool(np.array_equal(x, y, equal_nan=True))
    except TypeError:  # not numbers: NaN does not arise
        return bool(np.array_equal(x, y))


def _assert_report_says(
    workload: Workload, model: str, judged: Assessment, case: str, *, html: bool
) -> None:
    view = cache._lab_view(workload, model, ResidencyInputs())
    assert _same_judgement(view.result, judged), f"{case}: the Lab's view holds another assessment"
    text = report.markdown_report(view, link_query="")
    simulated = " (simulated)" if judged.is_simulated else ""
    assert f"- p99{simulated}: **{report.p99_text(judged, judged.p99_ms)}**" in text, (
        f"{case}: the report's p99 is not the judgement's"
    )
    needed = judged.min_replicas_for_target
    assert f"replicas needed for the target: {'none up to 500' if needed is None else needed}" in (
        text
    ), f"{case}: the report's replicas needed is not the judgement's"
    if html:  # the HTML report inlines plotly.js: checked on the cards only
        page = report.html_report(view, heatmap=None, dot="", svg=None, link_query="")
        css = "ok" if judged.meets_target else "bad"
        shown = report.p99_text(judged, judged.p99_ms)
        assert f'<p>p99{simulated}: <strong class="{css}">{shown}</strong>' in page, (
            f"{case}: the HTML report's p99 or its mark is not the judgement's"
        )


def _check(case: str, workload: Workload, model: str, *, html: bool = False) -> None:
    judged = judge(workload, model, ResidencyInputs())
    app = open_app(_query(workload, model))
    assert_no_exception(app)
    _assert_lab_says(app, judged, case)
    _assert_comparison_says(app, judged, case)
    _assert_report_says(workload, model, judged, case, html=html)


@pytest.mark.parametrize(("case", "workload"), _cards(), ids=[c for c, _ in _cards()])
@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_the_cards_read_the_same_everywhere(case, workload, model):
    _check(case, workload, model, html=True)


_DESIGNS = [("defaults", Workload()), *((c.id, c.workload()) for c in SCENARIOS)]


@pytest.mark.parametrize(("case", "workload"), _DESIGNS, ids=[c for c, _ in _DESIGNS])
def test_advice_reads_the_current_design_as_the_lab_does(case, workload):
    judged = judge(workload, "queueing", ResidencyInputs())
    app = open_app(_query(workload, "queueing"), page=ADVICE_PAGE)
    assert_no_exception(app)
    current = next(m.value for m in app.markdown if "The current design:" in m.value)
    label = headline.p99_label(judged)
    shown = f"{label} {ms_text(judged.p99_ms) if judged.is_stable else 'unstable (∞)'}"
    assert current.rstrip(".").endswith(shown) or f"{shown}." in current, (
        f"{case}: Advice reads the current design as {current!r}, the judgement {shown!r}"
    )


_MANY_MODELS = [
    (c.id, c.workload().with_changes(gpu=True, models_hosted=models))
    for c in SCENARIOS[2:]
    for models in (30, 120)
]


@pytest.mark.parametrize(("case", "workload"), _MANY_MODELS, ids=[c for c, _ in _MANY_MODELS])
def test_models_and_memory_recommends_what_the_lab_recommends(case, workload):
    """The Lab's packing decision and stage read the same placements the page shows."""
    judged = judge(workload, "queueing", ResidencyInputs())
    app = open_app(_query(workload, "queueing"), page=RESIDENCY_PAGE)
    assert_no_exception(app)
    packing = judged.packing
    said = " ".join(m.value for m in app.success)
    if packing is None or packing.recommended is None:
        assert "Recommended:" not in said, f"{case}: the page recommends what the Lab does not"
        return
    assert f"**{packing.recommended_label}**" in said, f"{case}: {said!r} vs {packing}"
    assert f"${packing.recommended_usd_per_hour:,.2f}/h" in said, f"{case}: cost {said!r}"
    assert f"{packing.recommended_replicas} replicas" in said, f"{case}: count {said!r}"


CHUNK = 10
"""Random workloads per test, so that the workers share them out."""


@pytest.mark.parametrize("first", range(0, RANDOM_COUNT, CHUNK))
@pytest.mark.parametrize("model", ["queueing", "teaching"])
def test_random_workloads_read_the_same_everywhere(model, first):
    for case, workload in _random_cases()[first : first + CHUNK]:
        _check(case, workload, model)


# What computes a design's numbers: only the cache may call the judgement, and no UI module may
# call the model's own evaluation, latency or simulator (a second, possibly different, answer).
_MODEL_MODULES = ("sdlab_model", "sdlab_model.assessment")
_COMPUTES_A_DESIGN = {"evaluate", "latency", "min_replicas_for_target"}
_JUDGEMENT = {"judge", "design_simulation", "judged_p99_ms", "judged_min_replicas"}
_SIMULATES_A_DESIGN = {"simulate", "simulate_converged", "simulate_design"}
_MODEL_INTERNALS = {"sdlab_model.queues.queueing", "sdlab_model.queues.fleet"}


def _design_imports(path: Path, allowed: set[str]) -> list[str]:
    """What ``path`` imports that computes a design's numbers, but ``allowed``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sdlab_model"):
            names = {alias.name for alias in node.names}
            if node.module in _MODEL_MODULES:
                found += sorted(names & (_COMPUTES_A_DESIGN | _JUDGEMENT) - allowed)
            found += sorted(names & _SIMULATES_A_DESIGN)
            modules = {node.module, *(f"{node.module}.{name}" for name in names)}
            found += sorted(modules & _MODEL_INTERNALS)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name in _MODEL_INTERNALS]
    return found


def test_no_ui_module_computes_a_design_of_its_own():
    offenders = {}
    for path in sorted([*(ROOT / "sdlab_ui").rglob("*.py"), *(ROOT / "app_pages").rglob("*.py")]):
        allowed = _JUDGEMENT if path.name == "cache.py" else set()
        if found := _design_imports(path, allowed):
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"UI modules that compute a design's numbers themselves: {offenders}"
