"""The LLM serving page in Chromium: a scenario card changes the headline, the URL and the
serving diagram, and the TTFT and TPOT heatmaps, opened from their expander, draw with their
target lines; a CSV of measured lengths, uploaded, moves the headline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_selectors import DIAGRAM_SVG, EXCEPTION, IDLE_JS, PLOTLY

from sdlab_ui.llm.cards import CARDS
from sdlab_ui.llm.heatmaps import LABEL as HEATMAPS_LABEL
from sdlab_ui.llm.lengths import LABEL as LENGTHS_LABEL
from sdlab_ui.llm.lengths import UPLOAD_KEY
from sdlab_ui.llm.sections import HEADLINE_KEY

pytestmark = pytest.mark.e2e

TTFT_VALUE = f'.st-key-{HEADLINE_KEY} [data-testid="stMetricValue"]'
"""The headline's first metric: TTFT p99."""
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
LONG_PROMPTS = b"prompt_tokens,output_tokens\n8000,200\n7000,150\n9000,250\n"


def test_a_card_changes_the_headline_and_the_heatmaps_draw(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 1800})
    context.set_default_timeout(120_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/llm")
        page.wait_for_selector(TTFT_VALUE)
        page.wait_for_function(IDLE_JS)
        before = page.locator(TTFT_VALUE).first.inner_text()
        card = next(index for index, card in enumerate(CARDS) if card.key == "rag")
        page.get_by_role("button", name="Load this scenario").nth(card).click()
        page.wait_for_function(
            f"""() => {{
                const value = document.querySelector({json.dumps(TTFT_VALUE)});
                return value && value.innerText !== {json.dumps(before)};
            }}"""
        )
        page.wait_for_function(IDLE_JS)
        after = page.locator(TTFT_VALUE).first.inner_text()
        assert after != before, f"the headline stayed at {before}"
        assert "llm.prompt_tokens_mean=8000" in page.url, f"the card is not in the URL: {page.url}"
        # The diagram follows the card: its streamed-back box has the headline's TTFT p99.
        page.wait_for_function(
            f"""() => {{
                const svg = document.querySelector({json.dumps(DIAGRAM_SVG)});
                return svg && svg.textContent.includes({json.dumps(f"TTFT p99 {after}")});
            }}"""
        )
        diagram = page.locator(DIAGRAM_SVG).first
        ARTIFACTS.mkdir(exist_ok=True)
        diagram.screenshot(path=str(ARTIFACTS / "llm_diagram.png"))
        overflow = page.evaluate("() => document.documentElement.scrollWidth - innerWidth")
        assert overflow <= 0, f"the page scrolls sideways by {overflow} px"
        assert page.locator(PLOTLY).count() == 0, "heatmaps drawn before their expander opened"
        page.get_by_text(HEATMAPS_LABEL).click()
        page.wait_for_function(f"() => document.querySelectorAll({json.dumps(PLOTLY)}).length >= 2")
        charts = page.locator(PLOTLY)
        assert charts.count() == 2, f"{charts.count()} charts: TTFT and TPOT heatmaps expected"
        for index in range(2):
            chart = charts.nth(index)
            assert chart.locator(".heatmaplayer .hm").count() >= 1, f"heatmap {index} not drawn"
            assert chart.locator(".contourlayer path").count() >= 1, f"no target line {index}"
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
    finally:
        context.close()


def test_an_uploaded_csv_of_lengths_moves_the_headline(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 1800})
    context.set_default_timeout(120_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server_url}/llm")
        page.wait_for_selector(TTFT_VALUE)
        page.wait_for_function(IDLE_JS)
        before = page.locator(TTFT_VALUE).first.inner_text()
        page.get_by_text(LENGTHS_LABEL).click()
        page.locator(f".st-key-{UPLOAD_KEY.replace('.', '-')} input[type=file]").set_input_files(
            files=[{"name": "lengths.csv", "mimeType": "text/csv", "buffer": LONG_PROMPTS}]
        )
        page.get_by_text("Lengths from lengths.csv").wait_for()
        page.wait_for_function(IDLE_JS)
        after = page.locator(TTFT_VALUE).first.inner_text()
        assert after != before, f"the headline stayed at {before} with 8,000-token prompts"
        assert page.locator(EXCEPTION).count() == 0, "the page shows an exception"
        assert not errors, f"the browser reported errors: {errors}"
    finally:
        context.close()
