"""The sidebar's summary line says what the Lab's headline says."""

from __future__ import annotations

from apptest_helpers import assert_no_exception, headline_p99, open_app

from sdlab_ui.lab.headline import SUMMARY_CLASS

_MARKER = f'<span class="{SUMMARY_CLASS}"></span>'


def _summary(app) -> str:
    """The summary line's Markdown, after the empty marker the stylesheet finds it by."""
    lines = [m.value for m in app.sidebar.markdown if "p99" in m.value]
    assert len(lines) == 1, f"expected one summary line in the sidebar, found {lines}"
    assert lines[0].startswith(_MARKER), f"the summary line has no marker: {lines[0]!r}"
    return lines[0].removeprefix(_MARKER)


def test_summary_quotes_the_headline_p99_and_the_target():
    app = open_app({"rate_rps": "3000"})
    assert_no_exception(app)
    line = _summary(app)
    assert f"{headline_p99(app)}**" in line, f"summary {line!r} differs from the headline p99"
    assert "of 100 ms" in line and "load" in line and "capacity" in line, f"summary {line!r}"
    assert line.startswith(":green["), f"a p99 under its target is not green: {line!r}"


def test_summary_says_over_capacity_when_unstable():
    app = open_app({"rate_rps": "500000", "replicas": "1"})
    assert_no_exception(app)
    line = _summary(app)
    assert line.startswith(":red[**p99") and "∞" in line and "over capacity" in line, (
        f"an unstable lab's summary reads {line!r}"
    )
