"""The summary line (p99 against the target, load, capacity) stays in view while sliders move."""

from __future__ import annotations

import pytest
from browser_selectors import DIAGRAM_SVG, IDLE_JS

pytestmark = pytest.mark.e2e

SUMMARY = '[data-testid="stElementContainer"]:has(.sdlab-summary)'
# Where the summary is on screen, and whether it is what a person sees there (not covered).
SUMMARY_IN_VIEW_JS = """selector => {
    const summary = document.querySelector(selector);
    if (!summary) return null;
    const box = summary.getBoundingClientRect();
    const onTop = document.elementFromPoint(box.left + 10, (box.top + box.bottom) / 2);
    return {top: box.top, bottom: box.bottom, height: innerHeight, text: summary.innerText,
            seen: !!onTop && summary.contains(onTop)};
}"""
SCROLL_TO_END_JS = """selector => {
    const box = document.querySelector(selector);
    box.scrollTop = box.scrollHeight;
    return box.scrollTop;
}"""


def _open(context, url: str):
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(DIAGRAM_SVG)
    page.wait_for_function(IDLE_JS)
    return page


def _assert_in_view(page, where: str) -> None:
    shown = page.evaluate(SUMMARY_IN_VIEW_JS, SUMMARY)
    assert shown is not None, f"{where}: the page has no summary line"
    assert shown["text"].startswith("p99"), f"{where}: the summary reads {shown['text']!r}"
    assert shown["top"] >= 0 and shown["bottom"] <= shown["height"], (
        f"{where}: the summary is out of view ({shown['top']:.0f}–{shown['bottom']:.0f} px "
        f"of {shown['height']} px)"
    )
    assert shown["seen"], f"{where}: something covers the summary"


def _show_advanced_inputs(page) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_text("Advanced inputs", exact=True).click()
    page.get_by_role("slider", name="Arrival burstiness (CV)").wait_for()


def test_summary_stays_in_view_on_a_laptop(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    try:
        page = _open(context, f"{server_url}/?rate_rps=3000")
        _show_advanced_inputs(page)  # the sidebar grows past the screen
        page.wait_for_function(IDLE_JS)
        main_scrolled = page.evaluate(SCROLL_TO_END_JS, '[data-testid="stMain"]')
        sidebar_scrolled = page.evaluate(SCROLL_TO_END_JS, '[data-testid="stSidebarContent"]')
        assert main_scrolled > 1_000 and sidebar_scrolled > 200, (
            f"test setup: main scrolled {main_scrolled} px, sidebar {sidebar_scrolled} px"
        )
        page.wait_for_timeout(300)
        _assert_in_view(page, "laptop, scrolled to the end")
        # It follows the sliders: the last advanced slider moves, the line changes.
        before = page.locator(SUMMARY).inner_text()
        slider = page.get_by_role("slider", name="Arrival burstiness (CV)")
        slider.focus()
        slider.press("End")
        page.wait_for_function(
            "([s, b]) => document.querySelector(s)?.innerText !== b", arg=[SUMMARY, before]
        )
        page.wait_for_function(IDLE_JS)
        _assert_in_view(page, "laptop, after moving the last slider")
    finally:
        context.close()


def test_summary_stays_in_view_in_a_phones_sidebar(chromium_browser, server_url):
    context = chromium_browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    context.set_default_timeout(60_000)
    try:
        page = _open(context, f"{server_url}/?rate_rps=3000")
        page.locator('[data-testid="stExpandSidebarButton"]').click()
        _show_advanced_inputs(page)
        page.wait_for_function(IDLE_JS)
        scrolled = page.evaluate(SCROLL_TO_END_JS, '[data-testid="stSidebarContent"]')
        assert scrolled > 500, f"test setup: the drawer scrolled only {scrolled} px"
        page.wait_for_timeout(300)
        _assert_in_view(page, "phone, sidebar open and scrolled to the end")
    finally:
        context.close()
