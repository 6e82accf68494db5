"""AppTest of the canary panel: it renders, shows the model's numbers, and refuses bad inputs."""

from __future__ import annotations

from apptest_helpers import assert_no_exception
from streamlit.testing.v1 import AppTest

from sdlab_model.timeline.canary import CanaryPlan, plan_rollout
from sdlab_model.workload import Workload
from sdlab_ui.timeline.canary import first_step_metric, rollout_chart, rollout_table, step_table

QUERY_RATE_RPS = 3000.0
QUERY_REPLICAS = 10


def _panel():
    from sdlab_model.workload import Workload
    from sdlab_ui.timeline import canary

    canary.render(Workload(rate_rps=3000.0, replicas=10))


def _open() -> AppTest:
    app = AppTest.from_function(_panel, default_timeout=60)
    app.run()
    assert_no_exception(app)
    return app


def _shown_tables(app: AppTest, rollout) -> None:
    """The page's rollout table and each step's judges table are the model's."""
    shown = app.dataframe[0].value.to_dict("records")
    assert shown == rollout_table(rollout), "the rollout table differs from the model's"
    assert [tab.label for tab in app.tabs] == [
        f"Step {i + 1}: {step.share * 100:g}%" for i, step in enumerate(rollout.steps)
    ], "one tab per step"
    for index, step in enumerate(rollout.steps):
        table = app.dataframe[index + 1].value.to_dict("records")
        assert table == step_table(rollout.plan, step), f"step {index + 1}'s judges differ"


def test_the_panel_shows_the_models_rollout_and_each_steps_judges():
    app = _open()
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    rollout = plan_rollout(workload, CanaryPlan())
    _shown_tables(app, rollout)
    label, value = first_step_metric(rollout)
    metrics = {metric.label: metric.value for metric in app.metric}
    assert metrics[label] == value, metrics
    judges = {row["judge"] for row in step_table(rollout.plan, rollout.steps[0])}
    assert len(judges) == 5, f"four judges and the uncorrected test beside them: {judges}"
    captions = " ".join(c.value for c in app.caption)
    assert "At 100%: no baseline" in captions, "the 100% step's missing judges unexplained"


def test_shadow_shared_and_a_same_size_baseline_change_the_numbers_as_the_model_does():
    app = _open()
    app.radio(key="canary.placement").set_value("shared")
    app.radio(key="canary.baseline").set_value("same-size")
    app.number_input(key="canary.shadow_pct").set_value(20.0)
    app.run()
    assert_no_exception(app)
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    plan = CanaryPlan(placement="shared", baseline="same-size", shadow_share=0.2)
    _shown_tables(app, plan_rollout(workload, plan))


BAD_INPUTS = [
    ("text_input", "canary.steps", "0, 5, 25", "step_shares[0]=0.0 is outside"),
    ("text_input", "canary.steps", "5, 1", "must increase"),
    ("text_input", "canary.steps", "one, two", "is not a number"),
    ("number_input", "canary.regressed_error_pct", 100.0, "regressed_error_rate=1.0 is outside"),
    ("number_input", "canary.regressed_error_pct", 0.05, "must be above baseline_error_rate"),
    ("number_input", "canary.p99_regression_pct", -10.0, "p99_regression=-0.1 is outside"),
]


def test_bad_inputs_give_a_clear_message_and_no_numbers():
    app = _open()
    for kind, key, value, message in BAD_INPUTS:
        widget = getattr(app, kind)(key=key)
        good = widget.value
        widget.set_value(value)
        app.run()
        assert_no_exception(app)
        errors = " ".join(error.value for error in app.error).replace("\\", "")
        assert message in errors, f"{key}={value!r}: errors shown {errors!r}"
        assert not app.metric, f"{key}={value!r}: numbers shown for a plan that is not valid"
        getattr(app, kind)(key=key).set_value(good)
        app.run()
        assert not app.error and app.metric, f"{key}: restoring {good!r} did not recover"


def test_no_time_is_longer_than_its_step_and_near_duplicate_notes_say_their_step():
    app = _open()
    app.number_input(key="canary.interval_s").set_value(15.0).run()
    assert_no_exception(app)
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    rollout = plan_rollout(workload, CanaryPlan(interval_s=15.0))
    _shown_tables(app, rollout)
    for step in rollout.steps:
        for verdicts in step.verdicts:
            for outcome in verdicts.outcomes:
                for seconds in (outcome.mean_s, outcome.p90_s):
                    assert seconds is None or seconds <= rollout.plan.window_s + 1e-9, (
                        f"{outcome.judge} at {step.share:.0%}: {seconds} s in a 30-min step"
                    )
    notes = [c.value for c in app.caption if "canary's p99 is" in c.value]
    assert notes and all(note.startswith("At ") for note in notes), f"unlabelled: {notes}"
    assert len(set(notes)) == len(notes), f"a repeated note: {notes}"


def test_the_share_axis_labels_its_log_ticks_as_percentages():
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    figure = rollout_chart(plan_rollout(workload, CanaryPlan()))
    axis = figure.layout.yaxis
    assert axis.type == "log", "the share spans 1% to 100%: a log axis"
    labels = dict(zip(axis.tickvals, axis.ticktext, strict=True))
    assert labels[20] == "20%" and labels[50] == "50%", f"20% and 50% read {labels}"
    assert figure.layout.xaxis.title.text and axis.title.text, "unlabelled axes"
    assert all(trace.name for trace in figure.data), "an unnamed trace"


def test_steps_text_over_the_limit_is_refused_before_parsing_and_not_repeated():
    import time

    from sdlab_ui.timeline.canary import STEPS_MAX_CHARS, parse_steps

    flood = "1," * 2_450_000  # 4.9 MB, the audit's input
    started = time.perf_counter()
    try:
        parse_steps(flood)
    except ValueError as error:
        message = str(error)
    else:
        raise AssertionError("4.9 MB of steps was accepted")
    seconds = time.perf_counter() - started
    assert seconds < 0.05, f"refusing 4.9 MB of steps took {seconds:.2f} s"
    assert len(message) < 200 and f"at most {STEPS_MAX_CHARS} characters" in message, message
    eleven = ", ".join(str(n) for n in range(1, 12))
    try:
        parse_steps(eleven)
    except ValueError as error:
        assert "at most 10 shares, got 11" in str(error), str(error)
    else:
        raise AssertionError("11 steps were accepted")


def test_a_forged_steps_value_past_the_field_limit_gets_a_short_escaped_message():
    app = _open()
    app.text_input(key="canary.steps").set_value("1," * 2_450_000).run()  # 4.9 MB
    assert_no_exception(app)
    errors = [error.value for error in app.error]
    assert errors and all(len(text) < 300 for text in errors), f"long messages: {errors!r}"[:500]
    assert not app.metric, "no numbers for a refused plan"


def test_markdown_typed_into_steps_is_shown_literally():
    app = _open()
    app.text_input(key="canary.steps").set_value("[x](https://e.test), 5").run()
    assert_no_exception(app)
    shown = " ".join(error.value for error in app.error)
    assert "\\[x\\]\\(https" in shown, f"the excerpt must be escaped for Markdown: {shown!r}"
    assert "[x](https" not in shown, f"a link reaches the page: {shown!r}"
