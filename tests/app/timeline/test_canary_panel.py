"""AppTest of the canary panel: it renders, shows the model's numbers, and refuses bad inputs."""

from __future__ import annotations

from apptest_helpers import assert_no_exception
from streamlit.testing.v1 import AppTest

from sdlab_model.timeline.canary import CanaryPlan, plan_rollout
from sdlab_model.workload import Workload
from sdlab_ui.timeline.canary import detection_metric_text, rollout_table

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


def test_the_panel_shows_the_models_rollout():
    app = _open()
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    rollout = plan_rollout(workload, CanaryPlan())
    shown = app.dataframe[0].value
    expected = rollout_table(rollout)
    assert list(shown["p99 new"]) == [row["p99 new"] for row in expected], "p99 differs"
    assert list(shown["detect error-rate rise"]) == [
        row["detect error-rate rise"] for row in expected
    ], "detection times differ"
    first = rollout.steps[0].error_detection
    metrics = {metric.label: metric.value for metric in app.metric}
    assert metrics["Error-rate rise detected at 1%"] == detection_metric_text(first), metrics
    assert "no baseline left" in " ".join(c.value for c in app.caption), "100% step unexplained"


def test_shadow_and_shared_change_the_numbers_as_the_model_does():
    app = _open()
    app.radio(key="canary.placement").set_value("shared")
    app.number_input(key="canary.shadow_pct").set_value(20.0)
    app.run()
    assert_no_exception(app)
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    rollout = plan_rollout(workload, CanaryPlan(placement="shared", shadow_share=0.2))
    shown = app.dataframe[0].value
    expected = rollout_table(rollout)
    for column in ("p99 new", "extra replicas", "detect p99 regression"):
        assert list(shown[column]) == [row[column] for row in expected], f"{column} differs"


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


def test_a_time_shorter_than_one_metric_interval_reads_within_one_interval():
    app = _open()
    workload = Workload(rate_rps=QUERY_RATE_RPS, replicas=QUERY_REPLICAS)
    rollout = plan_rollout(workload, CanaryPlan())
    fast = [
        step.latency_detection.seconds
        for step in rollout.steps
        if step.latency_detection.seconds is not None
    ]
    assert min(fast) < 60.0, "the default rollout has a detection under one 60 s interval"
    shown = list(app.dataframe[0].value["detect p99 regression"])
    assert any(text.startswith("within one metric interval (≤ 60 s") for text in shown), shown
    app.number_input(key="canary.interval_s").set_value(1.0).run()
    assert_no_exception(app)
    shown = list(app.dataframe[0].value["detect p99 regression"])
    expected = [row["detect p99 regression"] for row in rollout_table(rollout, 1.0)]
    assert shown == expected, f"at 1 s intervals the table shows {shown}, not {expected}"
    below = [s for s in fast if s < 1.0]
    within = sum(text.startswith("within one metric interval") for text in shown)
    assert within == len(below), f"{within} rows say 'within', {len(below)} times are under 1 s"


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
