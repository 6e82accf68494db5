"""AppTest of the Overload page: its headline is ``overload``'s at the sidebar's design, its
chart is ``goodput_curve``'s, its inputs live in the URL as ``overload.*`` and reach the model,
and bad links give notices and the defaults."""

from __future__ import annotations

import importlib.util
import json
import random
import sys

import pytest
from apptest_helpers import APP_PATH, assert_no_exception, open_app

from sdlab_model.overload import OverloadPolicy, check_design, goodput_curve, overload
from sdlab_model.overload.goodput import VARIANTS
from sdlab_model.page_params import BURST_INPUTS, OVERLOAD_INPUTS
from sdlab_model.workload import Workload
from sdlab_ui.overload import burst, checks
from sdlab_ui.overload.controls import WIDGET
from sdlab_ui.overload.fields import build_policy, default_values
from sdlab_ui.overload.sections import CHART_KEY, share_text
from sdlab_ui.text import ms_text, rate_text

PAGE = "app_pages/overload.py"
CHANGED = {"queue_limit": "40", "deadline_ms": "120", "max_retries": "3"}


def _open(query: dict[str, str] | None = None):
    app = open_app(query or {}, page=PAGE)
    assert_no_exception(app)
    return app


HEADLINE = (
    "Offered load (× capacity)",
    "Served p99",
    "Goodput",
    "Rejected",
    "Timed out",
    "Late",
)
"""The headline's metrics (the page's later sections have metrics of their own)."""


def _metrics(app) -> dict[str, str]:
    return {m.label: m.value for m in app.metric if m.label in HEADLINE}


def _expected(workload: Workload, policy: OverloadPolicy) -> dict[str, str]:
    """The headline as it should read, every number a field of ``overload``'s result."""
    result = overload(workload, policy)
    return {
        "Offered load (× capacity)": f"{result.offered_multiple:.2f}×",
        "Rejected": share_text(result.rejected_share),
        "Timed out": share_text(result.timed_out_share),
        "Late": share_text(result.late_share),
        "Served p99": ms_text(result.served_p99_ms),
        "Goodput": rate_text(result.goodput_rps),
    }


def _page_params(app) -> dict[str, str]:
    return {k[9:]: v for k, v in app.query_params.items() if k.startswith("overload.")}


def _policy(query: dict[str, str]) -> OverloadPolicy:
    values = default_values() | {k: float(v) for k, v in query.items()}
    policy, problem = build_policy(values)
    assert problem is None, problem
    return policy


def test_the_page_shows_the_models_headline_and_curve_for_the_sidebars_design():
    app = _open({"rate_rps": "12000"})
    workload = Workload(rate_rps=12000.0)
    assert any(t.value.startswith("Overload") for t in app.title), "not the overload page"
    assert _metrics(app) == _expected(workload, OverloadPolicy()), "not the model's headline"
    chart = next(c for c in app.get("plotly_chart") if c.key == CHART_KEY)
    traces = json.loads(chart.proto.spec)["data"]
    curve = goodput_curve(workload, OverloadPolicy())
    for trace, name in zip(traces, VARIANTS, strict=False):
        assert trace["name"] == name, f"trace {trace['name']} where {name} was expected"
        assert trace["y"] == pytest.approx(list(curve.goodput_rps(name))), f"{name}: not the curve"
    assert traces[len(VARIANTS)]["name"] == "your settings", "the chosen policy is not drawn"


def test_settings_round_trip_through_the_url_and_reach_the_model():
    app = _open({**{f"overload.{k}": v for k, v in CHANGED.items()}, "rate_rps": "12000"})
    assert _page_params(app) == CHANGED, f"URL: {_page_params(app)}"
    for name, text in CHANGED.items():
        assert app.number_input(key=WIDGET + name).value == float(text), name
    expected = _expected(Workload(rate_rps=12000.0), _policy(CHANGED))
    assert _metrics(app) == expected, "the headline is not the model's for these settings"
    assert expected != _expected(Workload(rate_rps=12000.0), OverloadPolicy()), "no effect"


def test_a_widget_change_goes_into_the_url_and_the_headline():
    app = _open({"rate_rps": "12000"})
    app.number_input(key=WIDGET + "queue_limit").set_value(64).run()
    assert_no_exception(app)
    assert _page_params(app) == {"queue_limit": "64"}, f"URL: {_page_params(app)}"
    expected = _expected(Workload(rate_rps=12000.0), OverloadPolicy(queue_limit=64))
    assert _metrics(app) == expected, "the headline did not follow the widget"


@pytest.mark.parametrize("value", ["abc", "-5", "1e999", "<b>x</b>"])
def test_bad_url_values_give_notices_and_the_defaults(value):
    app = _open({f"overload.{spec.name}": value for spec in OVERLOAD_INPUTS})
    notices = " ".join(w.value for w in app.warning)
    assert "kept the default" in notices, f"overload.*={value!r}: no notice: {notices}"
    widgets = {
        spec.name: app.number_input(key=WIDGET + spec.name).value for spec in OVERLOAD_INPUTS
    }
    assert widgets == default_values(), f"overload.*={value!r}: not the defaults"
    assert _page_params(app) == {}, f"the bad values stayed in the URL: {_page_params(app)}"


def _load_test_script():
    path = APP_PATH.parent / "scripts" / "load_test.py"
    spec = importlib.util.spec_from_file_location("load_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_the_load_tests_overload_attacker_gets_the_inputs_it_asks_for_and_both_buttons():
    # Guards the pages mix's Overload attacker: an input the page turned down would make it cheap.
    load_test = _load_test_script()
    query = load_test.hostile_overload_query(random.Random(0))
    app = _open(query)
    notices = " ".join(w.value for w in app.warning)
    assert "kept the default" not in notices, f"the page turned an input down: {notices}"
    sections = (("overload", OVERLOAD_INPUTS, WIDGET), ("burst", BURST_INPUTS, burst.INPUTS.widget))
    for prefix, specs, widget in sections:
        for spec in specs:
            asked = float(query[f"{prefix}.{spec.name}"])
            shown = app.number_input(key=widget + spec.name).value
            assert shown == pytest.approx(asked), f"{prefix}.{spec.name}: {shown}, not {asked}"
    buttons = {button.key for button in app.button}
    for _, key in load_test.OVERLOAD_PRESSES:
        assert key in buttons, f"no {key} on the page for the attacker to press"


def test_past_capacity_without_shedding_says_unstable():
    app = _open({"rate_rps": "20000"})
    assert _metrics(app)["Served p99"] == "unstable (∞)", _metrics(app)
    assert any("Unstable (∞)" in e.value for e in app.error), "no word on why it is unstable"


def test_a_deadline_shorter_than_the_service_says_why_and_the_page_still_draws():
    app = _open({"overload.deadline_ms": "5", "rate_rps": "12000"})
    assert any("shorter than one request's service" in w.value for w in app.warning), "no word"
    assert _metrics(app)["Goodput"] == "0 req/s", _metrics(app)


def test_full_batches_over_the_target_say_why_goodput_is_zero_past_capacity():
    app = _open()  # the Lab's default: batches of 32 take 123 ms against a 100 ms target
    captions = " ".join(c.value for c in app.caption)
    assert "a full batch takes 123 ms, over the p99 target of 100 ms" in captions, captions
    unbatched = _open({"dynamic_batching": "false"})
    assert "full batch" not in " ".join(c.value for c in unbatched.caption), "said unbatched"


def test_the_simulation_check_shows_check_designs_comparison():
    query = {"overload.queue_limit": "40", "dynamic_batching": "false", "rate_rps": "2400"}
    app = _open(query)
    before = len(app.table)  # the goodput table
    app.button(key=checks.SIMULATE_KEY).click().run()
    assert_no_exception(app)
    assert len(app.table) == before + 1, "no comparison after the button"
    workload = Workload(dynamic_batching=False, rate_rps=2400.0)
    row = check_design(workload, OverloadPolicy(queue_limit=40), seed=checks.SIMULATION_SEED)
    table = app.table[-1].value
    assert list(table["Analytic"]) == [
        share_text(row.analytic.rejected_share + row.analytic.timed_out_share),
        ms_text(row.analytic.served_p99_ms),
        rate_text(row.analytic.goodput_rps),
    ], "not check_design's analytic numbers"
    assert table["Simulated"].iloc[1] == ms_text(row.simulated["served_p99_ms"].estimate)
    assert list(table["Error"]) == [f"{e:.1%}" for e in row.errors.values()], "not its errors"
    said = " ".join(m.value for m in app.markdown)
    assert "Within" in said or "Beyond" in said, f"no verdict: {said}"


def test_where_the_queue_model_and_the_labs_judgement_part_the_page_says_both():
    from sdlab_model.assessment import judge

    app = _open({})  # the default design batches: this page's queue model is approximate there
    judged = judge(Workload()).p99_ms
    served = overload(Workload(), OverloadPolicy()).served_p99_ms
    assert abs(served / judged - 1.0) > 0.05, "the case no longer parts; pick another"
    captions = " ".join(c.value for c in app.caption)
    assert f"judges this design's p99 at {ms_text(judged)}" in captions, captions
    assert ms_text(served) in captions, captions
    unbatched = _open({"dynamic_batching": "false", "rate_rps": "300"})
    assert "judges this design's p99" not in " ".join(c.value for c in unbatched.caption)
