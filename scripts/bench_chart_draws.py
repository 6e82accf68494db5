#!/usr/bin/env python3
"""What one plotly call costs each chart of the app, in Chromium, for one or more running servers.

    python3 scripts/bench_chart_draws.py URL [URL ...] [--width 1440] [--rounds 3]

For each server (e.g. ``streamlit run app.py`` of two checkouts, side by side), every page with
charts is opened at ``--width`` px with its chart sections opened; each chart's data and layout
(the layout as Streamlit's theme left it) are then drawn afresh with ``Plotly.newPlot`` in a blank
page, five times, and the median is kept. A chart whose axes, legend or colour bar need more
room than its margins give is drawn twice by that one call (plotly widens the margin and draws
again), so this is where a figure's margins show. The servers are measured in turn, ``--rounds``
times, and each chart's median over the rounds is printed per server.

Chromium at /usr/bin/chromium (``.ci/run`` installs it), launched as the browser tests launch it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import plotly
from playwright.sync_api import sync_playwright

# The selectors the browser tests use.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from browser_selectors import IDLE_JS, PLOTLY

PAGES = {
    "heatmaps": ("Batching and GPUs at a glance", "Load-balancer policy at a glance"),
    "timeline": (),
    "advice": (),
    "llm": ("TTFT and TPOT p99 over the request rate",),
    "tail": (),
    "overload": (),
}
"""Page path -> the expanders to open first (their charts are built only when opened)."""

CHARTS_JS = """(selector) => [...document.querySelectorAll(selector)]
    .filter(chart => chart._fullLayout)
    .map(chart => {
        const keyed = chart.closest('[class*="st-key-"]');
        return [keyed ? keyed.className.match(/st-key-[\\w-]+/)[0] : 'chart',
                JSON.stringify({data: chart.data, layout: chart.layout,
                                width: chart._fullLayout.width, height: chart._fullLayout.height})];
    })"""
DRAW_JS = """async (spec) => {
    const chart = JSON.parse(spec), target = document.getElementById('chart');
    const layout = {...chart.layout, width: chart.width, height: chart.height};
    const times = [];
    for (let i = 0; i < 5; i++) {
        Plotly.purge(target);
        const started = performance.now();
        await Plotly.newPlot(target, chart.data, layout);
        times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return times[2];
}"""


def _chart_specs(browser, url: str, width: int) -> list[tuple[str, str]]:
    """(name, spec) of every chart on every page of the server at ``url``."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    specs = []
    for path, expanders in PAGES.items():
        page.goto(f"{url.rstrip('/')}/{path}")
        page.wait_for_selector("h1", timeout=180_000)
        page.wait_for_function(IDLE_JS, timeout=180_000)
        for label in expanders:
            page.locator('[data-testid="stExpander"] summary', has_text=label).click()
        page.wait_for_function(IDLE_JS, timeout=180_000)
        page.wait_for_timeout(2_000)  # the opened sections' charts mount after the run ends
        specs += [(f"{path}: {name}", spec) for name, spec in page.evaluate(CHARTS_JS, PLOTLY)]
    page.close()
    return specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("urls", nargs="+", help="servers to measure, e.g. http://localhost:8501")
    parser.add_argument("--width", type=int, default=1440, help="browser width in px")
    parser.add_argument("--rounds", type=int, default=3, help="times each server is measured")
    args = parser.parse_args()
    plotly_js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()
    medians: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        blank = browser.new_page(viewport={"width": args.width, "height": 900})
        blank.set_content("<div id=chart></div>")
        blank.add_script_tag(content=plotly_js)
        for _ in range(args.rounds):
            for url in args.urls:
                started = time.monotonic()
                for name, spec in _chart_specs(browser, url, args.width):
                    medians[name][url].append(blank.evaluate(DRAW_JS, spec))
                print(f"measured {url} in {time.monotonic() - started:.0f} s", flush=True)
        browser.close()
    print(f"\nOne Plotly.newPlot per chart at {args.width} px, ms (median over the rounds):")
    print("chart".ljust(40) + "".join(url[-28:].rjust(30) for url in args.urls))
    for name, by_url in medians.items():
        cells = "".join(
            f"{statistics.median(by_url[url]):30.1f}" if by_url.get(url) else " " * 29 + "-"
            for url in args.urls
        )
        print(name[:40].ljust(40) + cells)


if __name__ == "__main__":
    main()
