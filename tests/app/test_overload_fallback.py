"""AppTest of the Overload page's fallback section (``sdlab_ui.overload.fallback``): it renders
with its diagram, its numbers are ``with_fallback``'s, 0 replicas is the overload result alone,
its inputs live in the URL as ``fallback.*`` and reach the model, and a bad link gives notices
and the defaults."""

from __future__ import annotations

from apptest_helpers import assert_no_exception, open_app
from streamlit.testing.v1 import AppTest

from sdlab_model.overload import OverloadPolicy, overload, with_fallback
from sdlab_model.overload.diagram import ms_text, share_text
from sdlab_model.page_params import FALLBACK_INPUTS
from sdlab_model.workload import Workload
from sdlab_ui.diagram import DIAGRAM_CLASS
from sdlab_ui.overload.fallback import INPUTS, model_of

PAGE = "app_pages/overload.py"
DEFAULTS = {spec.name: spec.default for spec in FALLBACK_INPUTS}
RATE_RPS = 12_500.0
"""The Lab's design at 1.5x its capacity (8,303 req/s): with a queue limit of 20 it sheds."""
SHOWN = ("Primary answers", "Fallback answers", "Lost")


def _section():
    from sdlab_model.overload import OverloadPolicy
    from sdlab_model.workload import Workload
    from sdlab_ui.overload.fallback import render_fallback

    render_fallback(Workload(rate_rps=12_500.0), OverloadPolicy(queue_limit=20))


def _open_section() -> AppTest:
    app = AppTest.from_function(_section, default_timeout=60).run()
    assert not app.exception, f"the section raised: {app.exception}"
    return app


def _shown(app) -> dict[str, str]:
    return {m.label: m.value for m in app.metric if m.label in SHOWN}


def _result(values: dict):
    policy = OverloadPolicy(queue_limit=20)
    return with_fallback(Workload(rate_rps=RATE_RPS), policy, model_of(values))


def _expected(values: dict) -> dict[str, str]:
    result = _result(values)
    shares = (result.primary_share, result.fallback_share, result.lost_share)
    return dict(zip(SHOWN, map(share_text, shares), strict=True))


def _diagram_text(app) -> str:
    """The diagram's text: the server's SVG (with Graphviz) or the DOT the browser draws."""
    svg = " ".join(m.value for m in app.markdown if DIAGRAM_CLASS in m.value)
    return svg + " ".join(str(g.proto) for g in app.get("graphviz_chart"))


def test_the_section_draws_the_models_numbers_its_diagram_and_chart():
    app = _open_section()
    result = _result(DEFAULTS)
    assert _shown(app) == _expected(DEFAULTS), f"shown {_shown(app)}, not the model's"
    assert result.fallback_share > 0.1, "at 1.5x capacity the default fallback should answer"
    captions = " ".join(c.value for c in app.caption)
    assert f"p99 {ms_text(result.fallback_p99_ms)}" in captions, "no fallback p99"
    assert f"p99 of every answer {ms_text(result.answered_p99_ms)}" in captions, "no answered p99"
    drawn = _diagram_text(app)
    assert "Fallback model" in drawn, "the diagram has no fallback box"
    assert share_text(result.fallback_share) in drawn, "the diagram lacks the fallback's share"
    assert len(app.get("plotly_chart")) == 1, "the goodput-with-fallback chart is missing"


def test_no_fallback_is_the_overload_result_alone():
    app = _open_section()
    app.number_input(key=INPUTS.widget + "replicas").set_value(0).run()
    assert not app.exception, f"the section raised: {app.exception}"
    alone = overload(Workload(rate_rps=RATE_RPS), OverloadPolicy(queue_limit=20))
    shown = _shown(app)
    assert shown["Fallback answers"] == share_text(0.0), f"off, yet the fallback answers: {shown}"
    assert shown["Lost"] == share_text(alone.client_failure_share), f"not overload's: {shown}"
    assert "Fallback model" not in _diagram_text(app), "a fallback box with the fallback off"
    assert not app.get("plotly_chart"), "a fallback chart with the fallback off"


def _fallback_params(app) -> dict[str, str]:
    return {k[9:]: v for k, v in app.query_params.items() if k.startswith("fallback.")}


def test_inputs_round_trip_through_the_url_and_reach_the_model():
    query = {"workers": "4", "latency_ms": "3", "queue_limit": "3"}
    app = open_app(
        {
            "rate_rps": str(RATE_RPS),
            "overload.queue_limit": "20",
            **{f"fallback.{k}": v for k, v in query.items()},
        },
        page=PAGE,
    )
    assert_no_exception(app)
    assert _fallback_params(app) == query, f"URL: {_fallback_params(app)}"
    values = {**DEFAULTS, "workers": 4, "latency_ms": 3.0, "queue_limit": 3}
    assert _shown(app) == _expected(values), f"not the model's: {_shown(app)}"
    app.number_input(key=INPUTS.widget + "workers").set_value(16).run()
    assert _fallback_params(app) == {"latency_ms": "3", "queue_limit": "3"}, (
        f"a value back at its default should leave the URL: {_fallback_params(app)}"
    )


def test_bad_fallback_links_give_notices_and_the_defaults():
    query = {"fallback.replicas": "-3", "fallback.latency_ms": "abc", "fallback.nope": "1"}
    app = open_app(query, page=PAGE)
    assert_no_exception(app)
    notices = " ".join(w.value for w in app.warning)
    for problem in ("-3", "abc", "nope"):
        assert problem in notices, f"no notice for {problem}: {notices}"
    assert _fallback_params(app) == {}, f"the bad values stayed in the URL: {query}"
    shown = {name: app.number_input(key=INPUTS.widget + name).value for name in DEFAULTS}
    assert shown == DEFAULTS, f"not the defaults: {shown}"
