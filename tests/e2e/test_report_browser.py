"""The report downloads with one click and opens in Chromium with the network off."""

from __future__ import annotations

import pytest
from browser_selectors import DIAGRAM_SVG, IDLE_JS

from sdlab_ui.report import SECTIONS

pytestmark = pytest.mark.e2e


def test_the_html_report_opens_offline_with_every_section(chromium_browser, server_url, tmp_path):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    try:
        page = context.new_page()
        page.goto(f"{server_url}/?rate_rps=25000&gpu=1&replicas=5")
        page.wait_for_selector(DIAGRAM_SVG)
        page.wait_for_function(IDLE_JS)
        with page.expect_download() as html_download:
            page.get_by_role("button", name="Download report (HTML, opens offline)").click()
        with page.expect_download() as markdown_download:
            page.get_by_role("button", name="Download summary (Markdown)").click()
        report = tmp_path / html_download.value.suggested_filename
        html_download.value.save_as(report)
        summary = markdown_download.value.path().read_text(encoding="utf-8")
    finally:
        context.close()
    assert report.name.endswith(".html"), f"the report downloads as {report.name}"
    assert "## Inputs" in summary and "rate_rps=25000" in summary, "the Markdown summary is off"

    offline = chromium_browser.new_context(viewport={"width": 1200, "height": 900}, offline=True)
    offline.set_default_timeout(30_000)
    asked = []

    def refuse_the_network(route):
        asked.append(route.request.url)
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            route.abort()

    offline.route("**/*", refuse_the_network)
    try:
        page = offline.new_page()
        page.goto(report.as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg")
        headings = tuple(page.locator("h2").all_inner_texts())
        charts = page.locator(".js-plotly-plot .main-svg").count()
        diagram_nodes = page.locator("#recommended-architecture svg g.node").count()
    finally:
        offline.close()
    assert headings == SECTIONS, f"the report shows the sections {headings}"
    assert charts >= 2, f"only {charts} plotly charts rendered offline"
    assert diagram_nodes >= 9, f"the architecture SVG has {diagram_nodes} nodes"
    fetched = [url for url in asked if not url.startswith("file:")]
    assert not fetched, f"opening the report asked the network for {fetched}"
