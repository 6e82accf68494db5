"""Links in a real Chromium: Back and Forward move through lab states; "Copy link" reopens it."""

from __future__ import annotations

import pytest
from browser_selectors import DIAGRAM_SVG, EXCEPTION, IDLE_JS, SETTLED_JS

pytestmark = pytest.mark.e2e


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector(DIAGRAM_SVG)
    page.wait_for_function(IDLE_JS)


def _replicas_shown(page) -> str:
    return page.get_by_role("slider", name="Replicas").get_attribute("aria-valuetext")


def _wait_for_replicas(page, shown: str) -> None:
    page.wait_for_function(
        """v => document.querySelector('input[type="range"][aria-label="Replicas"]')
            ?.getAttribute('aria-valuetext') === v""",
        arg=shown,
    )
    page.wait_for_function(IDLE_JS)


def test_back_and_forward_move_through_lab_states(lab_page, server_url):
    _open(lab_page, server_url)
    assert lab_page.evaluate("location.search") == "?model=queueing", "unexpected default URL"
    slider = lab_page.get_by_role("slider", name="Replicas")
    slider.focus()
    slider.press("ArrowRight")  # 2 -> 3
    lab_page.wait_for_function("() => location.search === '?replicas=3'")
    lab_page.wait_for_function(IDLE_JS)
    lab_page.wait_for_function(SETTLED_JS)  # two changes, not one run of key steps
    slider.press("ArrowRight")  # 3 -> 4
    lab_page.wait_for_function("() => location.search === '?replicas=4'")
    lab_page.wait_for_function(IDLE_JS)

    lab_page.evaluate("history.back()")
    lab_page.wait_for_function("() => location.search === '?replicas=3'")
    _wait_for_replicas(lab_page, "3")
    # The rerun that follows Back must not write the later state over the URL it went back to.
    lab_page.wait_for_timeout(1_000)
    assert lab_page.evaluate("location.search") == "?replicas=3", "Back was overwritten"
    assert _replicas_shown(lab_page) == "3", "the slider left the state Back went to"

    lab_page.evaluate("history.back()")
    lab_page.wait_for_function("() => location.search === '?model=queueing'")
    _wait_for_replicas(lab_page, "2")

    lab_page.evaluate("history.forward()")
    lab_page.wait_for_function("() => location.search === '?replicas=3'")
    _wait_for_replicas(lab_page, "3")
    assert lab_page.locator(EXCEPTION).count() == 0, "going back and forth raised an exception"


def test_back_after_a_page_switch_returns_to_the_earlier_page_and_lab(lab_page, server_url):
    _open(lab_page, f"{server_url}/?replicas=12")
    lab_page.get_by_role("link", name="Heatmaps").click()
    lab_page.wait_for_function("() => location.pathname.endsWith('/heatmaps')")
    lab_page.wait_for_function("() => location.search === '?replicas=12'")
    lab_page.wait_for_function(IDLE_JS)
    lab_page.wait_for_function(SETTLED_JS)
    slider = lab_page.get_by_role("slider", name="Replicas")
    slider.focus()
    slider.press("ArrowRight")  # 12 -> 13 (card 4's value) on the Heatmaps page
    lab_page.wait_for_function("() => location.search === '?replicas=13'")
    lab_page.wait_for_function(IDLE_JS)
    lab_page.evaluate("history.back()")
    _wait_for_replicas(lab_page, "12")
    # Back past Streamlit's own entry for the switch reaches the Lab as it was.
    for _ in range(3):
        if not lab_page.evaluate("location.pathname").endswith("/heatmaps"):
            break
        lab_page.evaluate("history.back()")
        lab_page.wait_for_timeout(1_000)
        lab_page.wait_for_function(IDLE_JS)
    assert not lab_page.evaluate("location.pathname").endswith("/heatmaps"), "Back left no page"
    lab_page.wait_for_selector(DIAGRAM_SVG)
    _wait_for_replicas(lab_page, "12")
    assert lab_page.locator(EXCEPTION).count() == 0, "Back across pages raised an exception"


def test_copy_link_puts_a_link_that_reopens_the_lab_on_the_clipboard(chromium_browser, server_url):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(60_000)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server_url)
    try:
        page = context.new_page()
        _open(page, f"{server_url}/?replicas=12&gpu=1&model=teaching")
        page.get_by_role("button", name="Copy link to this lab").click()
        page.get_by_text("Link copied.").wait_for()
        link = page.evaluate("navigator.clipboard.readText()")
        assert link.startswith(server_url), f"the clipboard holds {link!r}, not a link to the app"

        reopened = context.new_page()
        _open(reopened, link)
        assert _replicas_shown(reopened) == "12", f"{link} reopened other replicas"
        gpu = reopened.get_by_role("switch", name="GPU acceleration")
        assert gpu.is_checked(), f"{link} reopened the lab without GPUs"
        model = reopened.get_by_role("radio", name="Teaching (the original page's budgets)")
        assert model.is_checked(), f"{link} reopened another latency model"
    finally:
        context.close()


def test_pin_a_design_change_it_and_see_both_side_by_side(lab_page, server_url):
    _open(lab_page, f"{server_url}/?replicas=10")
    lab_page.get_by_role("button", name="Pin this design as A").click()
    lab_page.wait_for_function("() => location.search.includes('a=1')")
    lab_page.wait_for_function(IDLE_JS)
    slider = lab_page.get_by_role("slider", name="Replicas")
    slider.focus()
    slider.press("ArrowRight")  # B: the next replica count (12); A stays at 10
    lab_page.wait_for_function("() => location.search === '?replicas=12&a=1&a.replicas=10'")
    lab_page.wait_for_function(IDLE_JS)
    heading = lab_page.get_by_role("heading", name="Compare: pinned design A against this lab, B")
    heading.wait_for()
    # The Lab's own diagram plus one for each of A and B.
    lab_page.wait_for_function(
        "selector => document.querySelectorAll(selector).length === 3", arg=DIAGRAM_SVG
    )
    table = lab_page.locator("table", has_text="A (pinned)")
    assert table.count() == 1, "the comparison table is not on the page"
    assert lab_page.locator(EXCEPTION).count() == 0, "pinning and comparing raised an exception"
    # The link reopens both designs in a new tab.
    fresh = lab_page.context.new_page()
    _open(fresh, f"{server_url}/?replicas=12&a=1&a.replicas=10")
    fresh.get_by_role("heading", name="Compare: pinned design A against this lab, B").wait_for()
    fresh.close()
