"""Compare two designs: pin the lab as A, change it to B, read both side by side from one link."""

from __future__ import annotations

import math

from apptest_helpers import assert_no_exception, open_app

from sdlab_model import evaluate
from sdlab_model.advice.search import workload_cost
from sdlab_model.params import DEFAULT_MODEL
from sdlab_model.workload import Workload
from sdlab_ui.lab import compare
from sdlab_ui.sidebar import widget_key
from sdlab_ui.text import ms_delta_text, ms_text
from sdlab_ui.url import parse_pinned, parse_query_params, url_params

DESIGN_A = Workload(rate_rps=5000, replicas=10)
DESIGN_B = Workload(rate_rps=5000, replicas=10, dynamic_batching=False)


def _query(params: dict[str, str]) -> dict[str, list[str]]:
    return {key: [value] for key, value in params.items()}


def _compare_table(app) -> str:
    tables = [m.value for m in app.markdown if m.value.startswith("|  | A (pinned) | B (this lab)")]
    assert len(tables) == 1, f"expected one comparison table, found {len(tables)}"
    return tables[0]


def _row(table: str, label: str) -> list[str]:
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in the comparison table:\n{table}")


def test_both_designs_round_trip_through_the_url():
    params = url_params(DESIGN_B, DEFAULT_MODEL, pinned=DESIGN_A)
    assert params["a"] == "1", f"a pinned design is not marked in the URL: {params}"
    assert params["a.replicas"] == "10", f"design A's replicas are not in the URL: {params}"
    workload, model, notices = parse_query_params(_query(params))
    pinned, pin_notices = parse_pinned(_query(params))
    assert (workload, model, notices) == (DESIGN_B, DEFAULT_MODEL, ()), (
        f"design B did not come back from {params}: {workload}, {notices}"
    )
    assert (pinned, pin_notices) == (DESIGN_A, ()), (
        f"design A did not come back from {params}: {pinned}, {pin_notices}"
    )


def test_a_pinned_default_design_is_still_pinned():
    params = url_params(DESIGN_B, DEFAULT_MODEL, pinned=Workload())
    assert parse_pinned(_query(params)) == (Workload(), ()), f"default A lost from {params}"
    assert parse_pinned(_query(url_params(DESIGN_B, DEFAULT_MODEL))) == (None, ()), (
        "a design is pinned although none was"
    )


def test_bad_pinned_values_give_notices_about_design_a_and_a_safe_lab():
    pinned, notices = parse_pinned({"a": ["1"], "a.rate_rps": ["lots"], "a.bogus": ["1"]})
    assert pinned == Workload(), f"unreadable values should fall back to defaults: {pinned}"
    assert len(notices) == 2 and all(n.startswith("Pinned design A: ") for n in notices), notices
    pinned, notices = parse_pinned({"a.replicas": ["5"]})
    assert pinned is None and notices, "design A's settings without a=1 must not pin a design"


def test_pin_change_and_compare_in_the_app():
    app = open_app({"rate_rps": "5000", "replicas": "10"})
    assert_no_exception(app)
    assert not [m for m in app.markdown if "A (pinned)" in m.value], "compare shown unpinned"
    app.button(key=widget_key("pin")).click().run()
    app.toggle(key=widget_key("dynamic_batching")).set_value(False).run()
    assert_no_exception(app)
    assert app.query_params["a"] == "1" and app.query_params["a.replicas"] == "10", (
        f"the URL does not hold design A: {dict(app.query_params)}"
    )
    assert app.query_params["dynamic_batching"] == "0", "the URL does not hold design B"
    table = _compare_table(app)
    result_a, result_b = evaluate(DESIGN_A), evaluate(DESIGN_B)
    for result in (result_a, result_b):
        assert result.accuracy != "approximate", "this test reads the model's own p99"
    p99 = _row(table, "p99")
    assert p99[1:3] == [ms_text(result_a.p99_ms), ms_text(result_b.p99_ms)], (
        f"the p99s shown {p99[1:3]} are not the model's "
        f"({result_a.p99_ms:.3f}, {result_b.p99_ms:.3f} ms)"
    )
    assert p99[3] == ms_delta_text(result_b.p99_ms - result_a.p99_ms), f"p99 difference: {p99}"
    cost = _row(table, "Cost per hour")
    assert cost[1:3] == [
        f"${workload_cost(DESIGN_A).usd_per_hour:,.2f}",
        f"${workload_cost(DESIGN_B).usd_per_hour:,.2f}",
    ], f"cost row {cost}"
    changed = [m.value for m in app.markdown if m.value.startswith("**What B changes:**")]
    assert changed and "| Dynamic batching | on | off |" in changed[0], changed


def test_a_shared_link_opens_the_comparison_and_swap_and_unpin_work():
    app = open_app({"replicas": "12", "a": "1", "a.replicas": "10"})
    assert_no_exception(app)
    replicas = _row(_compare_table(app), "Utilization")
    util_a = evaluate(Workload(replicas=10)).utilization
    util_b = evaluate(Workload(replicas=12)).utilization
    assert replicas[1:3] == [f"{util_a:.0%}", f"{util_b:.0%}"], f"utilization row {replicas}"
    app.button(key="sdlab.compare.swap").click().run()
    assert app.query_params["replicas"] == "10" and app.query_params["a.replicas"] == "12", (
        f"swap did not exchange A and B: {dict(app.query_params)}"
    )
    app.button(key="sdlab.compare.unpin").click().run()
    assert_no_exception(app)
    assert "a" not in app.query_params, f"unpin left design A in the URL: {app.query_params}"
    assert not [m for m in app.markdown if "A (pinned)" in m.value], "compare shown after unpin"


def test_an_unstable_design_reads_unstable_in_the_comparison():
    overloaded = Workload(rate_rps=50_000, replicas=1)
    side = compare.Side.of(evaluate(overloaded))
    rows = compare.rows(side, side, 100.0, 100.0)
    p99 = next(row for row in rows if row[0].startswith("p99"))
    assert p99[1] == "unstable (∞)" and math.isinf(side.p99_ms), f"p99 row {p99}"
    meets = next(row for row in rows if row[0] == "Meets the p99 target")
    assert meets[1].startswith("no"), f"an unstable design is said to meet the target: {meets}"


def test_cost_changes_read_in_dollars_and_never_as_a_cent_of_nothing():
    # At a cent a replica-hour both fleets cost under a cent per 1M inferences: the old table
    # said "+0.00 $" between them.
    cheap = {"rate_rps": 5000, "cpu_usd_per_replica_hour": 0.01}
    a = compare.Side.of(evaluate(Workload(replicas=10, **cheap)))
    b = compare.Side.of(evaluate(Workload(replicas=12, **cheap)))
    assert a.usd_per_million < 0.01 and b.usd_per_million < 0.01, (a, b)
    rows = {row[0]: row for row in compare.rows(a, b, 100.0, 100.0)}
    per_hour, per_million = rows["Cost per hour"], rows["Cost per 1M inferences"]
    assert per_hour[3] == f"+${b.usd_per_hour - a.usd_per_hour:,.2f}/h", per_hour
    assert per_million[1:] == ("<$0.01", "<$0.01", "under $0.01 more"), per_million
    same = compare.rows(a, a, 100.0, 100.0)
    assert [row[3] for row in same if row[0].startswith("Cost")] == ["same", "same"], same
    assert [row[3] for row in same if row[0].startswith("p")][:3] == ["same"] * 3, same
