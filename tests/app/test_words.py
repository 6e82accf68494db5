"""What a person reads: no internal wording ("seed") and no path to a file outside the repository.

Two nets. The app is rendered with AppTest in the states that show the most text (every page,
the walkthrough with each answer revealed, the teaching model past capacity) and every string of
every element is scanned: labels, help, options as shown, Markdown, chart specs. The modules that
hold shown text are also scanned as source (string constants, docstrings excepted), which covers
text that only some states show.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from apptest_helpers import (
    ADVICE_PAGE,
    HEATMAPS_PAGE,
    LAB_PAGE,
    TRADEOFFS_PAGE,
    assert_no_exception,
    open_app,
)
from google.protobuf.message import Message

ROOT = Path(__file__).resolve().parents[2]
# Modules whose string constants reach the page (labels, help, prose, notes, hover text).
SHOWN_TEXT_MODULES = (
    "app.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app_pages").glob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "sdlab_ui").rglob("*.py")),
    "sdlab_model/scenarios.py",
    "sdlab_model/sources.py",
    "sdlab_model/params.py",
    "sdlab_model/page_params.py",
    "sdlab_model/teaching.py",
    "sdlab_model/design.py",
    "sdlab_model/architecture.py",
)
_URL = re.compile(r"https?://\S+")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.(?:md|py|txt|json|toml|csv|png))\b")


def _strings(message: Message) -> Iterator[str]:
    for _, value in message.ListFields():
        values = (
            value if hasattr(value, "__len__") and not isinstance(value, str | bytes) else [value]
        )
        for item in values:
            if isinstance(item, Message):
                yield from _strings(item)
            elif isinstance(item, str):
                yield item


def _shown_text(node) -> Iterator[str]:
    proto = getattr(node, "proto", None)
    if isinstance(proto, Message):
        yield from _strings(proto)
    for child in getattr(node, "children", {}).values():
        yield from _shown_text(child)


# The team's workspace folder, which a clone does not have. Spelt in two parts so that this
# guard is not itself a file that cites it.
_WORKSPACE = "shared" + "/"


def _problems(text: str) -> list[str]:
    found = []
    # The page sdlab started from, or a random seed ("seed 0"): neither means anything to a reader.
    if "seed" in text.lower():
        found.append("says 'seed'")
    without_urls = _URL.sub("", text)
    if _WORKSPACE in without_urls or "/work/" in without_urls:
        found.append("points outside the repository")
    for path in _PATH.findall(without_urls):
        if not (ROOT / path).exists():
            found.append(f"names {path!r}, which is not in the repository")
    return found


def _assert_clean(texts: Iterator[str], where: str) -> None:
    bad = [(problem, text[:160]) for text in texts for problem in _problems(text)]
    assert not bad, f"{where}: {len(bad)} shown strings with internal wording: {bad[:5]}"


def test_the_checks_catch_what_they_should():
    assert _problems("Teaching (the seed's budgets)") == ["says 'seed'"]
    assert _problems("simulated 4 x 50,000 requests, seed 0.") == ["says 'seed'"]
    assert _problems(f'Reference: {_WORKSPACE}SEED_MODEL.md, "Formulas"')
    assert _problems("see docs/teaching_model.md") == []
    assert _problems("see docs/no_such_file.md"), "a missing repository path passed"
    assert _problems("https://github.com/yangzichao/lab/blob/main/README.md") == []


@pytest.mark.parametrize(
    "query",
    [{}, {"model": "teaching", "rate_rps": "500000", "replicas": "2"}],
    ids=["defaults", "teaching-past-capacity"],
)
def test_no_internal_wording_on_any_page(query):
    app = open_app(query)
    assert_no_exception(app)
    _assert_clean(_shown_text(app._tree), f"Lab {query}")
    for page in (HEATMAPS_PAGE, TRADEOFFS_PAGE):
        app.switch_page(page).run()
        assert_no_exception(app)
        _assert_clean(_shown_text(app._tree), f"{page} {query}")


_ONE_PLURAL = re.compile(r"(?<![\d.,])1 (models|replicas|GPUs|workers)\b")


def test_one_of_a_thing_is_singular_on_every_page():
    """'1 models', '1 replicas': a count of one reads in the singular (one model, one replica,
    a rate low enough that one replica meets the target)."""
    app = open_app({"models_hosted": "1", "replicas": "1", "rate_rps": "10"})
    pages = (LAB_PAGE, "app_pages/residency.py", "app_pages/timeline.py", ADVICE_PAGE)
    for page in pages:
        app.switch_page(page).run()
        assert_no_exception(app)
        shown = [
            m.group(0) + ": " + t[:120]
            for t in _shown_text(app._tree)
            for m in _ONE_PLURAL.finditer(t)
        ]
        assert not shown, f"{page}: {shown[:3]}"


_SCIENTIFIC = re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[-+]?\d+\b")
_PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app_pages").glob("*.py"))


def _tables_text(app) -> Iterator[str]:
    for element in (*app.dataframe, *app.table):
        frame = element.value
        for column in frame.columns:
            yield from (f"{column}: {cell}" for cell in frame[column].astype(str))


@pytest.mark.parametrize(
    "query",
    # The defaults; 99.9% of capacity off the rate ladder, seconds over target; far past it.
    [
        {},
        {"dynamic_batching": "0", "p99_target_ms": "5", "rate_rps": "1598.4"},
        {"model": "teaching", "rate_rps": "500000", "replicas": "2"},
        {"llm.rate_rps": "5000"},
    ],
    ids=["defaults", "near-capacity", "past-capacity", "llm-past-capacity"],
)
@pytest.mark.parametrize("page", _PAGES)
def test_no_number_is_written_in_scientific_notation(page, query):
    """'6.54e-10 ms' (a mean wait at light load), '1.6e+03 req/s' (a rate between the ladder's
    steps) are no numbers a person reads: text and tables on every page (a figure's own JSON is
    not shown text)."""
    app = open_app(query, page=page)
    assert_no_exception(app)
    texts = [t for t in _shown_text(app._tree) if not t.lstrip().startswith("{")]
    shown = [t[:160] for t in (*texts, *_tables_text(app)) if _SCIENTIFIC.search(t)]
    assert not shown, f"{page}: {shown[:3]}"


def test_tiny_times_and_changes_read_as_words():
    from sdlab_ui.text import ms_delta_text, ms_text

    assert ms_text(6.54e-10) == "<0.01 ms"
    assert ms_text(0.0) == "0 ms"
    assert ms_text(12.34) == "12.3 ms"
    assert ms_delta_text(0.0) == "same"
    assert ms_delta_text(3e-9) == "under 0.01 ms more"
    assert ms_delta_text(-3e-9) == "under 0.01 ms less"
    assert ms_delta_text(-12.34) == "-12.3 ms"
    assert ms_delta_text(1234.0) == "+1.23 s"
    assert ms_delta_text(math.inf) == "—"


# Every chart with a log axis, and how to make the app draw it.
_LOG_AXIS_CHARTS = {
    HEATMAPS_PAGE: ({}, {"heatmap.main", "heatmap.multiples", "heatmap.policies"}),
    "app_pages/llm.py": (
        {"llm.heatmap_y": "tensor_parallel"},
        {"llm.heatmap.ttft", "llm.heatmap.tpot"},
    ),
    "app_pages/tail.py": ({}, {"tail.heatmap"}),
    "app_pages/overload.py": ({}, {"overload.priorities.chart"}),
    ADVICE_PAGE: ({}, {"advice.frontier"}),
    "app_pages/timeline.py": ({}, {"timeline.chart", "canary.chart"}),
}


@pytest.mark.parametrize("page", list(_LOG_AXIS_CHARTS))
def test_every_log_axis_labels_its_ticks_in_full(page):
    """Plotly's own ticks on a log axis label 20 and 50 as a bare small "2" and "5"."""
    query, expected = _LOG_AXIS_CHARTS[page]
    app = open_app(query)
    app.session_state["heatmap.multiples_open"] = True
    app.session_state["heatmap.policies_open"] = True
    app.switch_page(page).run()
    assert_no_exception(app)
    logged = set()
    for chart in app.get("plotly_chart"):
        for name, axis in json.loads(chart.proto.spec)["layout"].items():
            if name.startswith(("xaxis", "yaxis")) and axis.get("type") == "log":
                logged.add(chart.key)
                assert axis.get("tickformat") or axis.get("ticktext"), (
                    f"{chart.key} {name}: ticks labelled by plotly's bare digits"
                )
    assert logged >= expected, f"{page} drew log axes in {logged}, expected {expected}"


def test_no_internal_wording_in_the_walkthrough():
    from sdlab_model.scenarios import WALKTHROUGH

    app = open_app()
    app.button(key="lab.walk.start").click().run()
    for index in range(len(WALKTHROUGH)):
        reveal = [b for b in app.button if b.key == "lab.walk.reveal"]
        if reveal:
            reveal[0].click().run()
        assert_no_exception(app)
        _assert_clean(_shown_text(app._tree), f"walkthrough step {index + 1}")
        if index < len(WALKTHROUGH) - 1:
            app.button(key="lab.walk.next").click().run()


def _shown_constants(path: Path) -> Iterator[str]:
    """Every string constant of a module except docstrings (f-string parts included)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in docstrings:
            yield node.value


@pytest.mark.parametrize("module", SHOWN_TEXT_MODULES)
def test_no_internal_wording_in_shown_text_modules(module):
    _assert_clean(_shown_constants(ROOT / module), module)


def test_no_file_points_outside_the_repository():
    """The repository is self-contained: no file cites the workspace it was written in."""
    import subprocess

    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    this_file = str(Path(__file__).relative_to(ROOT))
    offenders = [
        name
        for name in tracked
        if name != this_file
        and name.endswith((".py", ".md", ".toml", ".txt", ".cfg", ".yml", ".yaml"))
        and re.search(
            re.escape(_WORKSPACE) + r"(SEED_MODEL|STYLE)|SEED_MODEL\.md", (ROOT / name).read_text()
        )
    ]
    assert not offenders, f"files citing a workspace file not in the repository: {offenders}"


def test_a_change_in_dollars_has_its_sign_and_its_dollar_sign_in_front():
    from sdlab_ui.text import usd_delta_text

    assert usd_delta_text(1.434, "/h") == "+$1.43/h"
    assert usd_delta_text(-0.5) == "-$0.50"
    assert usd_delta_text(-1234.0, "/h") == "-$1,234/h"
    assert usd_delta_text(0.004) == "under $0.01 more"
    assert usd_delta_text(-0.004, "/h") == "under $0.01/h less"
    assert usd_delta_text(0.0) == "same"
    assert usd_delta_text(math.nan) == ""
