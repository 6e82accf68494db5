"""The Timeline page in Chromium: it draws its charts over time and the canary section, and
raises nothing."""

from __future__ import annotations

import pytest
from browser_selectors import EXCEPTION, IDLE_JS, PLOTLY

pytestmark = pytest.mark.e2e


def test_the_timeline_page_renders_its_charts(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/timeline?rate_rps=3000&replicas=4&tl.traffic=spike")
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
        assert "tl.traffic=spike" in page.url, f"the timeline's inputs left the URL: {page.url}"
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
