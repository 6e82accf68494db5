"""AppTest of the priority section (``sdlab_ui.overload.priorities.render_priorities``) on its
own: it draws the model's per-class p99s, refuses shares that leave nothing for the last class,
and a third class reaches the model."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from sdlab_model.overload.priorities import PriorityClass, priority_latency, queue_from_workload
from sdlab_model.workload import Workload
from sdlab_ui.overload.priorities import CLASS_COLUMN, FIFO_COLUMN, KEY, P99_COLUMN
from sdlab_ui.text import ms_text

RATE_RPS = 1_500.0


def _section():
    from sdlab_model.workload import Workload
    from sdlab_ui.overload.priorities import render_priorities

    render_priorities(Workload(rate_rps=1_500.0, lb_policy="central_queue"))


def _open() -> AppTest:
    app = AppTest.from_function(_section, default_timeout=60).run()
    assert not app.exception, f"the section raised: {app.exception}"
    return app


def test_the_table_shows_the_models_p99_per_class():
    app = _open()
    design = Workload(rate_rps=RATE_RPS, lb_policy="central_queue")
    service_ms = design.single_request_ms
    classes = (
        PriorityClass("interactive", 0.3, round(2.0 * service_ms, 1)),
        PriorityClass("batch", 0.7, round(20.0 * service_ms, 1)),
    )
    expected = priority_latency(queue_from_workload(design, classes))
    table = app.dataframe[0].value
    shown = [text.rstrip(" *") for text in table[P99_COLUMN]]
    assert shown == [ms_text(c.p99_ms) for c in expected.classes], (
        f"table p99s {shown} are not the model's {[c.p99_ms for c in expected.classes]}"
    )
    assert set(table[FIFO_COLUMN]) == {ms_text(expected.fifo_p99_ms)}, (
        "the FIFO column should be the model's FIFO p99"
    )
    assert len(app.get("plotly_chart")) == 1, "the load chart is missing"


def test_shares_that_leave_nothing_for_the_last_class_are_refused():
    app = _open()
    app.radio(key=f"{KEY}.count").set_value(3).run()
    app.number_input(key=f"{KEY}.share.interactive").set_value(60.0).run()
    app.number_input(key=f"{KEY}.share.standard").set_value(45.0).run()
    assert not app.exception, f"the section raised: {app.exception}"
    errors = [e.value for e in app.error]
    assert any("105%" in e and "under 100%" in e and "batch" in e for e in errors), (
        f"no clear message for shares over 100%: {errors}"
    )
    assert not app.dataframe, "a table was drawn for invalid shares"


def test_a_third_class_reaches_the_model():
    app = _open()
    app.radio(key=f"{KEY}.count").set_value(3).run()
    assert not app.exception, f"the section raised: {app.exception}"
    table = app.dataframe[0].value
    assert list(table[CLASS_COLUMN]) == ["interactive", "standard", "batch"], (
        f"classes in the table: {list(table[CLASS_COLUMN])}"
    )


def _past_capacity_section():
    from sdlab_model.workload import Workload
    from sdlab_ui.overload.priorities import render_priorities

    render_priorities(Workload(rate_rps=2_000.0, lb_policy="central_queue"))


def test_past_capacity_the_top_class_is_still_served():
    app = AppTest.from_function(_past_capacity_section, default_timeout=60).run()
    assert not app.exception, f"the section raised: {app.exception}"
    table = app.dataframe[0].value
    interactive, batch = table[P99_COLUMN]
    assert "∞" not in interactive and "ms" in interactive, (
        f"interactive should be served: {interactive}"
    )
    assert batch == "unstable (∞)", f"batch should be unstable past capacity: {batch}"
    assert any("pays everything" in m.value for m in app.markdown), "no sentence on what batch pays"
