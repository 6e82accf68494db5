"""AppTest of the priority section (``sdlab_ui.overload.priorities.render_priorities``) on its
own: it draws the model's per-class p99s, refuses shares that leave nothing for the last class,
and a third class reaches the model."""

from __future__ import annotations

import pytest
from apptest_helpers import assert_no_exception, open_app
from streamlit.testing.v1 import AppTest

from sdlab_model.overload.priorities import PriorityClass, priority_latency, queue_from_workload
from sdlab_model.workload import Workload
from sdlab_ui.overload.priorities import CLASS_COLUMN, FIFO_COLUMN, INPUTS, P99_COLUMN
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
        PriorityClass("interactive", 0.3, 2.0 * service_ms),
        PriorityClass("batch", 0.7, 20.0 * service_ms),
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
    app.number_input(key=INPUTS.widget + "classes").set_value(3).run()
    app.number_input(key=INPUTS.widget + "interactive_share_pct").set_value(60.0).run()
    app.number_input(key=INPUTS.widget + "standard_share_pct").set_value(45.0).run()
    assert not app.exception, f"the section raised: {app.exception}"
    errors = [e.value for e in app.error]
    assert any("105%" in e and "under 100%" in e and "batch" in e for e in errors), (
        f"no clear message for shares over 100%: {errors}"
    )
    assert not app.dataframe, "a table was drawn for invalid shares"


def test_a_third_class_reaches_the_model():
    app = _open()
    app.number_input(key=INPUTS.widget + "classes").set_value(3).run()
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


def _light_load_section():
    from sdlab_model.workload import Workload
    from sdlab_ui.overload.priorities import render_priorities

    render_priorities(Workload(rate_rps=100.0, lb_policy="central_queue"))


def test_at_light_load_the_section_says_priority_changes_nothing():
    app = AppTest.from_function(_light_load_section, default_timeout=60).run()
    assert not app.exception, f"the section raised: {app.exception}"
    expected = priority_latency(
        queue_from_workload(
            Workload(rate_rps=100.0, lb_policy="central_queue"),
            (
                PriorityClass("interactive", 0.3, 40.0),
                PriorityClass("batch", 0.7, 400.0),
            ),
        )
    )
    assert all(c.p99_ms == expected.fifo_p99_ms for c in expected.classes), "not a light load"
    table = app.dataframe[0].value
    assert set(table["vs FIFO"]) == {"same"}, f"changes shown: {list(table['vs FIFO'])}"
    said = [m.value for m in app.markdown if "strict priority" in m.value.lower()]
    assert said == [
        f"At this load strict priority changes no class's p99: each is FIFO's "
        f"{ms_text(expected.fifo_p99_ms)}."
    ], f"the sentence: {said}"


def _priority_params(app) -> dict[str, str]:
    return {k[9:]: v for k, v in app.query_params.items() if k.startswith("priority.")}


def test_the_classes_round_trip_through_the_url_and_reach_the_model():
    query = {"classes": "3", "interactive_share_pct": "20", "batch_target_x": "50"}
    app = open_app({f"priority.{k}": v for k, v in query.items()}, page="app_pages/overload.py")
    assert_no_exception(app)
    assert _priority_params(app) == query, f"URL: {_priority_params(app)}"
    design = Workload()
    service_ms = design.single_request_ms
    classes = (
        PriorityClass("interactive", 0.2, 2.0 * service_ms),
        PriorityClass("standard", 0.3, 5.0 * service_ms),
        PriorityClass("batch", 0.5, 50.0 * service_ms),
    )
    expected = priority_latency(queue_from_workload(design, classes))
    table = app.dataframe[-1].value
    assert list(table[CLASS_COLUMN]) == ["interactive", "standard", "batch"], "not three classes"
    shown = [text.rstrip(" *") for text in table[P99_COLUMN]]
    assert shown == [ms_text(c.p99_ms) for c in expected.classes], f"not the model's: {shown}"
    app.number_input(key=INPUTS.widget + "classes").set_value(2).run()
    assert _priority_params(app) == {"interactive_share_pct": "20", "batch_target_x": "50"}


@pytest.mark.parametrize(
    "query",
    [{"priority.classes": "7"}, {"priority.interactive_share_pct": "abc"},
     {"priority.classes": "3", "priority.interactive_share_pct": "80",
      "priority.standard_share_pct": "30"}],
)  # fmt: skip
def test_bad_class_links_give_a_notice_and_the_defaults(query):
    app = open_app(query, page="app_pages/overload.py")
    assert_no_exception(app)
    notices = " ".join(w.value for w in app.warning)
    assert notices, f"{query}: no notice"
    assert _priority_params(app) == {}, f"the bad values stayed in the URL: {query}"
    table = app.dataframe[-1].value
    assert list(table[CLASS_COLUMN]) == ["interactive", "batch"], "not the default classes"
