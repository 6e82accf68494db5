"""Helpers for AppTest: open the app (optionally on a page, from a URL) and read what it shows."""

from __future__ import annotations

import html
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from sdlab_model.params import NUMERIC_BY_NAME, TOGGLE_BY_NAME
from sdlab_ui.lab.headline import HEADLINE_CLASS, METRIC_CLASS
from sdlab_ui.sidebar import widget_key

APP_PATH = Path(__file__).resolve().parents[2] / "app.py"
LAB_PAGE = "app_pages/lab.py"
HEATMAPS_PAGE = "app_pages/heatmaps.py"
TRADEOFFS_PAGE = "app_pages/tradeoffs.py"
ADVICE_PAGE = "app_pages/advice.py"
# The first run compiles the simulator kernel (numba) unless its disk cache is warm.
RUN_TIMEOUT_S = 180


def open_app(query: dict[str, str] | None = None, page: str | None = None) -> AppTest:
    """Run the app as a new session would, from ``query`` (the URL), then switch to ``page``."""
    app = AppTest.from_file(str(APP_PATH), default_timeout=RUN_TIMEOUT_S)
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.run()
    if page is not None:
        app.switch_page(page).run()
    return app


def sidebar_value(app: AppTest, name: str):
    """The value the sidebar widget for input ``name`` shows."""
    key = widget_key(name)
    if name in TOGGLE_BY_NAME:
        return app.toggle(key=key).value
    if NUMERIC_BY_NAME[name].scale == "log":
        return app.select_slider(key=key).value
    return app.slider(key=key).value


_HEADLINE_METRIC = re.compile(
    rf'<div class="{METRIC_CLASS}" data-label="([^"]*)">.*?'
    rf'<div class="{METRIC_CLASS}-value">([^<]*)</div>'
    rf'(?:<div class="{METRIC_CLASS}-delta (good|bad)">([^<]*)</div>)?'
)


def headline_block(app: AppTest) -> str:
    """The Lab page's headline element (its numbers, as HTML)."""
    opening = f'<div class="{HEADLINE_CLASS}">'  # after the Lab's header, in the same element
    blocks = [m.value[m.value.index(opening) :] for m in app.markdown if opening in m.value]
    assert len(blocks) == 1, f"expected one headline, found {len(blocks)}"
    return blocks[0]


def headline_metrics(app: AppTest) -> dict[str, tuple[str, str | None, str | None]]:
    """The headline's numbers: label -> (value, delta tone or None, delta text or None)."""
    return {
        html.unescape(label): (html.unescape(value), tone or None, html.unescape(delta) or None)
        for label, value, tone, delta in _HEADLINE_METRIC.findall(headline_block(app))
    }


def headline_p99(app: AppTest) -> str:
    """The Lab page's headline p99 as shown (``p99`` or ``p99 (simulated)``)."""
    shown = [v for label, (v, _, _) in headline_metrics(app).items() if label.startswith("p99")]
    assert len(shown) == 1, f"expected one headline p99, found {len(shown)}"
    return shown[0]


def shape_title(app: AppTest) -> str:
    """The recommended shape's title as the Lab page shows it (the bold line of that block)."""
    block = next(
        (m.value for m in app.markdown if m.value.startswith("#### Recommended shape")), ""
    )
    assert block, "the Lab page shows no recommended shape"
    return block.split("**")[1]


def assert_no_exception(app: AppTest) -> None:
    assert not app.exception, f"the app raised: {[e.message for e in app.exception]}"


def forge_widget_state(widget, state_of):
    """Make ``widget`` send the widget state ``state_of(widget)`` on the next run, as a hostile
    client speaking Streamlit's protocol could (a browser only sends values the widget offers)."""

    class Forged(type(widget)):
        @property
        def _widget_state(self):
            return state_of(self)

        def _get_files_to_register(self):
            return []  # nothing was uploaded: the file id is made up

    widget.__class__ = Forged
    return widget
