"""AppTest of the Advice & cost page: the recommendation, one click to use it, levers, limits."""

from __future__ import annotations

from apptest_helpers import ADVICE_PAGE, assert_no_exception, open_app, sidebar_value

from sdlab_model.advice import advise, breaking_points, levers
from sdlab_model.workload import Workload


def test_advice_page_shows_the_models_recommendation_and_uses_it_on_click():
    query = {"rate_rps": "5000", "replicas": "10"}
    app = open_app(query, page=ADVICE_PAGE)
    assert_no_exception(app)
    workload, _ = Workload.from_strings(query)
    best = advise(workload).best
    assert best is not None, "5k req/s on CPU has a design that meets 100 ms"
    shown = {m.label: m.value for m in app.metric}
    assert shown["Design"] == f"{best.workload.replicas} × {'GPU' if best.workload.gpu else 'CPU'}"
    assert shown["Cost"] == f"${best.cost.usd_per_hour:,.2f}/h", f"cost shown {shown['Cost']}"
    table = app.dataframe[0].value
    assert list(table["change"]) == [lever.label for lever in levers(workload)], "levers differ"
    text = " ".join(m.value for m in app.markdown)
    for point in breaking_points(workload):
        assert point.text in text, f"breaking point missing: {point.text}"
    app.button(key="advice.use").click().run()
    assert_no_exception(app)
    assert sidebar_value(app, "replicas") == best.workload.replicas, "the design was not loaded"
    assert sidebar_value(app, "dynamic_batching") == best.workload.dynamic_batching


def test_advice_page_says_so_when_nothing_meets_the_target():
    # A 5 ms target for a 100 ms model: no design can meet it.
    app = open_app({"p99_target_ms": "5", "model_latency_ms": "100"}, page=ADVICE_PAGE)
    assert_no_exception(app)
    errors = " ".join(e.value for e in app.error)
    assert "No design in the search space meets" in errors, f"errors shown: {errors!r}"
