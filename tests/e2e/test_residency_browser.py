"""The Models and memory page in a real Chromium: the placements table and the recommendation."""

from __future__ import annotations

import pytest
from browser_selectors import IDLE_JS

pytestmark = pytest.mark.e2e

QUERY = (
    "gpu=1&rate_rps=1600&replicas=8&models_hosted=40&model_latency_ms=40&batch_window_ms=8"
    "&model_size_gb=1&load_overhead_ms=20"
)


def test_models_and_memory_page_renders_its_placements(lab_page, server_url):
    lab_page.goto(f"{server_url}/residency?{QUERY}")
    lab_page.wait_for_selector('[data-testid="stDataFrame"]')
    lab_page.wait_for_function(IDLE_JS)
    assert lab_page.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"
    text = lab_page.inner_text("body")
    assert "Models and memory" in text, "the page title is missing"
    assert "Recommended:" in text, "the recommendation is not drawn"
    assert "is a load time" in text, "the load-time warning is not drawn"
    assert "Simulated where the model is approximate" in text, "no simulated p99 where unsure"
    box = lab_page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    assert box is not None and box["height"] > 80, f"the placements table is not drawn: {box}"
