"""What a hostile link does in a real browser: its text shows, and nothing in it becomes a link."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from browser_selectors import DIAGRAM_SVG

pytestmark = pytest.mark.e2e

HOSTILE_KEYS = ["https://evil.example/login", "www.evil.example/x", "mailto:victim@evil.example"]


def test_urls_in_query_parameter_notices_are_not_links(lab_page, server_url):
    lab_page.goto(f"{server_url}/?{urlencode({key: '1' for key in HOSTILE_KEYS})}")
    lab_page.wait_for_selector(DIAGRAM_SVG)
    alerts = lab_page.locator('[data-testid="stAlert"]')
    shown = " ".join(alerts.all_inner_texts()).replace("\u2060", "")
    for key in HOSTILE_KEYS:
        assert key in shown, f"the notice should quote {key!r} as text; shown: {shown!r}"
    links = alerts.locator("a").evaluate_all("anchors => anchors.map(a => a.href)")
    assert not links, f"a notice made live links of URL text: {links}"
