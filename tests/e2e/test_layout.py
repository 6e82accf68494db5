"""What a person sees on a laptop and a phone: legible diagram, dark theme, no sideways scroll.

Screenshots of every page at 1440 x 900 (light and dark) and 390 x 844 go to ``test-artifacts/``
(git-ignored) on every run, for a reviewer to look at; the same views are checked for elements wider
than their container. A phone is also checked with the system's own fonts in place of Streamlit's
(a fresh Debian machine draws with DejaVu until the web fonts arrive, and DejaVu is wider).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_selectors import DIAGRAM_SVG, EXCEPTION, HEADLINE_P99, IDLE_JS, PLOTLY

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
PAGES = {
    "lab": "",
    "heatmaps": "/heatmaps",
    "timeline": "/timeline",
    "advice": "/advice",
    "residency": "/residency",
    "llm": "/llm",
    "tail": "/tail",
    "overload": "/overload",
    "tradeoffs": "/tradeoffs",
}
LAPTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
MIN_DIAGRAM_TEXT_PX = 11
# The heatmap's target colour (sdlab_ui.figures.TARGET_COLOUR, #dc2626) as the browser reports it.
TARGET_RGB = "rgb(220, 38, 38)"


def _context(chromium_browser, viewport: dict, **options):
    context = chromium_browser.new_context(viewport=viewport, **options)
    context.set_default_timeout(60_000)
    return context


def _open(page, url: str, name: str) -> None:
    page.goto(url)
    # A fresh server computes a page's first numbers (the heatmap's grid) on a loaded machine.
    page.wait_for_selector(
        {"lab": DIAGRAM_SVG, "heatmaps": PLOTLY}.get(name, "h1"), timeout=180_000
    )
    page.wait_for_function(IDLE_JS)
    page.wait_for_function("() => document.fonts.status === 'loaded'")


def _luminance(rgb: str) -> float:
    red, green, blue = (int(part) for part in rgb[rgb.index("(") + 1 : -1].split(",")[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_page_follows_the_systems_colour_scheme(chromium_browser, server_url, scheme):
    context = _context(chromium_browser, LAPTOP, color_scheme=scheme)
    page = context.new_page()
    _open(page, server_url, "lab")
    background = page.evaluate(
        "() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
    )
    menu = page.locator('[data-testid="stMainMenu"]').count()
    context.close()
    if scheme == "dark":
        assert _luminance(background) < 0.25, f"a dark system gets a light page: {background}"
    else:
        assert _luminance(background) > 0.9, f"a light system gets a dark page: {background}"
    assert menu == 1, "the settings menu (theme choice) is hidden"


_DIAGRAM_JS = """([selector, p99Selector]) => {
    const svg = document.querySelector(selector);
    const texts = [...svg.querySelectorAll('text')];
    // A text's drawn size: its font size in SVG units times the SVG's scale on screen.
    const px = texts.map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
    const box = svg.getBoundingClientRect();
    const p99 = document.querySelector(p99Selector).getBoundingClientRect();
    return {smallest_text_px: Math.min(...px), texts: px.length,
            svg: [box.left, box.top, box.right, box.bottom], p99: [p99.top, p99.bottom],
            viewport: [innerWidth, innerHeight], scroll_y: scrollY};
}"""


def test_diagram_is_legible_and_beside_the_p99_without_scrolling(chromium_browser, server_url):
    context = _context(chromium_browser, LAPTOP)
    page = context.new_page()
    _open(page, server_url, "lab")
    page.wait_for_selector(HEADLINE_P99)
    measured = page.evaluate(_DIAGRAM_JS, [DIAGRAM_SVG, HEADLINE_P99])
    context.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "diagram-1440x900.json").write_text(json.dumps(measured, indent=2))
    assert measured["texts"] >= 18, f"the diagram lost its labels: {measured}"
    assert measured["smallest_text_px"] >= MIN_DIAGRAM_TEXT_PX, (
        f"the diagram's smallest text draws at {measured['smallest_text_px']:.1f} px "
        f"(< {MIN_DIAGRAM_TEXT_PX} px) at 1440x900"
    )
    left, top, right, bottom = measured["svg"]
    width, height = measured["viewport"]
    assert top >= 0 and bottom <= height, f"the diagram is not all in view at 1440x900: {measured}"
    assert right - left >= 0.6 * width, f"the diagram is not full width: {measured}"
    assert measured["p99"][0] >= 0 and measured["p99"][1] <= height, (
        f"the p99 is not in view with the diagram: {measured}"
    )


def test_scenario_card_buttons_share_a_line(chromium_browser, server_url):
    context = _context(chromium_browser, LAPTOP)
    page = context.new_page()
    _open(page, server_url, "lab")
    tops = page.evaluate(
        "() => [...document.querySelectorAll('[class*=\"st-key-lab-card-\"] button')]"
        ".map(b => b.getBoundingClientRect().top)"
    )
    context.close()
    assert len(tops) == 5, f"expected five card buttons, found {len(tops)}"
    assert max(tops) - min(tops) <= 1, f"card buttons sit at different heights: {tops}"


def test_heatmap_target_line_is_drawn_in_the_target_colour(chromium_browser, server_url):
    context = _context(chromium_browser, LAPTOP)
    page = context.new_page()
    _open(page, f"{server_url}/heatmaps", "heatmaps")
    page.wait_for_selector(f"{PLOTLY} .contourlayer path")
    strokes = page.evaluate(
        "() => [...document.querySelectorAll('.contourlayer path.contourlevel, "
        ".contourlayer g.contourlevel path')].map(p => getComputedStyle(p).stroke)"
    )
    context.close()
    assert strokes, "no target contour drawn"
    assert set(strokes) == {TARGET_RGB}, f"target contours drawn in {set(strokes)}, not red"


_OVERFLOW_JS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    return {viewport: document.documentElement.clientWidth,
            document: document.documentElement.scrollWidth,
            main: main.scrollWidth, main_client: main.clientWidth};
}"""

# Elements of the page wider than (or outside) the box that holds them, where nothing but the
# page itself would scroll them: a table or title cut off at the column's edge. Content inside a
# box that scrolls sideways on purpose (a wide diagram, a data grid, a formula) is that box's,
# and overlays (tooltips, a slider's value) are placed by Streamlit, not by the page's flow.
_TOO_WIDE_JS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const scroller = el => {
        for (let a = el.parentElement; a; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== 'visible') return a;
        }
        return null;
    };
    const holder = el => {
        let p = el.parentElement;
        while (p && getComputedStyle(p).display === 'contents') p = p.parentElement;
        return p;
    };
    const found = [];
    for (const el of main.querySelectorAll('*')) {
        if (el.closest('svg, .js-plotly-plot')) continue;
        const style = getComputedStyle(el);
        if (style.position === 'absolute' || style.position === 'fixed') continue;
        const box = el.getBoundingClientRect();
        const parent = holder(el);
        if (!parent || box.width === 0 || box.height === 0) continue;
        const room = parent.getBoundingClientRect();
        const out = box.right > room.right + 1 || box.left < room.left - 1;
        const scrolls = scroller(el);
        const text = `${el.tagName.toLowerCase()} "${(el.innerText || '').slice(0, 40)}"`;
        if (out && (scrolls === null || scrolls === main)) {
            found.push(`${text} ends at ${Math.round(box.right)} px, `
                       + `its box at ${Math.round(room.right)}`);
        }
        // A text cut short where it is drawn ("25% of capac…").
        if (['hidden', 'clip'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1
            && el.innerText) {
            found.push(`${text} is cut at ${el.clientWidth} of ${el.scrollWidth} px`);
        }
    }
    return found;
}"""

VIEWS = {
    "1440x900-light": ({"viewport": LAPTOP, "color_scheme": "light"}, False),
    "1440x900-dark": ({"viewport": LAPTOP, "color_scheme": "dark"}, False),
    "390x844": ({"viewport": PHONE, "is_mobile": True, "has_touch": True}, False),
    "390x844-system-fonts": ({"viewport": PHONE, "is_mobile": True, "has_touch": True}, True),
}
"""View name -> the browser context's options, and whether Streamlit's web fonts are withheld."""


def _withhold_text_fonts(page) -> None:
    """The page draws with the system's fonts: Streamlit's Source Sans/Serif/Code never arrive
    (its icon font does, or icons would draw as their names)."""
    page.route("**/Source*.woff2", lambda route: route.abort())


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", list(PAGES))
def test_pages_fit_their_view_and_leave_screenshots(chromium_browser, server_url, name, view):
    options, system_fonts = VIEWS[view]
    ARTIFACTS.mkdir(exist_ok=True)
    context = _context(chromium_browser, **options)
    page = context.new_page()
    if system_fonts:
        _withhold_text_fonts(page)
    _open(page, f"{server_url}{PAGES[name]}", name)
    widths = page.evaluate(_OVERFLOW_JS)
    too_wide = page.evaluate(_TOO_WIDE_JS)
    page.screenshot(path=str(ARTIFACTS / f"{name}-{view}.png"))
    errors = page.locator(EXCEPTION).count()
    context.close()
    assert errors == 0, f"{name} shows an exception at {view}"
    assert widths["document"] <= widths["viewport"], f"{name} scrolls sideways: {widths}"
    assert widths["main"] <= widths["main_client"], f"{name}'s content overflows: {widths}"
    assert not too_wide, f"{name} at {view} has elements wider than their box: {too_wide}"


def test_diagram_text_is_legible_on_a_phone(chromium_browser, server_url):
    context = _context(chromium_browser, PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    _open(page, server_url, "lab")
    page.wait_for_selector(HEADLINE_P99)
    measured = page.evaluate(_DIAGRAM_JS, [DIAGRAM_SVG, HEADLINE_P99])
    context.close()
    assert measured["texts"] >= 18, f"the diagram lost its labels: {measured}"
    assert measured["smallest_text_px"] >= MIN_DIAGRAM_TEXT_PX, (
        f"the diagram's smallest text draws at {measured['smallest_text_px']:.1f} px "
        f"(< {MIN_DIAGRAM_TEXT_PX} px) on a 390 px phone"
    )


# The room plotly had to make for the main heatmap's axes (its drawn margins) against the room the
# figure asks for: any more on the left or top and plotly drew the chart a second time to make it.
_HEATMAP_MARGINS_JS = """(selector) => {
    const chart = document.querySelector(selector);
    const drawn = chart._fullLayout._size, asked = chart.layout.margin;
    return {left: [drawn.l, asked.l], top: [drawn.t, asked.t]};
}"""


@pytest.mark.parametrize(
    ("view", "y_axis"),
    [("1440x900-light", None), ("390x844", None), ("1440x900-light", "p99 target")],
)
def test_heatmap_axes_fit_the_margins_it_asks_for(chromium_browser, server_url, view, y_axis):
    context = _context(chromium_browser, **VIEWS[view][0])
    page = context.new_page()
    _open(page, f"{server_url}/heatmaps", "heatmaps")
    if y_axis is not None:  # the widest tick labels of any input
        page.get_by_label("Up (y axis)").click()
        page.get_by_role("option", name=y_axis, exact=True).click()
        page.wait_for_function(
            "(title) => [...document.querySelectorAll('.g-ytitle')]"
            ".some(t => t.textContent.startsWith(title))",
            arg=y_axis,
        )
        page.wait_for_function(IDLE_JS)
    margins = page.evaluate(_HEATMAP_MARGINS_JS, PLOTLY)
    context.close()
    for side, (drawn, asked) in margins.items():
        assert drawn <= asked, (
            f"the heatmap's axes pushed its {side} margin to {drawn} px from {asked}"
        )


# Every other chart's drawn margins against the ones it asks for, on each side: a chart whose axes,
# legend or colour bar need more room than it asks for is drawn twice by plotly on every call.
_CHART_MARGINS_JS = """([selector, skip]) => [...document.querySelectorAll(selector)]
    .filter(chart => !chart.closest(skip))
    .map(chart => {
        const drawn = chart._fullLayout._size, asked = chart.layout.margin || {};
        const keyed = chart.closest('[class*="st-key-"]');
        return {chart: keyed ? keyed.className.match(/st-key-[\\w-]+/)[0] : 'a chart',
                sides: {left: [drawn.l, asked.l], right: [drawn.r, asked.r],
                        top: [drawn.t, asked.t], bottom: [drawn.b, asked.b]}};
    })"""


def _expander(label: str) -> str:
    return f'[data-testid="stExpander"] summary:has-text("{label}")'


# Case -> what to click first (expanders whose charts are built only when opened, a simulation
# to run) and the charts then drawn; a case is named after its page.
_CHARTS_TO_SIZE = {
    "heatmaps": (
        (_expander("Batching and GPUs at a glance"), _expander("Load-balancer policy at a glance")),
        2,
    ),
    "timeline": ((), 2),
    "advice": ((), 1),
    "llm": ((_expander("TTFT and TPOT p99 over the request rate"),), 2),
    "tail": ((), 1),
    "overload": ((), 3),
    "lab-simulated": (
        (
            '[data-testid="stCheckbox"]:has-text("Check against a simulation") label',
            _expander("Simulated latency distribution"),
        ),
        1,
    ),
    "heatmaps-verified": (('button:has-text("Verify with simulation")',), 1),
}
# The main heatmap sizes its left and top only (the test above), and so does the analytic one
# beside the error map, drawn from the same spec: their colour bars push. The Lab's hidden
# chart that loads plotly.js draws nothing.
_SKIP = ".st-key-heatmap-main, .st-key-heatmap-verify-analytic, .st-key-sdlab-plotly-preload"


@pytest.mark.parametrize("case", list(_CHARTS_TO_SIZE))
def test_charts_ask_for_the_margins_they_draw(chromium_browser, server_url, case):
    clicks, charts = _CHARTS_TO_SIZE[case]
    name = case.split("-")[0]
    context = _context(chromium_browser, LAPTOP)
    page = context.new_page()
    _open(page, f"{server_url}{PAGES[name]}", name)
    for selector in clicks:
        page.locator(selector).click()
    page.wait_for_function(
        "([selector, skip, count]) => [...document.querySelectorAll(selector)]"
        ".filter(c => !c.closest(skip) && c._fullLayout).length >= count",
        arg=[PLOTLY, _SKIP, charts],
        timeout=300_000,
    )
    page.wait_for_function(IDLE_JS)
    measured = page.evaluate(_CHART_MARGINS_JS, [PLOTLY, _SKIP])
    context.close()
    assert len(measured) == charts, f"expected {charts} charts on {case}, found {measured}"
    pushed = [
        f"{chart['chart']!r}: {side} {drawn} px, asked {asked}"
        for chart in measured
        for side, (drawn, asked) in chart["sides"].items()
        if asked is None or drawn > asked
    ]
    assert not pushed, f"charts on {case} drawn with more margin than they ask for: {pushed}"
