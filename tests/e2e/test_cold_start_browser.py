"""A cold server (numba's cache empty, as after a deploy) draws the Lab while its kernels
compile, says so, and drops that line by itself once they are compiled."""

from __future__ import annotations

import pytest
from browser_selectors import COMPILING_NOTICE, EXCEPTION, HEADLINE_P99, LAB_TITLE_JS

pytestmark = pytest.mark.e2e

COMPILE_TIMEOUT_MS = 600_000
"""Compiling every kernel is tens of seconds of one core, minutes on a loaded machine."""
P99_VALUE = f"{HEADLINE_P99} .sdlab-metric-value"


def test_a_cold_server_draws_the_lab_before_its_kernels_are_compiled(
    chromium_browser, cold_server_url
):
    context = chromium_browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(120_000)
    page = context.new_page()
    try:
        page.goto(cold_server_url)
        page.wait_for_function(LAB_TITLE_JS)
        assert page.locator(COMPILING_NOTICE).count() == 1, (
            "the Lab's title came only once the kernels were compiled"
        )
        page.wait_for_selector(P99_VALUE)
        p99 = page.locator(P99_VALUE).inner_text()
        page.wait_for_selector(COMPILING_NOTICE, state="detached", timeout=COMPILE_TIMEOUT_MS)
        page.wait_for_selector(P99_VALUE)
        assert page.locator(P99_VALUE).inner_text() == p99, "the compiled model gave another p99"
        assert page.locator(EXCEPTION).count() == 0, "the cold Lab shows an exception"
    finally:
        context.close()
