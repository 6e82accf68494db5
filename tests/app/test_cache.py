"""The caches key expensive work by what affects it, and bound how much of it runs at once."""

from __future__ import annotations

import shutil
import threading

import pytest

from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.simulation import summary as simulation
from sdlab_model.workload import Workload
from sdlab_ui import cache, report


@pytest.fixture
def counted_simulations(monkeypatch):
    """Calls that reach the simulator through ``cache.simulation`` (cleared before and after)."""
    calls: list[Workload] = []

    def fake(workload: Workload) -> str:
        calls.append(workload)
        return f"simulated {len(calls)}"

    monkeypatch.setattr(cache, "design_simulation", fake)
    cache._simulation.clear()
    yield calls
    cache._simulation.clear()


def test_nudging_the_p99_target_does_not_simulate_again(counted_simulations):
    first = cache.simulation(Workload(p99_target_ms=100.0))
    again = cache.simulation(Workload(p99_target_ms=120.0))
    assert len(counted_simulations) == 1, "the p99 target changes no simulated latency"
    assert first == again, "both targets must share one simulation"


def test_every_other_input_keys_the_simulation(counted_simulations):
    cache.simulation(Workload())
    cache.simulation(Workload(rate_rps=NUMERIC_BY_NAME["rate_rps"].default * 1.5))
    assert len(counted_simulations) == 2, "a new rate must simulate again"


def test_the_simulation_key_drops_only_the_target():
    workload = Workload(p99_target_ms=123.0, rate_rps=321.0)
    key = simulation.simulation_key(workload)
    assert key.p99_target_ms == NUMERIC_BY_NAME["p99_target_ms"].default, "target not dropped"
    assert key.with_changes(p99_target_ms=123.0) == workload, "only the target may change"


def test_the_lab_builds_its_view_once_per_distinct_inputs(monkeypatch):
    """Figures are built once per distinct result (issue 13): a rerun with the same inputs, or
    another visitor on them, reuses the evaluations and the breakdown chart."""
    from apptest_helpers import open_app

    from sdlab_ui import figures

    built: list[float] = []
    draw = figures.latency_breakdown_svg
    monkeypatch.setattr(
        figures,
        "latency_breakdown_svg",
        lambda rows, target: built.append(target) or draw(rows, target),
    )
    evaluated: list[Workload] = []
    evaluate = cache.judge
    monkeypatch.setattr(
        cache, "judge", lambda w, m, r=None: evaluated.append(w) or evaluate(w, m, r)
    )
    query = Workload(rate_rps=432.1, p99_target_ms=77.0).to_strings()  # in no other test
    first = open_app(query)
    first.run()
    open_app(query)  # another visitor, same lab
    assert len(built) == 1, f"the breakdown was built {len(built)} times for one lab"
    assert len(evaluated) == 2, f"{len(evaluated)} evaluations for one lab: one per model"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_server_drawn_diagram_escapes_its_labels():
    hostile = 'digraph { a [label="<script>alert(1)</script> $1 and $2" onclick="x()"] }'
    svg = cache.diagram_svg(hostile)
    assert svg is not None and svg.startswith('<svg width="100%"'), f"no SVG: {svg!r:.80}"
    assert "<script" not in svg and "onclick" not in svg, "a label became markup"
    assert "&lt;script&gt;" in svg and "$" not in svg, "the label's text was not escaped"
    assert "\n" not in svg, "a line break would end Markdown's HTML block"


UNSAFE_SVGS = (
    "<svg><script>x()</script></svg>",
    "<svg><SCRIPT>x()</SCRIPT></svg>",
    '<svg><g onload="x()"></g></svg>',
    '<svg><g\tONMOUSEOVER ="x()"></g></svg>',
    '<svg><a href="JavaScript:x()">a</a></svg>',
    "<svg><foreignObject><div>x</div></foreignObject></svg>",
    '<svg><text>batch ≈ 1.5 · 5 ms</text><g\nonClick="x()"></g></svg>',
    "<svg/onload=x()></svg>",
    '<svg><g id="a"onclick="x()"></g></svg>',
    "<svg><g id='a'onclick='x()'></g></svg>",
)


@pytest.mark.parametrize("unsafe", UNSAFE_SVGS)
def test_an_svg_holding_a_script_or_handler_is_refused(monkeypatch, unsafe):
    monkeypatch.setattr(report, "architecture_svg", lambda dot: unsafe)
    assert cache.diagram_svg(f"digraph {{ /* {unsafe} */ }}") is None, f"{unsafe} was kept"


def test_an_svg_with_on_inside_words_is_kept(monkeypatch):
    safe = (
        '<svg width="1pt" height="1pt">'
        '<text font-family="x">batching on · one model · conversion=1</text></svg>'
    )
    monkeypatch.setattr(report, "architecture_svg", lambda dot: safe)
    assert cache.diagram_svg("digraph { /* safe */ }") is not None, "a safe SVG was refused"


def test_a_drawn_svg_is_one_line_without_dollar_signs(monkeypatch):
    """Markdown passes a one-line HTML block through untouched; "$...$" would start a formula."""
    drawn = '<svg width="2pt" height="1pt">\r\n<g>\r<text>$5 · a\nb</text>\n</g></svg>\n'
    monkeypatch.setattr(report, "architecture_svg", lambda dot: drawn)
    svg = cache.diagram_svg("digraph { /* one line */ }")
    assert svg is not None, "a safe SVG was refused"
    assert not {"\r", "\n", "$"} & set(svg), f"line breaks or dollars left: {svg!r}"
    assert "<text>&#36;5 · a b</text>" in svg, f"the text changed: {svg!r}"


def test_a_shared_cache_computes_a_key_once_however_many_ask_at_once():
    calls, started, release = [], threading.Event(), threading.Event()

    @cache.shared_cache(maxsize=4)
    def slow(key):
        calls.append(key)
        started.set()
        release.wait(5)
        return [key]  # a new object per computation: the callers must all get this one

    results = []
    threads = [threading.Thread(target=lambda: results.append(slow("a"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    assert started.wait(5), "nobody computed"
    release.set()
    for thread in threads:
        thread.join(5)
    assert calls == ["a"], f"computed {len(calls)} times for eight callers at once"
    assert len(results) == 8 and all(r is results[0] for r in results), "callers got copies"


def test_a_shared_cache_keeps_at_most_maxsize_results_least_recent_out_first():
    calls = []

    @cache.shared_cache(maxsize=2)
    def double(x):
        calls.append(x)
        return 2 * x

    assert [double(1), double(2), double(1), double(3)] == [2, 4, 2, 6], "wrong results"
    double(1)  # still held: used more recently than 2
    double(2)  # evicted by 3: computed again
    assert calls == [1, 2, 3, 2], f"computed {calls}"
    double.cache_clear()
    double(1)
    assert calls[-1] == 1, "cache_clear kept a result"


def test_a_shared_cache_keeps_no_failure_and_a_waiting_caller_tries_itself():
    attempts, started, release = [], threading.Event(), threading.Event()

    @cache.shared_cache(maxsize=4)
    def flaky(key):
        attempts.append(key)
        if len(attempts) == 1:
            started.set()
            release.wait(5)
            raise RuntimeError("the first try fails")
        return key.upper()

    outcomes = []

    def first():
        with pytest.raises(RuntimeError):
            flaky("a")
        outcomes.append("raised")

    failing = threading.Thread(target=first)
    failing.start()
    assert started.wait(5), "the first try never started"
    waiting = threading.Thread(target=lambda: outcomes.append(flaky("a")))
    waiting.start()
    release.set()
    failing.join(5)
    waiting.join(5)
    assert sorted(outcomes) == ["A", "raised"], f"outcomes {outcomes}"
    assert attempts == ["a", "a"], f"attempts {attempts}: the waiter did not try for itself"
