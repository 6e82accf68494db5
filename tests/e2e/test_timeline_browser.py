"""The Timeline page in Chromium: it draws its charts over time and the canary section, and
raises nothing; its defaults show the autoscaler at work (with a screenshot in
``test-artifacts/``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_selectors import EXCEPTION, IDLE_JS, PLOTLY

pytestmark = pytest.mark.e2e

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
COMPARISON_START = "Against a fixed fleet of"
"""How the page's comparison with the fixed fleet begins (``FixedFleetComparison.sentence``)."""
_DOM_TEXT_JS = """(start) => ({
    story: [...document.querySelectorAll('[data-testid="stMarkdown"]')]
        .map(m => m.innerText).find(t => t.startsWith('Decisions:')) ?? null,
    comparison: [...document.querySelectorAll('[data-testid="stMarkdown"]')]
        .map(m => m.innerText).find(t => t.startsWith(start)) ?? null,
    metrics: [...document.querySelectorAll('[data-testid="stMetric"]')].map(m => [
        m.querySelector('[data-testid="stMetricLabel"]').innerText.trim(),
        m.querySelector('[data-testid="stMetricValue"]').innerText.trim()]),
})"""


def test_the_default_timeline_scales_and_says_what_it_bought(chromium_browser, server_url):
    """Must-show 3 of issue 25: the Timeline's defaults, as a visitor first sees them."""
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 2400})
    context.set_default_timeout(120_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/timeline")
        page.get_by_text(COMPARISON_START).wait_for()
        page.wait_for_selector(PLOTLY)
        page.wait_for_function(IDLE_JS)
        page.wait_for_function("() => document.fonts.status === 'loaded'")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "timeline-default-1440x2400.png"))
        shown = page.evaluate(_DOM_TEXT_JS, COMPARISON_START)
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
    finally:
        context.close()
    story, comparison = shown["story"], shown["comparison"]
    assert story, "no line says what the autoscaler decided (did the fleet stay put?)"
    start = int(re.match(r"Decisions: (\d+) →", story).group(1))
    counts = [int(n) for n in re.findall(r"(\d+) at \d+ s", story)]
    assert counts and max(counts) > start, f"the replicas never rose from {start}: {story}"
    assert counts[-1] < max(counts), f"the replicas never came back down: {story}"
    assert comparison, "the page does not say what the autoscaler bought against the fixed fleet"
    over = [value for label, value in shown["metrics"] if label == "Minutes over target"]
    costs = [value for label, value in shown["metrics"] if label == "Cost"]
    assert len(over) == len(costs) == 2, f"the totals side by side: {shown['metrics']}"
    (autoscaled_over, minutes), (fixed_over, _) = (value.split(" of ") for value in over)
    said = f"{autoscaled_over} minute"
    assert f"{costs[0]} against {costs[1]}" in comparison, f"costs {costs} not in: {comparison}"
    assert said in comparison and f"of {minutes} over" in comparison, comparison
    assert f"fixed fleet's {fixed_over}" in comparison, f"{fixed_over} not in: {comparison}"


def test_the_timeline_page_renders_its_charts(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/timeline?rate_rps=3000&replicas=4&tl.traffic=step")
        page.wait_for_selector(PLOTLY)
        page.wait_for_function(IDLE_JS)
        # Four panels: each is a plotly subplot with its own y axis (the first chart; the
        # canary's share over time is the second).
        timeline = page.locator(PLOTLY).nth(0)
        axes = timeline.locator(".cartesianlayer .subplot").count()
        assert axes == 4, f"the timeline chart has {axes} panels, not 4"
        lines = timeline.locator(".scatterlayer .trace").count()
        assert lines >= 7, f"only {lines} lines drawn (offered, capacity, replicas, p99, backlog)"
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
        assert "tl.traffic=step" in page.url, f"the timeline's inputs left the URL: {page.url}"
    finally:
        context.close()


def test_the_timeline_page_renders_both_charts_and_the_canary_section(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/timeline?rate_rps=3000&replicas=4")
        page.get_by_text("Canary rollout: who serves what").wait_for()
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')"
            ".length >= 2"
        )
        page.wait_for_function(IDLE_JS)
        charts = page.locator(PLOTLY)
        assert charts.count() == 2, f"{charts.count()} charts: the timeline's and the canary's"
        timeline_panels = charts.nth(0).locator(".cartesianlayer .subplot").count()
        assert timeline_panels == 4, f"the timeline chart has {timeline_panels} panels, not 4"
        canary_lines = charts.nth(1).locator(".scatterlayer .trace").count()
        assert canary_lines >= 1, "the canary chart draws no share over time"
        table = page.locator('[data-testid="stDataFrame"]')
        assert table.count() >= 1, "the canary's per-step table is missing"
        assert page.get_by_text("metric interval").count() >= 1, "no metric-interval note"
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
    finally:
        context.close()


def _reruns_asked(page) -> list[str]:
    """Each rerun the page asks the server for, as it is asked: the fragment's id, or "" for a
    whole-page run (read from the BackMsgs on the page's websocket)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    asked: list[str] = []

    def on_frame(payload) -> None:
        if isinstance(payload, bytes):
            message = BackMsg()
            message.ParseFromString(payload)
            if message.WhichOneof("type") == "rerun_script":
                asked.append(message.rerun_script.fragment_id)

    page.on("websocket", lambda socket: socket.on("framesent", on_frame))
    return asked


def test_the_check_and_the_canary_rerun_as_sections_in_a_browser(chromium_browser, server_url):
    """ "Simulate this timeline" and the canary's Steps are fragments: in Chromium each asks the
    server to rerun its own section, not the whole page, and shows its new result."""
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    asked = _reruns_asked(page)
    try:
        # The 3x step these presses were timed on, short enough for the check to be quick.
        page.goto(
            f"{server_url}/timeline?rate_rps=300&replicas=4&tl.traffic=step&tl.factor=3"
            "&tl.duration_s=120"
        )
        page.get_by_text("Canary rollout: who serves what").wait_for()
        page.wait_for_function(IDLE_JS)
        before = len(asked)
        page.get_by_role("button", name="Simulate this timeline").click()
        page.get_by_text("Minutes over the target").wait_for()
        steps = page.get_by_role("textbox", name="Steps (% of live traffic)")
        steps.fill("3, 30, 100")
        steps.press("Enter")
        page.get_by_text("Sequential judge, errors 0.1% → 0.2% at 3%").wait_for()
        page.wait_for_function(IDLE_JS)
        pressed = asked[before:]
        assert len(pressed) == 2 and all(pressed), (
            f'the press and the new steps asked for {pressed} ("" is a whole-page run)'
        )
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
    finally:
        context.close()
