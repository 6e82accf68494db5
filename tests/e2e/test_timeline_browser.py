"""The Timeline page in Chromium: it draws its charts over time and raises nothing."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

PLOTLY = '[data-testid="stPlotlyChart"] .js-plotly-plot'
EXCEPTION = '[data-testid="stException"]'


def test_the_timeline_page_renders_its_charts(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/timeline?rate_rps=3000&replicas=4&tl.traffic=spike")
        page.wait_for_selector(PLOTLY)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
        # Four panels: each is a plotly subplot with its own y axis.
        axes = page.locator(f"{PLOTLY} .cartesianlayer .subplot").count()
        assert axes == 4, f"the timeline chart has {axes} panels, not 4"
        lines = page.locator(f"{PLOTLY} .scatterlayer .trace").count()
        assert lines >= 7, f"only {lines} lines drawn (offered, capacity, replicas, p99, backlog)"
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
        assert "tl.traffic=spike" in page.url, f"the timeline's inputs left the URL: {page.url}"
    finally:
        context.close()
