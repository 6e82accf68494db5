"""The app in a real Chromium: it draws, answers clicks and keys, and never shows a traceback."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from browser_selectors import DIAGRAM_SVG, EXCEPTION, HEADLINE_P99, IDLE_JS, PLOTLY

from sdlab_model import SCENARIOS, evaluate

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# Every run writes the screenshot to the (git-ignored) test-artifacts folder; with
# SDLAB_UPDATE_SCREENSHOT=1 it replaces the README's picture instead, so a plain test run
# leaves the working tree clean.
SCREENSHOT = (
    ROOT / "docs" / "screenshot.png"
    if os.environ.get("SDLAB_UPDATE_SCREENSHOT") == "1"
    else ROOT / "test-artifacts" / "screenshot.png"
)


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(DIAGRAM_SVG if "/heatmaps" not in url else PLOTLY)
    _wait_until_idle(page)


def _wait_until_idle(page) -> None:
    """Streamlit shows a status widget while a run is in progress; wait for it to go."""
    page.wait_for_function(IDLE_JS)


_HEADLINE_P99_JS = f"""() => document.querySelector('{HEADLINE_P99} .sdlab-metric-value')
    ?.innerText ?? null"""
_SHAPE_TITLE_JS = """() => {
    const block = [...document.querySelectorAll('[data-testid="stMarkdown"]')]
        .find(m => m.innerText.startsWith('Recommended shape'));
    return block?.querySelector('strong')?.innerText ?? null;
}"""


def _headline_p99(page) -> str:
    return page.evaluate(_HEADLINE_P99_JS)


def _shape_title(page) -> str:
    return page.evaluate(_SHAPE_TITLE_JS)


def test_lab_draws_the_diagram_and_writes_the_screenshot(lab_page, server_url):
    _open(lab_page, server_url)
    assert lab_page.locator(DIAGRAM_SVG).locator("g.node").count() >= 9, "diagram has no nodes"
    assert lab_page.locator(EXCEPTION).count() == 0, "the Lab page shows an exception"
    SCREENSHOT.parent.mkdir(exist_ok=True)
    lab_page.set_viewport_size({"width": 1440, "height": 1250})
    lab_page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000, "the screenshot is suspiciously small"


def test_heatmap_draws(lab_page, server_url):
    _open(lab_page, f"{server_url}/heatmaps")
    lab_page.wait_for_selector(f"{PLOTLY} .heatmaplayer, {PLOTLY} g.hm")
    assert lab_page.locator(PLOTLY).count() == 1, "the 2 x 2 views should wait to be opened"
    lab_page.get_by_text("Batching and GPUs at a glance").click()
    lab_page.wait_for_function(f"() => document.querySelectorAll('{PLOTLY}').length >= 2")
    assert lab_page.locator(EXCEPTION).count() == 0, "the Heatmaps page shows an exception"


def test_clicking_a_heatmap_cell_loads_it(lab_page, server_url):
    _open(lab_page, f"{server_url}/heatmaps")
    lab_page.wait_for_selector(f"{PLOTLY} .heatmaplayer, {PLOTLY} g.hm")
    _wait_until_idle(lab_page)
    plot_area = lab_page.locator(f"{PLOTLY} .nsewdrag").first
    box = plot_area.bounding_box()
    # Upper right of the plot: a high rate and many replicas, far from the default 200 req/s x 2.
    x, y = box["x"] + 0.8 * box["width"], box["y"] + 0.2 * box["height"]
    # The cells' click layer draws no marker per cell (marker.maxdisplayed): its hover and its
    # selection come from the data, so read the cell under the pointer from its hover label.
    lab_page.mouse.move(x, y)
    label = lab_page.locator(f"{PLOTLY} .hoverlayer .hovertext").first
    label.wait_for()
    hover = label.text_content()
    rate, replicas = _HOVER_RATE.search(hover), _HOVER_REPLICAS.search(hover)
    assert rate and replicas and "p99" in hover, f"the cell's hover reads {hover!r}"
    # The URL names only inputs that differ from their defaults: a loaded cell adds the rate.
    assert "rate_rps=" not in lab_page.evaluate("location.search"), "the lab is not the default"
    lab_page.mouse.click(x, y)
    # Under load a rerun can take seconds; the context's default timeout bounds the wait.
    lab_page.wait_for_function("() => location.search.includes('rate_rps=')")
    query = lab_page.evaluate("Object.fromEntries(new URLSearchParams(location.search))")
    loaded = (float(query["rate_rps"]), int(query["replicas"]))
    expected = (float(rate.group(1).replace(",", "")), int(replicas.group(1)))
    assert loaded == pytest.approx(expected, rel=0.01), f"hovered {expected}, loaded {loaded}"
    assert lab_page.locator(EXCEPTION).count() == 0, "clicking a cell raised an exception"


_HOVER_RATE = re.compile(r"rate ([0-9,.]+) req/s")
_HOVER_REPLICAS = re.compile(r"replicas ([0-9]+)")


def test_card_3_changes_the_recommended_shape(lab_page, server_url):
    _open(lab_page, server_url)
    before = _shape_title(lab_page)
    card = SCENARIOS[2]
    expected = evaluate(card.workload(), "queueing").stage.title
    assert before != expected, f"default settings already show {expected!r}; the test is void"
    lab_page.locator(f".st-key-lab-card-{card.id} button").click()
    lab_page.wait_for_function(f"t => ({_SHAPE_TITLE_JS})() === t", arg=expected)
    assert lab_page.locator(EXCEPTION).count() == 0, "clicking card 3 raised an exception"


def test_a_run_of_slider_key_steps_is_one_back_entry(lab_page, server_url):
    _open(lab_page, server_url)
    entries = lab_page.evaluate("history.length")
    slider = lab_page.get_by_role("slider", name="Request rate (req/s)")
    slider.focus()
    for _ in range(9):  # each step its own run and URL, the next one pressed when it is written
        search = lab_page.evaluate("location.search")
        slider.press("ArrowRight")
        lab_page.wait_for_function("s => location.search !== s", arg=search)
    _wait_until_idle(lab_page)
    added = lab_page.evaluate("history.length") - entries
    assert added == 1, f"nine key steps on a slider added {added} Back entries, not one"
    lab_page.go_back()
    lab_page.wait_for_function("() => !location.search.includes('rate_rps=')")


def test_moving_the_rate_slider_changes_the_p99(lab_page, server_url):
    _open(lab_page, server_url)
    before = _headline_p99(lab_page)
    slider = lab_page.get_by_role("slider", name="Request rate (req/s)")
    slider.focus()
    for _ in range(4):
        slider.press("ArrowRight")
    slider.press("End")
    # Each key press is a rerun; the URL names the last one once it has run.
    lab_page.wait_for_function("() => location.search.includes('rate_rps=500000')")
    lab_page.wait_for_function(f"b => ({_HEADLINE_P99_JS})() !== b", arg=before)
    _wait_until_idle(lab_page)
    after = _headline_p99(lab_page)
    assert after != before, f"the p99 stayed {before} after moving the rate to 500k req/s"
    assert lab_page.locator(EXCEPTION).count() == 0, "moving the slider raised an exception"


def test_no_exception_on_any_page(lab_page, server_url):
    for path in ("", "/heatmaps", "/tradeoffs"):
        lab_page.goto(f"{server_url}{path}?rate_rps=junk&gpu=1")
        lab_page.wait_for_selector('[data-testid="stAlert"]')
        _wait_until_idle(lab_page)
        assert lab_page.locator(EXCEPTION).count() == 0, f"{path or '/'} shows an exception"


def test_page_switch_keeps_the_state_and_the_link(lab_page, server_url):
    _open(lab_page, f"{server_url}/?replicas=12&model=teaching")
    lab_page.get_by_role("link", name="Heatmaps").click()
    lab_page.wait_for_selector(PLOTLY)
    lab_page.wait_for_function("() => location.pathname.endsWith('/heatmaps')")
    lab_page.wait_for_function("() => location.search.includes('replicas=12')")
    slider = lab_page.get_by_role("slider", name="Replicas")
    assert slider.get_attribute("aria-valuetext") == "12", "replicas lost on the Heatmaps page"
    assert "model=teaching" in lab_page.url, f"the link lost the model: {lab_page.url}"
