"""AppTest of the Tail at scale page's tied-requests table: its cells are ``judge_tail``'s
``tied`` outcome (one copy, hedged, tied), the tie delay lives in the URL as
``tail.tie_delay_ms`` and reaches the model, and a bad value gives a notice and the default."""

from __future__ import annotations

import pytest
from apptest_helpers import assert_no_exception, open_app

from sdlab_model.tail import TailInputs, judge_tail
from sdlab_model.tail.tied import PAPER_TIE_DELAY_MS
from sdlab_ui.tail import sections
from sdlab_ui.tail.controls import WIDGET

TAIL_PAGE = "app_pages/tail.py"


def _open(query: dict[str, str]):
    app = open_app(query, page=TAIL_PAGE)
    assert_no_exception(app)
    return app


def _table(app):
    assert len(app.dataframe) == 1, f"the page's one dataframe is the tied table: {app.dataframe}"
    return app.dataframe[0].value


@pytest.mark.parametrize("delay", [None, "0.2"])
def test_the_tied_table_is_the_models_outcome(delay):
    query = {"tail.base_utilization": "0.7"} | ({"tail.tie_delay_ms": delay} if delay else {})
    app = _open(query)
    inputs = TailInputs(
        base_utilization=0.7, tie_delay_ms=float(delay) if delay else PAPER_TIE_DELAY_MS
    )
    assert app.number_input(key=WIDGET + "tie_delay_ms").value == inputs.tie_delay_ms
    assert app.query_params.get("tail.tie_delay_ms") == delay, "the tie delay is not in the URL"
    expected = sections.tied_table(judge_tail(inputs))
    shown = _table(app)
    assert list(shown.index) == list(expected.index), f"rows: {list(shown.index)}"
    assert shown.equals(expected), f"not judge_tail's tied outcome:\n{shown}\n{expected}"
    tied = judge_tail(inputs).tied
    said = " ".join(m.value for m in app.markdown)
    assert f"{tied.reduction(0.999):.2f}×" in said, f"no tied factor in {said!r}"


def test_a_bad_tie_delay_gives_a_notice_and_the_default():
    app = _open({"tail.tie_delay_ms": "-3"})
    assert any("kept the default" in w.value for w in app.warning), "no notice"
    assert app.number_input(key=WIDGET + "tie_delay_ms").value == PAPER_TIE_DELAY_MS
