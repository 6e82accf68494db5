"""The caches key expensive work by what affects it, and bound how much of it runs at once."""

from __future__ import annotations

import threading

import pytest

from sdlab_model.params import NUMERIC_BY_NAME
from sdlab_model.simulation import summary as simulation
from sdlab_model.workload import Workload
from sdlab_ui import cache


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
