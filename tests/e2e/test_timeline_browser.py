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
        page.goto(f"{server_url}/timeline?rate_rps=300&replicas=4&tl.duration_s=120")
        page.get_by_text("Canary rollout: who serves what").wait_for()
        page.wait_for_function(IDLE_JS)
        before = len(asked)
        page.get_by_role("button", name="Simulate this timeline").click()
        page.get_by_text("Minutes over the target").wait_for()
        steps = page.get_by_role("textbox", name="Steps (% of live traffic)")
        steps.fill("3, 30, 100")
        steps.press("Enter")
        page.get_by_text("Error-rate rise detected at 3%").wait_for()
        page.wait_for_function(IDLE_JS)
        pressed = asked[before:]
        assert len(pressed) == 2 and all(pressed), (
            f'the press and the new steps asked for {pressed} ("" is a whole-page run)'
        )
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
    finally:
        context.close()
